#include "core/cpu_features.h"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace ltx {
namespace {

// AMX-BF16: CPUID.(7, 0):EDX[22], with the OS saving the tile state (XCR0 bits 17 and 18). Read directly, as not
// every compiler's __builtin_cpu_supports knows "amx-bf16" (clang 14 does not).
bool amx_bf16_supported() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0 || (d & (1u << 22)) == 0) return false;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) return false;  // OSXSAVE: xgetbv works
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & (3u << 17)) == (3u << 17);
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni");
    f.amx_bf16 = amx_bf16_supported();
    const char* kernels = std::getenv("LTX_KERNELS");
    const std::string_view choice = kernels != nullptr ? kernels : "native";
    LTX_CHECK(choice == "native" || choice == "portable", "cpu", "LTX_KERNELS='", choice,
              "' is not a kernel choice; valid: native, portable");
    if (choice == "portable") {
      f.portable = true;
      f.avx512 = f.avx512_bf16 = f.avx512_vnni = f.amx_bf16 = false;
    }
    return f;
  }();
  return features;
}

}  // namespace ltx
