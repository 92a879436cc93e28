// Named intermediates: a model names a value (Graph::name, so LTX_DUMP finds it under the reference's module
// path) and, when a caller asked for them, also keeps it to declare as a graph output (golden runners).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace ltx::ltxm {

struct Taps {
  bool collect = false;
  std::vector<std::pair<Value, std::string>> values;

  Value operator()(Value v, const std::string& name) {
    v.graph->name(v, name);
    if (collect) values.emplace_back(v, name);
    return v;
  }
  // Declares every kept value as a graph output under its name.
  void declare_outputs(Graph& g) const {
    for (const auto& [v, name] : values) g.output(v, name);
  }
};

// Graph inputs with the tensors to bind, in declaration order.
struct Feed {
  std::vector<Tensor> tensors;
  Value add(Graph& g, const std::string& name, const Tensor& t) {
    tensors.push_back(t);
    return g.input(name, t.dtype(), t.shape());
  }
};

}  // namespace ltx::ltxm
