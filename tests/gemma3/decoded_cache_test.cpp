// The decoded-matrices cache (models/gemma3/decoded_cache.h) on small synthetic Q8_0/Q4_K layers and a small
// source file standing in for the GGUF (the cache reads only the source's identity): the first load writes the
// file, the next maps it with the same bytes as a plain decode; a changed source (size or time), another dtype,
// a damaged or truncated file are each detected and rewritten; an unwritable folder still loads.
#include "models/gemma3/decoded_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/quant.h"
#include "gemma_paths.h"
#include "models/gemma3/model.h"

namespace ltx::gemma3 {
namespace {
namespace fs = std::filesystem;

Tensor quantized(DType t, int64_t rows, int64_t cols, uint32_t seed) {
  Tensor q = Tensor::empty(t, {rows, cols});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> row(static_cast<size_t>(cols));
  const int64_t row_bytes =
      cols / static_cast<int64_t>(dtype_block_elems(t)) * static_cast<int64_t>(dtype_block_bytes(t));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = u(rng);
    quantize_row(t, row.data(), q.raw() + r * row_bytes, cols);
  }
  return q;
}

// Two layers of the Gemma shape family, small: q/k/v/o and the MLP, Q8_0 and Q4_K mixed.
Weights tiny_weights() {
  Weights w;
  uint32_t seed = 1;
  for (int l = 0; l < 2; ++l) {
    LayerWeights lw;
    lw.q_proj.weight = quantized(DType::Q8_0, 64, 256, seed++);
    lw.k_proj.weight = quantized(DType::Q8_0, 32, 256, seed++);
    lw.v_proj.weight = quantized(DType::Q4_K, 32, 256, seed++);
    lw.o_proj.weight = quantized(DType::Q8_0, 256, 64, seed++);
    lw.gate_proj.weight = quantized(DType::Q4_K, 96, 256, seed++);
    lw.up_proj.weight = quantized(DType::Q4_K, 96, 256, seed++);
    lw.down_proj.weight = quantized(DType::Q8_0, 256, 96, seed++);
    w.layers.push_back(std::move(lw));
  }
  return w;
}

std::vector<Tensor> matrices_of(Weights& w) {
  std::vector<Tensor> out;
  for (LayerWeights& l : w.layers)
    for (nn::Linear* m : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
      out.push_back(m->weight);
  return out;
}

void expect_same_bytes(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].dtype(), b[i].dtype()) << i;
    ASSERT_EQ(a[i].shape(), b[i].shape()) << i;
    const size_t bytes = static_cast<size_t>(a[i].numel()) * dtype_block_bytes(a[i].dtype());
    EXPECT_EQ(std::memcmp(a[i].raw(), b[i].raw(), bytes), 0) << "matrix " << i;
  }
}

class DecodedCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ltx_decoded_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    source_ = (dir_ / "model.gguf").string();
    std::ofstream(source_) << std::string(5000, 'g');
    cache_ = decoded_cache_path((dir_ / "cache").string(), source_, DType::BF16);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Loads tiny_weights through the cache; returns the outcome and checks the matrices against a plain decode.
  DecodedCacheOutcome load(DType to = DType::BF16, const std::string& cache = "") {
    Weights cached = tiny_weights(), plain = tiny_weights();
    const DecodedCacheOutcome o =
        dequantize_layer_matrices_cached(cached, to, int64_t{1} << 30, source_, cache.empty() ? cache_ : cache);
    dequantize_layer_matrices(plain, to, int64_t{1} << 30);
    expect_same_bytes(matrices_of(cached), matrices_of(plain));
    return o;
  }

  void flip_byte(size_t at) {
    std::fstream f(cache_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(&c, 1);
  }

  fs::path dir_;
  std::string source_, cache_;
};

TEST_F(DecodedCache, WrittenOnceThenReadWithTheSameBytes) {
  EXPECT_EQ(load(), DecodedCacheOutcome::Written);
  ASSERT_TRUE(fs::exists(cache_));
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
  // f32 has its own file; the bf16 one stays valid.
  const std::string f32 = decoded_cache_path((dir_ / "cache").string(), source_, DType::F32);
  EXPECT_NE(f32, cache_);
  EXPECT_EQ(load(DType::F32, f32), DecodedCacheOutcome::Written);
  EXPECT_EQ(load(DType::F32, f32), DecodedCacheOutcome::Read);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
}

TEST_F(DecodedCache, AChangedSourceIsDetectedAndRewritten) {
  EXPECT_EQ(load(), DecodedCacheOutcome::Written);
  fs::last_write_time(source_, fs::last_write_time(source_) + std::chrono::seconds(5));  // same size, newer
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
  std::ofstream(source_, std::ios::app) << "more";  // another size
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
  {  // same size and time, other bytes in the head
    const auto time = fs::last_write_time(source_);
    std::fstream f(source_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.write("x", 1);
    f.close();
    fs::last_write_time(source_, time);
  }
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
}

TEST_F(DecodedCache, ADamagedOrTruncatedFileIsDetectedAndRewritten) {
  EXPECT_EQ(load(), DecodedCacheOutcome::Written);
  const auto size = fs::file_size(cache_);
  flip_byte(size - 3);  // in the last matrix's data
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
  flip_byte(4096 + 100);  // in the first matrix's data
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  flip_byte(60);  // in the recorded data hash
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  flip_byte(80);  // in a recorded shape
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  fs::resize_file(cache_, size - 64);
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(fs::file_size(cache_), size);
  std::ofstream(cache_, std::ios::trunc) << "not a cache";
  EXPECT_EQ(load(), DecodedCacheOutcome::Rewritten);
  EXPECT_EQ(load(), DecodedCacheOutcome::Read);
}

TEST_F(DecodedCache, AnUnwritableFolderStillLoads) {
  std::ofstream((dir_ / "blocker").string()) << "a file where the folder would be";
  const std::string cache = decoded_cache_path((dir_ / "blocker").string(), source_, DType::BF16);
  EXPECT_EQ(load(DType::BF16, cache), DecodedCacheOutcome::Written);  // decoded; the file could not be made
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_EQ(load(DType::BF16, cache), DecodedCacheOutcome::Written);
}

// The real 270M GGUF in production precision: a model loaded through the cache (when it writes the file, and when
// it maps it) gives hidden states bit-identical to one loaded without it.
TEST(DecodedCacheReal, OutputsAreBitIdenticalWithAndWithoutTheCache) {
  const std::string gguf = testing::real_gguf_path();
  if (gguf.empty()) GTEST_SKIP() << testing::kSkipNoGguf;
  const fs::path dir = fs::temp_directory_path() / ("ltx_decoded_cache_real_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const Tensor ids = Tensor::from_ints(DType::I64, {1, 6}, std::vector<int64_t>{2, 818, 3380, 236761, 107, 6207});
  const Tensor pos = Tensor::from_ints(DType::I64, {1, 6}, std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  const Tensor valid = Tensor::from_ints(DType::I64, {1, 6}, std::vector<int64_t>{1, 1, 1, 1, 1, 1});
  const auto states = [&](const std::string& cache_dir) {
    Model m = Model::load(gguf, DType::BF16, cpu_backend(), cache_dir);
    return m.forward(ids, pos, valid).hidden_states;
  };
  const std::vector<Tensor> plain = states("");
  const std::vector<Tensor> written = states(dir.string());
  ASSERT_TRUE(fs::exists(decoded_cache_path(dir.string(), gguf, DType::BF16)));
  const std::vector<Tensor> read = states(dir.string());
  fs::remove_all(dir);
  expect_same_bytes(written, plain);
  expect_same_bytes(read, plain);
}

}  // namespace
}  // namespace ltx::gemma3
