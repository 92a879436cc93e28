// The XLA backend: a whole-graph backend (backend/backend.h) that lowers each graph to one StableHLO program
// (lower_graph.h), compiles it through a PJRT plugin (pjrt_runtime.h) and runs it as an XlaPlan. Weights are the
// program's parameters, uploaded once and shared by every plan that reads them (a pool keyed by the host tensor).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "backend/backend.h"
#include "backend/xla/executable_cache.h"
#include "backend/xla/pjrt_runtime.h"

namespace ltx::xla {

class XlaBackend final : public Backend {
 public:
  // Loads the plugin (throws ltx::Error naming it when it cannot: no file, not a PJRT plugin, another API, no
  // client, no device).
  explicit XlaBackend(const std::string& plugin_path);
  const char* name() const override { return "xla"; }

  // Every op on every type: plain, 8-bit float weights, GGUF weights (decoded on the device).
  bool supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const override;
  bool supports(const FusedProgram& program, std::span<const TensorMeta> leaves, const TensorMeta& out) const override;
  std::unique_ptr<Plan> compile_graph(const Graph& graph, const CompileOptions& options) const override;

  const PjrtRuntime& runtime() const { return *runtime_; }
  // Compiled programs, kept on disk in the engine's cache folder (core/cache_dir.h prepared_cache_dir()).
  const ExecutableCache& executables() const { return executables_; }
  // The device copy of a constant weight: uploaded on first request, shared while any plan holds it.
  DeviceTensor weight(const Tensor& host) const;

 private:
  const PjrtRuntime* runtime_;
  ExecutableCache executables_;
  using WeightKey = std::tuple<const void*, DType, std::string>;
  mutable std::mutex mutex_;
  mutable std::map<WeightKey, std::weak_ptr<DeviceBuffer>> weights_;
};

// The backend on `plugin` ("": default_plugin_path()), one per plugin, created on first use.
const XlaBackend& xla_backend(const std::string& plugin = "");

}  // namespace ltx::xla
