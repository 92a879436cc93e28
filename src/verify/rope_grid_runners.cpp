// Golden-case runner for the rotary frequency grids (component "rope_freq_grids"): LTX's float32 and float64 grids
// (nn/rope_ltx.h) and Gemma's inverse frequencies (models/gemma3/model.h), each as torch's kernels round them.
#include "core/torch_cpu_math.h"
#include "models/gemma3/model.h"
#include "nn/rope_ltx.h"
#include "verify/components.h"

namespace ltx {
namespace {

Tensor to_tensor(std::span<const float> v) {
  return Tensor::from_floats(DType::F32, Shape{static_cast<int64_t>(v.size())}, v);
}

// params.ltx_grids: {name: {theta, n_axes, dim, float64}} -> "ltx_grid.<name>";
// params.gemma_inv_freq: {name: {head_dim, base, linear_factor}} -> "gemma_inv_freq.<name>".
std::map<std::string, Tensor> run_rope_freq_grids(const GoldenCase& c, Precision) {
  std::map<std::string, Tensor> out;
  for (const auto& [name, g] : c.params().at("ltx_grids").items())
    out["ltx_grid." + name] =
        to_tensor(nn::ltx_rope_grid(g.at("theta").get<double>(), g.at("n_axes").get<int64_t>(),
                                    g.at("dim").get<int64_t>(), g.at("float64").get<bool>(), torch_cpu_kernels()));
  for (const auto& [name, g] : c.params().at("gemma_inv_freq").items())
    out["gemma_inv_freq." + name] = to_tensor(gemma3::rope_inv_freq(
        g.at("head_dim").get<int64_t>(), g.at("base").get<double>(), g.at("linear_factor").get<double>()));
  return out;
}

}  // namespace

void register_rope_grid_runners(ComponentRegistry& registry) { registry.add("rope_freq_grids", run_rope_freq_grids); }

}  // namespace ltx
