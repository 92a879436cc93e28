#include "verify/runner.h"

#include <algorithm>

#include "core/error.h"
#include "core/torch_cpu_math.h"
#include "io/safetensors.h"

namespace ltx {

namespace {
const Backend* chosen_backend = nullptr;
}  // namespace

const Backend& golden_backend() { return chosen_backend != nullptr ? *chosen_backend : cpu_backend(); }
void use_golden_backend(const Backend& backend) { chosen_backend = &backend; }

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

namespace {

// A case replays with the torch CPU kernel set that made it (manifest reference.torch_cpu_capability, as
// torch.backends.cpu.get_cpu_capability() named it); cases without one use this process's choice.
class CaseTorchKernels {
 public:
  explicit CaseTorchKernels(const GoldenCase& c) {
    const nlohmann::json& ref = c.manifest.contains("reference") ? c.manifest.at("reference") : nlohmann::json();
    if (!ref.is_object() || !ref.contains("torch_cpu_capability")) return;
    const std::string name = ref.at("torch_cpu_capability").get<std::string>();
    const auto k = parse_torch_cpu_kernels(name);
    LTX_CHECK(k.has_value(), "golden", c.dir, ": reference.torch_cpu_capability '", name,
              "' is none of default, avx2, avx512");
    set_torch_cpu_kernels(k);
    set_ = true;
  }
  ~CaseTorchKernels() {
    if (set_) set_torch_cpu_kernels(std::nullopt);
  }
  CaseTorchKernels(const CaseTorchKernels&) = delete;
  CaseTorchKernels& operator=(const CaseTorchKernels&) = delete;

 private:
  bool set_ = false;
};

}  // namespace

CaseResult run_golden_case(const std::string& dir, Precision precision, const ComponentRegistry& registry) {
  CaseResult result;
  result.dir = dir;
  try {
    const GoldenCase c = load_golden_case(dir);
    result.component = c.component;
    const ComponentRunner* runner = registry.find(c.component);
    if (runner == nullptr) return result;  // NotImplemented
    const CaseTorchKernels kernels(c);

    result.produced = (*runner)(c, precision);
    const std::map<std::string, Tensor>& produced = result.produced;
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
