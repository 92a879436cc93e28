// Helpers shared by the LTX golden runners (ltx_*_runners.cpp).
#pragma once

#include <map>
#include <string>

#include "core/error.h"
#include "graph/compile.h"
#include "io/json.h"
#include "models/ltx/dit/taps.h"
#include "nn/weight_source.h"
#include "verify/golden_case.h"
#include "verify/runner.h"

namespace ltx {

// The "transformer" dict of a checkpoint's `config` metadata.
inline nlohmann::json checkpoint_transformer_config(const WeightSource& source) {
  auto it = source.metadata().find("config");
  LTX_CHECK(it != source.metadata().end(), "ltx", source.describe(), ": no `config` metadata");
  const nlohmann::json cfg = nlohmann::json::parse(it->second);
  LTX_CHECK(cfg.contains("transformer"), "ltx", source.describe(), ": `config` has no \"transformer\" dict");
  return cfg.at("transformer");
}

// Compiles and runs a graph once; outputs are copied out of the plan's arena.
inline std::map<std::string, Tensor> run_graph(const Graph& g, const ltxm::Feed& feed) {
  auto plan = compile(g, golden_backend());
  const auto outs = plan->run(feed.tensors);
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < outs.size(); ++i) result[plan->output_names()[i]] = outs[i].clone();
  return result;
}

}  // namespace ltx
