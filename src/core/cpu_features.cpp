#include "core/cpu_features.h"

#include <cstdlib>
#include <string_view>

#include "core/error.h"

namespace ltx {

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    f.avx512_vnni = f.avx512 && __builtin_cpu_supports("avx512vnni");
    f.amx_bf16 = __builtin_cpu_supports("amx-bf16");
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
