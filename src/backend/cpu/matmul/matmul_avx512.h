// Internals of the AVX-512 GEMM shared by its packing, microkernel and driver files (all *_avx512.cpp).
//
// Blocking (Goto's scheme): per thread, for each NC-column block and KC-deep slice, B is packed once into
// NR-column strips (kept in L2), A into MR-row strips (one strip stays in L1 while it sweeps the B strips), and
// an MR×NR tile of C lives in 28 zmm accumulators. For BF16 compute, k runs in pairs: one vdpbf16ps multiplies
// a broadcast (a[k], a[k+1]) pair with 16 columns' (b[k], b[k+1]) pairs.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "backend/cpu/matmul/matmul_gemm.h"

namespace ltx::cpu::gemm {

inline constexpr int kMR = 14;  // 14 rows x 2 zmm = 28 accumulators, leaving 4 registers for b and a
inline constexpr int kNR = 32;
inline constexpr int64_t kMC = 8 * kMR;
// KC in elements of k: an A strip (MR·KC) fits L1 and a B strip (KC·NR) streams from L2. NC: the B block
// KC·NC is 512 KiB in both (half the 1 MiB L2, room for C and A). bf16 measured on Zen 5, one thread, `ltx bench
// --shape` 1536×4096·4096×{4096,2048}, 1536×16384·16384×4096: KC 512 / NC 512 450 GFLOP/s (A repacked for every
// 512 columns); KC 256 / NC 1024 460-474; KC 384 / NC 1024 ~460; KC 256 / NC 2048 (1 MiB block) 452-461.
inline constexpr int64_t kNC_f32 = 512;
inline constexpr int64_t kNC_bf16 = 1024;
inline constexpr int64_t kNC = kNC_bf16;  // the larger: sizes scratch buffers
inline constexpr int64_t kKC_f32 = 256;
inline constexpr int64_t kKC_bf16 = 256;

inline int64_t kc_for(Compute c) { return c == Compute::F32 ? kKC_f32 : kKC_bf16; }
inline int64_t nc_for(Compute c) { return c == Compute::F32 ? kNC_f32 : kNC_bf16; }
// Bytes of one packed A strip and one packed B strip (both are KC·(MR or NR)·4 bytes: f32, or bf16 pairs).
inline int64_t a_strip_bytes(Compute c) { return kMR * kc_for(c) * (c == Compute::F32 ? 4 : 2); }
inline int64_t b_strip_bytes(Compute c) { return kc_for(c) * kNR * (c == Compute::F32 ? 4 : 2); }

// Packs a(m0 + i, k0 + k) for i < rows, k < kc as rows of KC elements one after another (f32, or bf16 for
// Compute::BF16, whose odd tail is padded with a zero so pairs are whole); any run of rows is a kernel strip.
void pack_a(const Problem& p, int64_t m0, int64_t rows, int64_t k0, int64_t kc, std::byte* dst);
// Packs b(k0 + k, n0 + j) for k < kc, j < cols into strips of NR columns: f32 [kc][NR], or bf16 pairs
// [ceil(kc/2)][NR][2]; columns past `cols` and the odd k tail are zero.
void pack_b(const Problem& p, int64_t k0, int64_t kc, int64_t n0, int64_t cols, std::byte* dst);

// Where a tile's result goes.
struct TileOut {
  float* c = nullptr;  // f32 [rows][ldc]: partial sums (or the output itself when it is f32)
  int64_t ldc = 0;
  bool accumulate = false;   // add to c instead of overwriting (every KC slice after the first)
  std::byte* out = nullptr;  // when set (last slice, non-f32 output): write c + tile rounded to out_dtype here
  int64_t ldo = 0;
  DType out_dtype = DType::F32;
};

// rows in [1, MR], cols in [1, NR]; a: packed strip, b: packed strip, kc: depth of the slice (elements of k).
void kernel_f32(int rows, const float* a, const float* b, int64_t kc, int cols, const TileOut& t);
void kernel_bf16(int rows, const uint16_t* a, const uint16_t* b, int64_t kc, int cols, const TileOut& t);

// In place: r[i] lane j <- r[j] lane i, for 16 vectors of 16 32-bit values (unpack within 128-bit lanes, then
// gather the lanes with two rounds of 128-bit shuffles).
inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);  // per lane: r_i[0] r_i+1[0] r_i[1] r_i+1[1]
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // u[i + j] lane L: rows i..i+3 at column 4L + j
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int j = 0; j < 4; ++j) {
    const __m512 w0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88), w1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 w3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    r[j] = _mm512_shuffle_f32x4(w0, w2, 0x88);
    r[4 + j] = _mm512_shuffle_f32x4(w1, w3, 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(w0, w2, 0xdd);
    r[12 + j] = _mm512_shuffle_f32x4(w1, w3, 0xdd);
  }
}

// The panel path for small M (matmul_small_avx512.cpp): W read in place in the Linear layout (b.sk == 1), a and
// b of the same dtype (f32, or bf16 with Compute::BF16), or encoded W decoded a KC slice at a time against up to 32
// bf16 rows of a; and a [K][M] panel of a that fits half of L2.
void run_small_m(const Problem& p);

// The matrix-vector path (matmul_gemv_avx512.cpp): 1-4 f32 rows of a (unit k stride) against bf16 W read in place
// in the Linear layout, f32 out, with the blocked path's bits.
bool gemv_applies(const Problem& p);
void run_gemv(const Problem& p);

// The int8-activation path (matmul_int8_avx512.cpp): taken before the others where int8_activations() is on
// (core/int8_activations.h), the CPU has AVX512_VNNI, W is Q8_0, Q4_0, Q5_0, Q4_K, Q5_K (or Q6_K, for 1-4 rows) and a
// is f32 or bf16 with unit k stride.
bool int8_applies(const Problem& p);
int64_t int8_scratch_bytes(const Problem& p);
void run_int8(const Problem& p);

}  // namespace ltx::cpu::gemm
