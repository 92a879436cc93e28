// A whole Graph as one StableHLO module: its inputs, then the constants its outputs depend on, as the function's
// parameters (weights are never literals: they are uploaded once and stay on the device; GGUF weights as their
// bytes, decoded on the device where they are read), every live node lowered
// by lower_op, the outputs returned in the graph's order.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace ltx::xla {

struct LoweredGraph {
  std::string mlir;
  std::vector<int> constant_nodes;  // the parameters after the graph's inputs, in order
  std::vector<TensorMeta> output_metas;
  int n_live = 0;  // nodes the outputs depend on
};

// How a GGUF weight reaches the program: its bytes, [..., row bytes] of u8 (lower_dequantize.cpp decodes them).
TensorMeta weight_bytes_meta(const TensorMeta& weight);

// Throws ltx::Error naming the node (its op, name and shapes) that cannot be lowered.
LoweredGraph lower_graph(const Graph& graph);

}  // namespace ltx::xla
