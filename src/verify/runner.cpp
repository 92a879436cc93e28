#include "verify/runner.h"

#include <algorithm>

#include "core/error.h"
#include "io/safetensors.h"

namespace ltx {

ComponentRegistry& ComponentRegistry::global() {
  static ComponentRegistry registry;
  return registry;
}

void ComponentRegistry::add(const std::string& component, ComponentRunner runner) {
  runners_[component] = std::move(runner);
}

const ComponentRunner* ComponentRegistry::find(const std::string& component) const {
  auto it = runners_.find(component);
  return it == runners_.end() ? nullptr : &it->second;
}

CaseResult run_golden_case(const std::string& dir, Precision precision, const ComponentRegistry& registry) {
  CaseResult result;
  result.dir = dir;
  try {
    const GoldenCase c = load_golden_case(dir);
    result.component = c.component;
    const ComponentRunner* runner = registry.find(c.component);
    if (runner == nullptr) return result;  // NotImplemented

    const std::map<std::string, Tensor> produced = (*runner)(c, precision);
    const SafetensorsFile expected = SafetensorsFile::open(c.expected_path());
    bool ok = true;
    for (const TensorInfo& info : expected.tensors()) {
      const bool is_output = std::find(c.outputs.begin(), c.outputs.end(), info.name) != c.outputs.end();
      auto it = produced.find(info.name);
      if (it == produced.end()) {
        if (!is_output) continue;  // an intermediate this component does not expose
        TensorComparison missing;
        missing.name = info.name;
        missing.status = TensorComparison::Status::MissingInB;
        result.tensors.push_back(missing);
        ok = false;
        continue;
      }
      TensorComparison cmp =
          compare_tensors(info.name, it->second, expected.get(info.name), c.tolerance(precision, info.name));
      ok = ok && cmp.ok();
      result.tensors.push_back(std::move(cmp));
    }
    result.status = ok ? CaseResult::Status::Passed : CaseResult::Status::Failed;
  } catch (const std::exception& e) {
    result.status = CaseResult::Status::Failed;
    result.error = e.what();
  }
  return result;
}

}  // namespace ltx
