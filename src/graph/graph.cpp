#include "graph/graph.h"

#include "core/error.h"

namespace ltx {

const TensorMeta& Value::meta() const {
  LTX_CHECK(valid(), "graph", "use of an empty Value");
  return graph->node(id).meta;
}

Value Graph::add_node(Node node) {
  nodes_.push_back(std::move(node));
  return Value{this, static_cast<int>(nodes_.size()) - 1};
}

Value Graph::input(const std::string& name, DType dtype, const Shape& shape) {
  for (int id : inputs_) LTX_CHECK(node(id).name != name, "graph", "input '", name, "' declared twice");
  Node n;
  n.kind = NodeKind::Input;
  n.meta = {dtype, shape};
  n.name = name;
  Value v = add_node(std::move(n));
  inputs_.push_back(v.id);
  return v;
}

Value Graph::constant(const std::string& name, Tensor tensor) {
  LTX_CHECK(tensor.defined(), "graph", "constant '", name, "' is an empty tensor");
  Node n;
  n.kind = NodeKind::Constant;
  n.meta = {tensor.dtype(), tensor.shape()};
  n.name = name;
  n.constant = std::move(tensor);
  return add_node(std::move(n));
}

Value Graph::op(OpKind kind, OpAttrs attrs, std::span<const Value> inputs, const std::string& name) {
  Node n;
  n.kind = NodeKind::Op;
  n.op = kind;
  n.attrs = std::move(attrs);
  n.name = name;
  std::vector<TensorMeta> metas;
  for (const Value& v : inputs) {
    LTX_CHECK(v.graph == this, "graph", op_name(kind), ": operand from another graph");
    n.inputs.push_back(v.id);
    metas.push_back(v.meta());
  }
  n.meta = infer_output(kind, n.attrs, metas);
  return add_node(std::move(n));
}

void Graph::output(Value v, const std::string& name) {
  LTX_CHECK(v.graph == this, "graph", "output '", name, "' from another graph");
  for (const auto& [id, existing] : outputs_)
    LTX_CHECK(existing != name, "graph", "output '", name, "' declared twice");
  outputs_.emplace_back(v.id, name);
}

Value Graph::name(Value v, const std::string& name) {
  LTX_CHECK(v.graph == this, "graph", "naming a value of another graph");
  Node& n = nodes_[static_cast<size_t>(v.id)];
  if (n.kind == NodeKind::Op) n.name = name;
  return v;
}

}  // namespace ltx
