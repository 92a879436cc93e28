#include "backend/xla/xla_backend.h"

#include "backend/xla/lower_graph.h"
#include "backend/xla/lower_ops.h"
#include "backend/xla/xla_plan.h"
#include "core/cache_dir.h"
#include "core/error.h"

namespace ltx::xla {

XlaBackend::XlaBackend(const std::string& plugin_path)
    : runtime_(&PjrtRuntime::open(plugin_path)), executables_(*runtime_, prepared_cache_dir()) {}

bool XlaBackend::supports(OpKind, std::span<const TensorMeta>, const TensorMeta&) const {
  return true;  // every op on every type the graph admits: GGUF weights are decoded on the device
}

bool XlaBackend::supports(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const {
  return false;  // the graph is lowered whole; XLA fuses it itself
}

std::unique_ptr<Plan> XlaBackend::compile_graph(const Graph& graph, const CompileOptions& options) const {
  return std::make_unique<XlaPlan>(*this, graph, options);
}

DeviceTensor XlaBackend::weight(const Tensor& host) const {
  const WeightKey key{host.raw(), host.dtype(), host.shape().str() + host.strides().str()};
  std::lock_guard lock(mutex_);
  if (auto it = weights_.find(key); it != weights_.end())
    if (DeviceTensor held = it->second.lock()) return held;
  // A GGUF weight goes up as its bytes (lower_dequantize.cpp decodes them where they are read).
  Tensor source = host;
  if (passed_as_bytes(host.dtype())) {
    LTX_CHECK(host.is_contiguous(), "xla", "a GGUF weight ", host.describe(), " that is not contiguous");
    source = Tensor::view_of(host.storage(), host.offset(), DType::U8,
                             weight_bytes_meta({host.dtype(), host.shape()}).shape);
  }
  DeviceTensor uploaded = runtime_->upload(source, /*alias_host=*/true);
  std::erase_if(weights_, [](const auto& entry) { return entry.second.expired(); });
  weights_[key] = uploaded;
  return uploaded;
}

const XlaBackend& xla_backend(const std::string& plugin) {
  static std::mutex mutex;
  static auto* backends = new std::map<std::string, std::unique_ptr<XlaBackend>>();  // live as long as the plugins
  const std::string path = canonical_plugin_path(plugin.empty() ? default_plugin_path() : plugin);
  std::lock_guard lock(mutex);
  auto it = backends->find(path);
  if (it == backends->end()) it = backends->emplace(path, std::make_unique<XlaBackend>(path)).first;
  return *it->second;
}

}  // namespace ltx::xla
