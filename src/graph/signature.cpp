// graph_signature: every field that changes what a plan computes, as 64-bit words.
#include <bit>
#include <cstring>
#include <type_traits>

#include "graph/compile.h"

namespace ltx {
namespace {

struct Writer {
  std::vector<uint64_t>& out;
  void u(uint64_t v) { out.push_back(v); }
  void i(int64_t v) { out.push_back(static_cast<uint64_t>(v)); }
  void f(float v) { out.push_back(std::bit_cast<uint32_t>(v)); }
  void b(bool v) { out.push_back(v ? 1 : 0); }
  void s(const std::string& v) {
    u(v.size());
    for (size_t k = 0; k < v.size(); k += 8) {
      uint64_t w = 0;
      std::memcpy(&w, v.data() + k, std::min<size_t>(8, v.size() - k));
      u(w);
    }
  }
  void shape(const Shape& sh) {
    u(static_cast<uint64_t>(sh.rank()));
    for (int64_t d : sh) i(d);
  }
  template <size_t N, typename T>
  void arr(const std::array<T, N>& a) {
    for (const T& x : a) i(static_cast<int64_t>(x));
  }

  // Each attribute struct field by field (raw bytes would include padding).
  void operator()(const NoAttrs&) {}
  void operator()(const MatMulAttrs& a) { b(a.transpose_a), b(a.transpose_b); }
  void operator()(const ScaleAttrs& a) { f(a.scale), f(a.bias); }
  void operator()(const ClampAttrs& a) { f(a.lo), f(a.hi); }
  void operator()(const LeakyReluAttrs& a) { f(a.slope); }
  void operator()(const SnakeAttrs& a) { b(a.log_scale); }
  void operator()(const NormAttrs& a) {
    f(a.eps), u(static_cast<uint64_t>(a.weight)), b(a.bias), i(a.groups), i(a.axis);
  }
  void operator()(const SoftmaxAttrs& a) { f(a.scale); }
  void operator()(const AttentionAttrs& a) { f(a.scale), b(a.causal); }
  void operator()(const RopeAttrs& a) { u(static_cast<uint64_t>(a.mode)); }
  void operator()(const ConvAttrs& a) {
    i(a.spatial), arr(a.stride), arr(a.dilation), arr(a.pad_before), arr(a.pad_after);
    arr(a.pad_mode), i(a.groups), i(a.output_padding);
  }
  void operator()(const ResampleAttrs& a) { i(a.spatial), arr(a.factor); }
  void operator()(const AxisAttrs& a) { i(a.axis); }
  void operator()(const SliceAttrs& a) { i(a.axis), i(a.start), i(a.end), i(a.step); }
  void operator()(const PermuteAttrs& a) { i(a.rank), arr(a.perm); }
  void operator()(const ReshapeAttrs& a) { shape(a.shape); }
  void operator()(const PadAttrs& a) { arr(a.before), arr(a.after), u(static_cast<uint64_t>(a.mode)), f(a.value); }
  void operator()(const ReduceAttrs& a) { arr(a.axes), b(a.keepdim); }
  void operator()(const CastAttrs& a) { u(static_cast<uint64_t>(a.to)); }
};

}  // namespace

std::vector<uint64_t> graph_signature(const Graph& graph, const CompileOptions& options) {
  std::vector<uint64_t> sig;
  Writer w{sig};
  w.s(options.dump_regex);
  w.s(options.dump_path);
  w.b(options.fuse);
  w.b(options.allocate);
  w.b(options.inputs_in_arena);
  w.u(options.persistent_inputs.size());
  for (const std::string& name : options.persistent_inputs) w.s(name);
  for (const Node& n : graph.nodes()) {
    w.u(static_cast<uint64_t>(n.kind));
    w.u(static_cast<uint64_t>(n.op));
    w.u(static_cast<uint64_t>(n.meta.dtype));
    w.shape(n.meta.shape);
    w.u(n.inputs.size());
    for (int in : n.inputs) w.i(in);
    w.s(n.name);
    if (n.kind == NodeKind::Op) std::visit(w, n.attrs);
    if (n.kind == NodeKind::Constant) {  // a plan binds its weights: the same structure over other weights differs
      w.u(reinterpret_cast<uintptr_t>(n.constant.storage().get()));
      w.u(n.constant.offset());
      w.shape(n.constant.strides());
    }
  }
  for (const auto& [id, name] : graph.outputs()) {
    w.i(id);
    w.s(name);
  }
  return sig;
}

}  // namespace ltx
