// AVX-512 rotary position embedding: the reference kernel's formulas (rope_ref.cpp, ltx_core rope.py) on 16 lanes,
// with its separate f32 roundings (mul_rn/sub_rn/add_rn, never contracted to FMA) and its bf16 rounding, so the
// output is byte-identical to the reference. Rows whose last axis is contiguous in x, cos and sin; x and out f32
// or bf16 (the same), cos/sin f32; other calls fall back to the reference.
// GCC 12 flags the _mm512_undefined_* inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>

#include "backend/cpu/optimized.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"

namespace ltx::cpu::opt {
namespace {

bool avx512_ok() { return cpu_features().avx512; }

// Element offset of row `row` (flattened leading dims of `shape`, the last dim excluded) in a view with `strides`.
int64_t row_offset(int64_t row, const Shape& shape, const Shape& strides) {
  int64_t off = 0;
  for (int i = shape.rank() - 2; i >= 0; --i) {
    off += (row % shape[i]) * strides[i];
    row /= shape[i];
  }
  return off;
}

// numpy broadcasting of `from` to exactly `to`.
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  for (int i = 1; i <= from.rank(); ++i)
    if (from[from.rank() - i] != 1 && from[from.rank() - i] != to[to.rank() - i]) return false;
  return true;
}

template <bool kBF16>
__m512 load(const void* p, int64_t i, __mmask16 m) {
  if constexpr (kBF16)
    return vec::load_bf16(static_cast<const uint16_t*>(p) + i, m);
  else
    return vec::load_f32(static_cast<const float*>(p) + i, m);
}

template <bool kBF16>
void store(void* p, int64_t i, __m512 v, __mmask16 m) {
  if constexpr (kBF16)
    vec::store_bf16(static_cast<uint16_t*>(p) + i, v, m);
  else
    vec::store_f32(static_cast<float*>(p) + i, v, m);
}

// SplitHalf: out1 = x1·cos − x2·sin, out2 = x2·cos + x1·sin over halves of `half` values.
template <bool kBF16>
void split_row(const void* x, const float* c, const float* s, void* o, int64_t half) {
  for (int64_t i = 0; i < half; i += 16) {
    const __mmask16 m = vec::tail_mask(half - i);
    const __m512 x1 = load<kBF16>(x, i, m), x2 = load<kBF16>(x, half + i, m);
    const __m512 cv = _mm512_maskz_loadu_ps(m, c + i), sv = _mm512_maskz_loadu_ps(m, s + i);
    store<kBF16>(o, i, vec::sub_rn(vec::mul_rn(x1, cv), vec::mul_rn(x2, sv)), m);
    store<kBF16>(o, half + i, vec::add_rn(vec::mul_rn(x2, cv), vec::mul_rn(x1, sv)), m);
  }
}

// Interleaved: out[2i] = x[2i]·cos[2i] − x[2i+1]·sin[2i], out[2i+1] = x[2i+1]·cos[2i+1] + x[2i]·sin[2i+1]; the
// even lanes subtract, which is the odd-lane add with the swapped operand negated (exact either way).
template <bool kBF16>
void interleaved_row(const void* x, const float* c, const float* s, void* o, int64_t dim) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi64(static_cast<int64_t>(0x80000000u)));  // even lanes
  for (int64_t i = 0; i < dim; i += 16) {
    const __mmask16 m = vec::tail_mask(dim - i);
    const __m512 xv = load<kBF16>(x, i, m);
    const __m512 swapped = _mm512_xor_ps(_mm512_permute_ps(xv, 0xb1), sign);  // (−x[2i+1], x[2i]) per pair
    const __m512 cv = _mm512_maskz_loadu_ps(m, c + i), sv = _mm512_maskz_loadu_ps(m, s + i);
    store<kBF16>(o, i, vec::add_rn(vec::mul_rn(xv, cv), vec::mul_rn(swapped, sv)), m);
  }
}

}  // namespace

bool try_rope(const RopeAttrs& attrs, Inputs in, const Tensor& out) {
  if (!avx512_ok() || in.size() != 3) return false;
  const Tensor& x = in[0];
  const DType dt = x.dtype();
  if ((dt != DType::F32 && dt != DType::BF16) || out.dtype() != dt || !out.is_contiguous()) return false;
  if (in[1].dtype() != DType::F32 || in[2].dtype() != DType::F32) return false;
  const Shape& shape = x.shape();
  if (shape.rank() < 1 || out.shape() != shape) return false;
  const int64_t dim = shape.dim(-1);
  const bool split = attrs.mode == RopeMode::SplitHalf;
  if (dim % 2 != 0) return false;
  Shape table = shape;  // what cos/sin broadcast to: [..., T, D] or [..., T, D/2]
  if (split) table[shape.rank() - 1] = dim / 2;
  if (!broadcasts_to(in[1].shape(), table) || !broadcasts_to(in[2].shape(), table)) return false;
  const Tensor cos = in[1].broadcast_to(table), sin = in[2].broadcast_to(table);
  const int last = shape.rank() - 1;
  if (x.strides()[last] != 1 || cos.strides()[last] != 1 || sin.strides()[last] != 1) return false;
  const int64_t rows = shape.numel() / std::max<int64_t>(dim, 1);
  if (rows == 0 || dim == 0) return true;
  const auto xes = static_cast<int64_t>(dtype_block_bytes(dt));
  const auto* cb = reinterpret_cast<const float*>(cos.raw());
  const auto* sb = reinterpret_cast<const float*>(sin.raw());
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const std::byte* xr = x.raw() + row_offset(r, shape, x.strides()) * xes;
      const float* c = cb + row_offset(r, table, cos.strides());
      const float* s = sb + row_offset(r, table, sin.strides());
      std::byte* o = out.raw() + r * dim * xes;
      if (dt == DType::BF16)
        split ? split_row<true>(xr, c, s, o, dim / 2) : interleaved_row<true>(xr, c, s, o, dim);
      else
        split ? split_row<false>(xr, c, s, o, dim / 2) : interleaved_row<false>(xr, c, s, o, dim);
    }
  });
  return true;
}

}  // namespace ltx::cpu::opt
