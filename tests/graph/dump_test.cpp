#include <unistd.h>

#include <filesystem>

#include "graph_test_util.h"
#include "io/safetensors.h"

namespace ltx::test {
namespace {

using namespace ltx::ops;

// LTX_DUMP names intermediates by regex; a matched value that would otherwise be fused away is materialized and
// written with its name.
TEST(Dump, WritesMatchingNamedIntermediates) {
  const auto path =
      std::filesystem::temp_directory_path() / ("ltx_dump_test_" + std::to_string(::getpid()) + ".safetensors");
  const Tensor x = random_tensor(DType::F32, {3, 5}, 1);
  Graph g;
  Value v = g.input("x", DType::F32, {3, 5});
  Value a = g.name(scale(v, 3.0f), "blk.0.scaled");
  Value b = g.name(silu(a), "blk.0.act");
  Value c = g.name(softmax(b), "head.out");
  g.output(c, "y");
  CompileOptions o;
  o.dump_regex = "^blk\\.0\\.";
  o.dump_path = path.string();
  auto plan = compile(g, cpu_backend(), o);
  EXPECT_EQ(plan->stats().n_fused_ops, 0);  // the dumped scale stays its own step
  plan->run({x});

  const auto file = SafetensorsFile::open(path.string());
  EXPECT_TRUE(file.contains("blk.0.scaled"));
  EXPECT_TRUE(file.contains("blk.0.act"));
  EXPECT_FALSE(file.contains("head.out"));
  const Tensor scaled = ref(OpKind::Scale, ScaleAttrs{3.0f, 0.0f}, {x});
  EXPECT_EQ(max_abs_diff(file.get("blk.0.scaled"), scaled), 0.0f);
  EXPECT_EQ(max_abs_diff(file.get("blk.0.act"), ref(OpKind::Silu, NoAttrs{}, {scaled})), 0.0f);
  std::filesystem::remove(path);
}

TEST(Dump, BadRegexIsAClearError) {
  Graph g;
  g.output(silu(g.input("x", DType::F32, {2})), "y");
  CompileOptions o;
  o.dump_regex = "([";
  EXPECT_THROW(compile(g, cpu_backend(), o), Error);
}

}  // namespace
}  // namespace ltx::test
