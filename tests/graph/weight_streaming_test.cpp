// Weights streamed from their mapped file (graph/weight_streaming.h): the same results, each weight's pages dropped
// from the process after the step that last reads it, the resident share kept.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/mapped_file.h"
#include "graph_test_util.h"
#include "io/safetensors.h"
#include "io/test_files.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

constexpr int64_t kWidth = 512;  // each weight: 512 KiB of bf16
constexpr int kLayers = 4;
// A page fault also maps the file's cached pages around it (fault-around, 64 KiB by default), so reading a weight in
// may map back the tail of a dropped one just before it (a race with the reader thread, seen as 12 extra pages): this
// much per weight read, an eighth of one, is allowed; a weight left whole is not.
constexpr size_t kFaultAround = size_t{64} << 10;

struct MappedWeights {
  std::filesystem::path path;
  std::shared_ptr<const SafetensorsFile> file;
  std::vector<Tensor> weights;
  MappedWeights() {
    path = std::filesystem::temp_directory_path() /
           ("ltx_weight_streaming_" + std::to_string(::getpid()) + ".safetensors");
    std::vector<std::pair<std::string, Tensor>> tensors;
    for (int i = 0; i < kLayers; ++i)
      tensors.emplace_back("w" + std::to_string(i),
                           random_tensor(DType::BF16, {kWidth, kWidth}, static_cast<uint32_t>(i + 1), -0.05f, 0.05f));
    write_safetensors(path.string(), tensors);
    file = std::make_shared<SafetensorsFile>(SafetensorsFile::open(path.string()));
    for (int i = 0; i < kLayers; ++i) weights.push_back(file->get("w" + std::to_string(i)));
  }
  ~MappedWeights() { std::filesystem::remove(path); }
};

Plan& compile_chain(PlanCache& cache, const MappedWeights& m) {
  Graph g;
  Value x = g.input("x", DType::BF16, {8, kWidth});
  for (int i = 0; i < kLayers; ++i) x = linear(x, g.constant("w" + std::to_string(i), m.weights[i]));
  g.output(x, "y");
  return cache.get(g, no_dump());
}

TEST(WeightStreaming, SameResultsAndStreamedPagesLeaveTheProcess) {
  const MappedWeights m;
  const Tensor x = random_tensor(DType::BF16, {8, kWidth}, 9);
  PlanCache cache(cpu_backend());
  Plan& plan = compile_chain(cache, m);
  const size_t weight_bytes = kLayers * kWidth * kWidth * 2;
  EXPECT_EQ(plan.mapped_weight_bytes(), weight_bytes);
  const Tensor resident = plan.run({x})[0].clone();
  EXPECT_GE(mapping_rss(m.weights[0].raw()), weight_bytes);  // everything read once stays mapped

  plan.set_streaming(StreamingPolicy{0, size_t{1} << 20});
  ASSERT_NE(plan.streamer(), nullptr);
  EXPECT_EQ(plan.streamer()->streamed_bytes(), weight_bytes);
  EXPECT_EQ(plan.streamer()->resident_bytes(), 0u);
  for (int run = 0; run < 2; ++run) {
    const Tensor streamed = plan.run({x})[0];
    EXPECT_EQ(max_abs_diff(streamed, resident), 0.0f);
    // Each weight was dropped after its step: at most the header page and a page shared at a boundary remain.
    EXPECT_LE(mapping_rss(m.weights[0].raw()), size_t{4} * 4096 + kLayers * kFaultAround);
  }
}

TEST(WeightStreaming, TheFirstResidentBytesStay) {
  const MappedWeights m;
  const Tensor x = random_tensor(DType::BF16, {8, kWidth}, 9);
  PlanCache cache(cpu_backend());
  Plan& plan = compile_chain(cache, m);
  const size_t one = kWidth * kWidth * 2;
  plan.set_streaming(StreamingPolicy{2 * one, one});
  EXPECT_EQ(plan.streamer()->resident_bytes(), 2 * one);
  EXPECT_EQ(plan.streamer()->streamed_bytes(), 2 * one);
  drop_all_file_pages();
  plan.run({x});
  const size_t rss = mapping_rss(m.weights[0].raw());
  EXPECT_GE(rss, 2 * one);
  EXPECT_LE(rss, 2 * one + size_t{4} * 4096 + 2 * kFaultAround);
}

TEST(WeightStreaming, AStreamingRunStartsWithOnlyItsResidentPages) {
  const MappedWeights m;
  const Tensor x = random_tensor(DType::BF16, {8, kWidth}, 9);
  const size_t one = kWidth * kWidth * 2;
  PlanCache all_layers(cpu_backend()), last_two(cpu_backend());
  compile_chain(all_layers, m).run({x});  // another plan (stage 1, say) leaves all four weights in memory
  EXPECT_GE(mapping_rss(m.weights[0].raw()), 4 * one);
  Graph g;  // a plan that reads w2 and w3 only, keeping w2 and streaming w3
  Value y = g.input("x", DType::BF16, {8, kWidth});
  for (int i = 2; i < kLayers; ++i) y = linear(y, g.constant("w" + std::to_string(i), m.weights[i]));
  g.output(y, "y");
  Plan& plan = last_two.get(g, no_dump());
  plan.set_streaming(StreamingPolicy{one, one});
  ASSERT_EQ(plan.streamer()->resident_bytes(), one);
  plan.run({x});
  // w0 and w1 (never read here) and w3 (streamed) left: w2 and a few boundary pages stay.
  const size_t rss = mapping_rss(m.weights[0].raw());
  EXPECT_GE(rss, one);
  EXPECT_LE(rss, one + size_t{4} * 4096 + 2 * kFaultAround);
}

TEST(MappedFilePages, DropAndLoadActOnMappedMemoryOnly) {
  const MappedWeights m;
  const Tensor& w = m.weights[1];
  const size_t bytes = kWidth * kWidth * 2;
  EXPECT_EQ(file_mapped_bytes(w.raw(), bytes), bytes);
  std::vector<std::byte> heap(bytes, std::byte{7});
  EXPECT_EQ(file_mapped_bytes(heap.data(), bytes), 0u);
  drop_file_pages(heap.data(), bytes);  // not a file mapping: untouched
  EXPECT_EQ(heap[bytes / 2], std::byte{7});
  drop_all_file_pages();
  EXPECT_LE(mapping_rss(w.raw()), size_t{4096});
  load_file_pages(w.raw(), bytes);
  EXPECT_GE(mapping_rss(w.raw()), bytes);
}

}  // namespace
}  // namespace ltx::test
