// Internals of the AVX-512 GEMM shared by its packing, microkernel and driver files (all *_avx512.cpp).
//
// Blocking (Goto's scheme): per thread, for each NC-column block and KC-deep slice, B is packed once into
// NR-column strips (kept in L2), A into MR-row strips (one strip stays in L1 while it sweeps the B strips), and
// an MR×NR tile of C lives in 28 zmm accumulators. For BF16 compute, k runs in pairs: one vdpbf16ps multiplies
// a broadcast (a[k], a[k+1]) pair with 16 columns' (b[k], b[k+1]) pairs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/matmul_gemm.h"

namespace ltx::cpu::gemm {

inline constexpr int kMR = 14;  // 14 rows x 2 zmm = 28 accumulators, leaving 4 registers for b and a
inline constexpr int kNR = 32;
inline constexpr int64_t kNC = 512;  // B block = KC·NC elements ≈ 512 KiB: fits the 1 MiB L2 with room for C
inline constexpr int64_t kMC = 8 * kMR;
// KC in elements of k: an A strip (MR·KC) fits L1 and a B strip (KC·NR) streams from L2.
inline constexpr int64_t kKC_f32 = 256;
inline constexpr int64_t kKC_bf16 = 512;

inline int64_t kc_for(Compute c) { return c == Compute::F32 ? kKC_f32 : kKC_bf16; }
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
  bool accumulate = false;  // add to c instead of overwriting (every KC slice after the first)
  std::byte* out = nullptr;  // when set (last slice, non-f32 output): write c + tile rounded to out_dtype here
  int64_t ldo = 0;
  DType out_dtype = DType::F32;
};

// rows in [1, MR], cols in [1, NR]; a: packed strip, b: packed strip, kc: depth of the slice (elements of k).
void kernel_f32(int rows, const float* a, const float* b, int64_t kc, int cols, const TileOut& t);
void kernel_bf16(int rows, const uint16_t* a, const uint16_t* b, int64_t kc, int cols, const TileOut& t);

}  // namespace ltx::cpu::gemm
