// A static-shape graph of ops over symbolic tensors. Models build one per input shape with the free functions of
// builder.h; compile() (compile.h) turns it into a Plan. Shapes and dtypes are inferred as nodes are added, so a
// model can read them while building and a mistake fails at the line that made it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "ops/op.h"

namespace ltx {

class Graph;

// A handle to one node's output.
struct Value {
  Graph* graph = nullptr;
  int id = -1;

  bool valid() const { return graph != nullptr && id >= 0; }
  const TensorMeta& meta() const;
  const Shape& shape() const { return meta().shape; }
  DType dtype() const { return meta().dtype; }
  int64_t dim(int i) const { return shape().dim(i); }
  int rank() const { return shape().rank(); }
};

enum class NodeKind : uint8_t { Input, Constant, Op };

struct Node {
  NodeKind kind = NodeKind::Op;
  OpKind op = OpKind::Add;
  OpAttrs attrs;
  std::vector<int> inputs;
  TensorMeta meta;
  std::string name;  // inputs and outputs are bound by name; other names label intermediates (LTX_DUMP)
  Tensor constant;   // NodeKind::Constant: the bound weight
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;  // Values point at their graph
  Graph& operator=(const Graph&) = delete;

  Value input(const std::string& name, DType dtype, const Shape& shape);
  Value constant(const std::string& name, Tensor tensor);
  Value op(OpKind kind, OpAttrs attrs, std::span<const Value> inputs, const std::string& name = "");
  Value op(OpKind kind, OpAttrs attrs, std::initializer_list<Value> inputs, const std::string& name = "") {
    return op(kind, std::move(attrs), std::span<const Value>(inputs.begin(), inputs.size()), name);
  }
  void output(Value v, const std::string& name);
  // Labels an intermediate (e.g. "transformer_blocks.3.attn1.out") for LTX_DUMP and debugging.
  Value name(Value v, const std::string& name);

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int id) const { return nodes_[static_cast<size_t>(id)]; }
  const std::vector<int>& input_ids() const { return inputs_; }
  const std::vector<std::pair<int, std::string>>& outputs() const { return outputs_; }

 private:
  Value add_node(Node node);

  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<std::pair<int, std::string>> outputs_;
};

}  // namespace ltx
