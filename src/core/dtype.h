// Element types: plain scalars and GGUF block-quantized formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ltx {

enum class DType : uint8_t {
  F32,
  BF16,
  F16,
  I32,
  I64,
  U8,
  // GGUF block types: a tensor's last dimension is a whole number of blocks.
  Q8_0,  // 32 elements: f16 scale + 32 x int8
  Q4_0,  // 32 elements: f16 scale + 16 bytes of nibbles
  Q4_K,  // 256 elements: super-block with 8 sub-blocks, 6-bit scales and mins
  Q5_K,  // 256 elements: Q4_K plus one high bit per element
  Q6_K,  // 256 elements: 16 sub-blocks of 16, int8 scales
  Q5_0,  // 32 elements: f16 scale + 32 high bits + 16 bytes of nibbles (Gemma GGUFs use it for many weights)
  // 8-bit floats (safetensors F8_E4M3 / F8_E5M2, torch float8_e4m3fn / float8_e5m2): one byte per element, no
  // per-block scale (a checkpoint's per-tensor weight_scale is applied by the layer). Decoded like the block types
  // (dequantize_row), so weights stay one byte resident and the matmul widens them slice by slice.
  F8_E4M3,
  F8_E5M2,
};
inline constexpr int kDTypeCount = 14;

// Elements per storage block: 1 for plain types.
size_t dtype_block_elems(DType t);
// Bytes per storage block (the element size for plain types).
size_t dtype_block_bytes(DType t);
// Stored in an encoded form that dequantize_row decodes: the GGUF block types and the 8-bit floats.
bool dtype_is_quantized(DType t);
bool dtype_is_float(DType t);                                 // f32, bf16, f16
std::string_view dtype_name(DType t);                         // "f32", "bf16", ..., "q4_k"
std::optional<DType> dtype_from_name(std::string_view name);  // inverse of dtype_name

// Bytes needed for n elements (n a multiple of the block size for quantized types).
size_t dtype_bytes_for(DType t, int64_t n);

}  // namespace ltx
