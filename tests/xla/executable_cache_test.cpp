// Compiled executables in memory and on disk (backend/xla/executable_cache.h): a program compiled again in a process
// is the same executable; a second process's cache loads what the first compiled and runs it to the same numbers; a
// corrupt entry or one under another key is compiled again, never trusted, and rewritten; no folder means no cache.
#include "backend/xla/executable_cache.h"

#include <filesystem>
#include <fstream>

#include "backend/xla/lower_graph.h"
#include "backend/xla/xla_backend.h"
#include "cli/cli_files.h"
#include "graph/graph_test_util.h"

namespace ltx::test {
namespace {

namespace fs = std::filesystem;
using namespace ltx::ops;

std::string program(float factor) {
  Graph g;
  g.output(scale(gelu(g.input("x", DType::F32, {4, 6})), factor), "y");
  return xla::lower_graph(g).mlir;
}

Tensor run(const xla::PjrtRuntime& runtime, const xla::Executable& executable, const Tensor& x) {
  const xla::DeviceTensor in = runtime.upload(x);
  const xla::DeviceBuffer* arguments[] = {in.get()};
  const TensorMeta out_meta[] = {{DType::F32, Shape{4, 6}}};
  const auto results = runtime.execute(executable, arguments, out_meta);
  Tensor out = Tensor::empty(DType::F32, {4, 6});
  runtime.download(*results[0], out);
  return out;
}

TEST(XlaExecutableCache, ASecondProcessLoadsWhatTheFirstCompiled) {
  if (xla::default_plugin_path().empty()) GTEST_SKIP() << "no XLA plugin (scripts/setup installs the CPU plugin)";
  const xla::PjrtRuntime& runtime = xla::xla_backend().runtime();
  const fs::path dir = fresh_temp_dir("ltx_xla_cache_", "entries");
  const Tensor x = random_tensor(DType::F32, {4, 6}, 1);

  const xla::ExecutableCache first(runtime, dir.string());
  const Tensor expect = run(runtime, *first.get(program(2.0f), "y"), x);
  EXPECT_EQ(first.counts().compiled, 1);
  EXPECT_EQ(first.get(program(2.0f), "y").get(), first.get(program(2.0f), "y").get()) << "kept for the process";
  EXPECT_EQ(first.counts().reused, 2);

  const xla::ExecutableCache second(runtime, dir.string());  // a new process's cache over the same folder
  EXPECT_EQ(max_abs_diff(run(runtime, *second.get(program(2.0f), "y"), x), expect), 0.0f);
  EXPECT_EQ(second.counts().loaded, 1);
  EXPECT_EQ(second.counts().compiled, 0);
  second.get(program(3.0f), "y");  // another program: its own entry
  EXPECT_EQ(second.counts().compiled, 1);

  // A damaged entry (cut short) is compiled again and rewritten.
  for (const auto& entry : fs::directory_iterator(dir / "xla"))
    fs::resize_file(entry.path(), fs::file_size(entry.path()) / 2);
  const xla::ExecutableCache third(runtime, dir.string());
  EXPECT_EQ(max_abs_diff(run(runtime, *third.get(program(2.0f), "y"), x), expect), 0.0f);
  EXPECT_EQ(third.counts().rejected, 1);
  EXPECT_EQ(third.counts().compiled, 1);
  const xla::ExecutableCache fourth(runtime, dir.string());
  fourth.get(program(2.0f), "y");
  EXPECT_EQ(fourth.counts().loaded, 1) << "the rewritten entry loads";

  const xla::ExecutableCache none(runtime, "");
  none.get(program(2.0f), "y");
  EXPECT_EQ(none.counts().compiled, 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx::test
