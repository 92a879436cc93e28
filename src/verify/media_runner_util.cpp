#include "verify/media_runner_util.h"

#include "graph/compile.h"
#include "verify/runner.h"

namespace ltx::media_runner {

Json weights_config(const WeightSource& source) {
  const auto it = source.metadata().find("config");
  LTX_CHECK(it != source.metadata().end(), "verify", source.describe(), ": no `config` metadata");
  return parse_json(it->second, source.describe() + " config");
}

std::map<std::string, Tensor> run(Graph& g, const std::vector<std::pair<std::string, Value>>& outputs,
                                  const video_vae::Taps& taps, const std::vector<Tensor>& inputs) {
  std::map<int, std::vector<std::string>> names_of;  // node id -> names
  std::vector<int> order;
  for (const auto& list : {&outputs, &taps}) {
    for (const auto& [name, v] : *list) {
      auto [it, fresh] = names_of.try_emplace(v.id);
      if (fresh) order.push_back(v.id);
      it->second.push_back(name);
    }
  }
  for (int id : order) g.output(Value{&g, id}, names_of[id].front());
  auto plan = compile(g, golden_backend());
  const std::span<const Tensor> results = plan->run(std::span<const Tensor>(inputs));
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < order.size(); ++i)
    for (const std::string& name : names_of[order[i]]) out[name] = results[i].clone();
  return out;
}

}  // namespace ltx::media_runner
