#include "backend/xla/lower_graph.h"

#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

namespace {

std::string describe(const Graph& graph, int id) {
  const Node& node = graph.node(id);
  std::string s = std::string(op_name(node.op));
  if (!node.name.empty()) s += " '" + node.name + "'";
  s += " (";
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorMeta& m = graph.node(node.inputs[i]).meta;
    s += (i == 0 ? "" : ", ") + std::string(dtype_name(m.dtype)) + m.shape.str();
  }
  return s + ") -> " + std::string(dtype_name(node.meta.dtype)) + node.meta.shape.str();
}

}  // namespace

TensorMeta weight_bytes_meta(const TensorMeta& weight) {
  Shape bytes = weight.shape;
  bytes[bytes.rank() - 1] = static_cast<int64_t>(dtype_bytes_for(weight.dtype, weight.shape.dim(-1)));
  return {DType::U8, bytes};
}

LoweredGraph lower_graph(const Graph& graph) {
  const auto& nodes = graph.nodes();
  std::vector<bool> live(nodes.size(), false);
  for (const auto& [id, name] : graph.outputs()) live[static_cast<size_t>(id)] = true;
  for (size_t i = nodes.size(); i-- > 0;)  // nodes only read earlier nodes
    if (live[i])
      for (int in : nodes[i].inputs) live[static_cast<size_t>(in)] = true;

  LoweredGraph lowered;
  HloBuilder b;
  std::vector<HloValue> value(nodes.size());
  auto dims_of = [](const TensorMeta& m) { return std::vector<int64_t>(m.shape.begin(), m.shape.end()); };
  for (int id : graph.input_ids()) {
    const TensorMeta& m = graph.node(id).meta;
    value[static_cast<size_t>(id)] = b.parameter(elem_of(m.dtype), dims_of(m));
  }
  for (size_t i = 0; i < nodes.size(); ++i)
    if (live[i] && nodes[i].kind == NodeKind::Constant) {
      const TensorMeta& m = nodes[i].meta;
      value[i] = passed_as_bytes(m.dtype) ? b.parameter("ui8", dims_of(weight_bytes_meta(m)))
                                          : b.parameter(elem_of(m.dtype), dims_of(m));
      lowered.constant_nodes.push_back(static_cast<int>(i));
    }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) continue;
    ++lowered.n_live;
    const Node& node = nodes[i];
    if (node.kind != NodeKind::Op) continue;
    std::vector<HloValue> in;
    std::vector<TensorMeta> metas;
    for (int v : node.inputs) {
      in.push_back(value[static_cast<size_t>(v)]);
      metas.push_back(graph.node(v).meta);
    }
    try {
      value[i] = lower_op(b, node.op, node.attrs, in, metas, node.meta);
    } catch (const Error& e) {
      fail("xla", "cannot lower " + describe(graph, static_cast<int>(i)) + ": " + e.what());
    }
  }
  std::vector<HloValue> results;
  for (const auto& [id, name] : graph.outputs()) {
    results.push_back(value[static_cast<size_t>(id)]);
    lowered.output_metas.push_back(graph.node(id).meta);
  }
  lowered.mlir = b.module(results);
  return lowered;
}

}  // namespace ltx::xla
