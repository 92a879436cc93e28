// Runs golden cases: the component named by a case's manifest computes its outputs (and named intermediates)
// from the case's weights and inputs, and every expected tensor is compared within the case's tolerance.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/compile.h"
#include "verify/golden_case.h"

namespace ltx {

// Computes a case: returns tensors by the names used in the case's expected file. A component that cannot
// produce an expected intermediate simply leaves it out; missing outputs fail the case.
using ComponentRunner = std::function<std::map<std::string, Tensor>(const GoldenCase&, Precision)>;

// The backend the runners compile for: the CPU's unless `ltx verify --backend NAME` chose another
// (use_golden_backend, before any case runs).
const Backend& golden_backend();
void use_golden_backend(const Backend& backend);

// Components the engine implements, by manifest component id. Each model module registers its runner here.
class ComponentRegistry {
 public:
  static ComponentRegistry& global();
  void add(const std::string& component, ComponentRunner runner);
  const ComponentRunner* find(const std::string& component) const;

 private:
  std::map<std::string, ComponentRunner> runners_;
};

struct CaseResult {
  enum class Status { Passed, Failed, NotImplemented };
  std::string dir;
  std::string component;
  Status status = Status::NotImplemented;
  std::string error;                       // set when the case could not run (an exception)
  std::vector<TensorComparison> tensors;   // every expected tensor the component produced or owed
  std::map<std::string, Tensor> produced;  // what the component computed (ltx verify --save, --gates)
};

CaseResult run_golden_case(const std::string& dir, Precision precision,
                           const ComponentRegistry& registry = ComponentRegistry::global());

}  // namespace ltx
