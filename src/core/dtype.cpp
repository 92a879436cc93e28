#include "core/dtype.h"

#include <array>

#include "core/error.h"

namespace ltx {
namespace {

struct DTypeInfo {
  std::string_view name;
  size_t block_elems;
  size_t block_bytes;
  bool encoded;  // decoded by dequantize_row (dtype_is_quantized)
};

// Block layouts from ggml's block_q8_0 / block_q4_0 / block_q4_K / block_q5_K / block_q6_K / block_q5_0.
constexpr std::array<DTypeInfo, kDTypeCount> kInfo = {{
    {"f32", 1, 4, false},
    {"bf16", 1, 2, false},
    {"f16", 1, 2, false},
    {"i32", 1, 4, false},
    {"i64", 1, 8, false},
    {"u8", 1, 1, false},
    {"q8_0", 32, 34, true},
    {"q4_0", 32, 18, true},
    {"q4_k", 256, 144, true},
    {"q5_k", 256, 176, true},
    {"q6_k", 256, 210, true},
    {"q5_0", 32, 22, true},
    {"f8_e4m3", 1, 1, true},
    {"f8_e5m2", 1, 1, true},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

size_t dtype_block_elems(DType t) { return info(t).block_elems; }
size_t dtype_block_bytes(DType t) { return info(t).block_bytes; }
bool dtype_is_quantized(DType t) { return info(t).encoded; }
bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }
std::string_view dtype_name(DType t) { return info(t).name; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i)
    if (kInfo[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

size_t dtype_bytes_for(DType t, int64_t n) {
  const auto& i = info(t);
  LTX_CHECK(n >= 0 && n % static_cast<int64_t>(i.block_elems) == 0, "dtype", n, " elements is not a whole number of ",
            i.name, " blocks of ", i.block_elems);
  return static_cast<size_t>(n) / i.block_elems * i.block_bytes;
}

}  // namespace ltx
