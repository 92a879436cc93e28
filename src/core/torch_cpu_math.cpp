#include "core/torch_cpu_math.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/cpu_features.h"
#include "core/error.h"

// libsleef's scalar FMA variant: sleef.h declares it only when the compiler is told the target has FMA
// (FP_FAST_FMA); the library always has it, and this file calls it only where cpu_features().fma.
extern "C" float Sleef_powf1_u10purecfma(float, float);

namespace ltx {
namespace {

// Reproducing a kernel set needs only the rounding it does: the fused multiply-add of the AVX2/AVX-512 builds.
bool can_reproduce(TorchCpuKernels k) { return k == TorchCpuKernels::Default || cpu_features().fma; }

TorchCpuKernels detected() {
  static const TorchCpuKernels k = [] {
    if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
      const auto named = parse_torch_cpu_kernels(env);
      if (named && can_reproduce(*named)) return *named;
    }
    const CpuFeatures& f = cpu_features();
    if (f.avx512 && f.fma) return TorchCpuKernels::Avx512;
    if (f.avx2 && f.fma) return TorchCpuKernels::Avx2;
    return TorchCpuKernels::Default;
  }();
  return k;
}

constexpr int kNone = -1;
std::atomic<int> override_kernels{kNone};

// Elements per pass of aten's vectorized loop (Loops.h vectorized_loop: two vectors per iteration).
int64_t vector_pass(TorchCpuKernels k) {
  return k == TorchCpuKernels::Avx512 ? 32 : k == TorchCpuKernels::Avx2 ? 16 : 0;
}

}  // namespace

std::string_view torch_cpu_kernels_name(TorchCpuKernels k) {
  switch (k) {
    case TorchCpuKernels::Default:
      return "default";
    case TorchCpuKernels::Avx2:
      return "avx2";
    case TorchCpuKernels::Avx512:
      return "avx512";
  }
  return "?";
}

std::optional<TorchCpuKernels> parse_torch_cpu_kernels(std::string_view name) {
  std::string lower(name);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto k : {TorchCpuKernels::Default, TorchCpuKernels::Avx2, TorchCpuKernels::Avx512})
    if (lower == torch_cpu_kernels_name(k)) return k;
  return std::nullopt;
}

TorchCpuKernels torch_cpu_kernels() {
  const int o = override_kernels.load(std::memory_order_relaxed);
  return o == kNone ? detected() : static_cast<TorchCpuKernels>(o);
}

void set_torch_cpu_kernels(std::optional<TorchCpuKernels> k) {
  LTX_CHECK(!k || can_reproduce(*k), "torch kernels", "this CPU cannot reproduce torch's ", torch_cpu_kernels_name(*k),
            " results: it lacks the fused multiply-add they round with; valid here: default");
  override_kernels.store(k ? static_cast<int>(*k) : kNone, std::memory_order_relaxed);
}

std::vector<float> torch_linspace(float start, float end, int64_t n, TorchCpuKernels k) {
  LTX_CHECK(n >= 0, "torch kernels", "linspace of ", n, " elements");
  std::vector<float> out(static_cast<size_t>(n));
  if (n == 0) return out;
  if (n == 1) {
    out[0] = start;
    return out;
  }
  const float step = (end - start) / static_cast<float>(n - 1);
  const bool fused = k != TorchCpuKernels::Default;
  const int64_t half = n / 2;
  for (int64_t i = 0; i < n; ++i) {
    const auto from_start = static_cast<float>(i), from_end = static_cast<float>(n - 1 - i);
    float v = 0.0f;
    if (i < half)
      v = fused ? std::fma(step, from_start, start) : start + step * from_start;
    else
      v = fused ? std::fma(-step, from_end, end) : end - step * from_end;
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

std::vector<float> torch_pow(float base, std::span<const float> exponents, TorchCpuKernels k) {
  const auto n = static_cast<int64_t>(exponents.size());
  const int64_t pass = vector_pass(k);
  const int64_t vectorized = pass == 0 ? 0 : n / pass * pass;
  LTX_CHECK(vectorized == 0 || can_reproduce(k), "torch kernels", "torch_pow with ", torch_cpu_kernels_name(k),
            " results needs FMA on this CPU");
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float e = exponents[static_cast<size_t>(i)];
    out[static_cast<size_t>(i)] = i < vectorized ? Sleef_powf1_u10purecfma(base, e) : std::pow(base, e);
  }
  return out;
}

}  // namespace ltx
