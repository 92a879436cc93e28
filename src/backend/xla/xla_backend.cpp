#include "backend/xla/xla_backend.h"

#include "backend/xla/xla_plan.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

bool has_stablehlo_type(DType dtype) {
  return !dtype_is_quantized(dtype) || dtype == DType::F8_E4M3 || dtype == DType::F8_E5M2;
}

}  // namespace

XlaBackend::XlaBackend(const std::string& plugin_path) : runtime_(&PjrtRuntime::open(plugin_path)) {}

bool XlaBackend::supports(OpKind op, std::span<const TensorMeta> in, const TensorMeta& out) const {
  for (const TensorMeta& m : in)
    if (!has_stablehlo_type(m.dtype)) return false;
  return has_stablehlo_type(out.dtype);
}

bool XlaBackend::supports(const FusedProgram&, std::span<const TensorMeta>, const TensorMeta&) const {
  return false;  // the graph is lowered whole; XLA fuses it itself
}

std::unique_ptr<Plan> XlaBackend::compile_graph(const Graph& graph, const CompileOptions& options) const {
  for (const Node& node : graph.nodes()) {
    if (node.kind != NodeKind::Op) continue;
    std::vector<TensorMeta> in;
    for (int i : node.inputs) in.push_back(graph.node(i).meta);
    if (!supports(node.op, in, node.meta)) {
      std::string types;
      for (const TensorMeta& m : in) types += (types.empty() ? "" : ", ") + std::string(dtype_name(m.dtype));
      fail("xla", "the xla backend cannot run " + std::string(op_name(node.op)) +
                      (node.name.empty() ? "" : " '" + node.name + "'") + " on " + types +
                      ": it takes f32, bf16, f16, integers and 8-bit float (fp8) weights, not GGUF block types "
                      "(run GGUF models with --backend cpu)");
    }
  }
  return std::make_unique<XlaPlan>(*this, graph, options);
}

DeviceTensor XlaBackend::weight(const Tensor& host) const {
  const WeightKey key{host.raw(), host.dtype(), host.shape().str() + host.strides().str()};
  std::lock_guard lock(mutex_);
  if (auto it = weights_.find(key); it != weights_.end())
    if (DeviceTensor held = it->second.lock()) return held;
  DeviceTensor uploaded = runtime_->upload(host, /*alias_host=*/true);
  std::erase_if(weights_, [](const auto& entry) { return entry.second.expired(); });
  weights_[key] = uploaded;
  return uploaded;
}

const XlaBackend& xla_backend() {
  static const XlaBackend backend(default_plugin_path());
  return backend;
}

}  // namespace ltx::xla
