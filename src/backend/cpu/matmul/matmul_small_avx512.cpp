// The panel path for small a·Wᵀ: out[M, N] = a[M, K]·W[N, K]ᵀ with W in the Linear layout, computed as
// outᵀ = W·aᵀ. W is read in place (each element once, as broadcasts from 12 row streams) and only a is packed,
// transposed into a [K][M] panel that stays in L2; each 12 rows of W (then in L1) meet the panel 32 columns of m
// at a time. The blocked path copies all of W into panels on every call, which for small M costs a fifth of the
// time (60×640·640×2048).
//
// Measured single-thread (thread CPU time, best of 15, GFLOP/s), blocked path -> this path, oneDNN on the same
// W [N, K] / on pre-reordered W: 60×640·640×2048 f32 210 -> 240 (205 / 221), bf16 425 -> 464 (417 / 455);
// 128×1024·1024×1024 bf16 -> 506 (455 / 489). It loses once the panel outgrows half of L2: 256×1024·1024×1024
// f32 (1 MiB panel) 242 -> 224, while bf16 there (512 KiB) still gains, 483 -> 496.
//
// Encoded W (GGUF blocks, 8-bit floats) against up to 32 bf16 rows of a: each tile's rows are decoded one KC slice
// at a time into bf16 lines that stay in L1 (tile_encoded), where the blocked path would also transpose every
// decoded slice into strips and write them out; 16×4096·4096×4096 q4_k 98 -> 138 GFLOP/s (bf16 W: 132).
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cpu/matmul/dequant_avx512.h"
#include "backend/cpu/matmul/matmul_avx512.h"
#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm {
namespace {

constexpr int64_t kBlockM = 32;  // columns of m per tile: one panel strip
constexpr int64_t kMaxM = kBlockM;
// The aᵀ panel is read once per 12 rows of W; it must stay in L2 (1 MiB) beside W's rows and out.
constexpr int64_t kMaxPanelBytes = 512 * 1024;

// 32-bit units of k per panel row: f32 values, or bf16 (k, k+1) pairs.
int64_t units_of(const Problem& p) { return p.compute == Compute::F32 ? p.k : (p.k + 1) / 2; }

// An R×(16·Q) tile of outᵀ (rows n0 .. n0 + rows of W, columns m) in R·Q <= 24 accumulators; R = 12 (Q <= 2) so
// that the R row pointers of W stay in general registers and each Q panel loads feed 12·Q multiply-adds. Rows
// past `rows` repeat the last valid row and are not stored. panel: [units][32] strips of 32 columns of m.
template <int Q>
struct Tile {
  static constexpr int R = std::min(12, 24 / Q);
  __m512 c[R][Q];

  // The accumulators as floats: tile[i][m].
  void spill(float (*tile)[kMaxM]) const {
    for (int i = 0; i < R; ++i)
      for (int q = 0; q < Q; ++q) _mm512_storeu_ps(tile[i] + 16 * q, c[i][q]);
  }
};

// W's next R rows (the next tile; contiguous when ldw == k) are fetched during this tile's k loop: each row is
// too short a stream for the hardware prefetcher to ramp up on.
inline void prefetch_next(const std::byte* next, int64_t bytes, int64_t line) {
  if (line * 64 < bytes) _mm_prefetch(reinterpret_cast<const char*>(next) + line * 64, _MM_HINT_T0);
}

template <int Q>
void tile_f32(const float* w, int64_t ldw, int rows, const float* panel, int64_t strip, int64_t k,
              float (*tile)[kMaxM]) {
  const auto* next = reinterpret_cast<const std::byte*>(w + Tile<Q>::R * ldw);
  const int64_t next_bytes = ldw == k ? Tile<Q>::R * k * 4 : 0;
  constexpr int R = Tile<Q>::R;
  Tile<Q> t;
  const float* wr[R];
  for (int i = 0; i < R; ++i) wr[i] = w + std::min(i, rows - 1) * ldw;
  for (int i = 0; i < R; ++i)
    for (int q = 0; q < Q; ++q) t.c[i][q] = _mm512_setzero_ps();
  for (int64_t kk = 0; kk < k; ++kk) {
    prefetch_next(next, next_bytes, kk);
    __m512 b[Q];
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q) b[q] = _mm512_load_ps(panel + (q / 2) * strip + kk * 32 + (q % 2) * 16);
#pragma GCC unroll 24
    for (int i = 0; i < R; ++i) {
      const __m512 av = _mm512_set1_ps(wr[i][kk]);
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) t.c[i][q] = _mm512_fmadd_ps(av, b[q], t.c[i][q]);
    }
  }
  t.spill(tile);
}

template <int Q, bool Native>
void tile_bf16(const uint16_t* w, int64_t ldw, int rows, const uint32_t* panel, int64_t strip, int64_t k,
               float (*tile)[kMaxM]) {
  const auto* next = reinterpret_cast<const std::byte*>(w + Tile<Q>::R * ldw);
  const int64_t next_bytes = ldw == k ? Tile<Q>::R * k * 2 : 0;
  constexpr int R = Tile<Q>::R;
  Tile<Q> t;
  const uint16_t* wr[R];
  for (int i = 0; i < R; ++i) wr[i] = w + std::min(i, rows - 1) * ldw;
  for (int i = 0; i < R; ++i)
    for (int q = 0; q < Q; ++q) t.c[i][q] = _mm512_setzero_ps();
  const int64_t full = k / 2;
  const auto step = [&](int64_t kp, auto pair_of) {
    prefetch_next(next, next_bytes, kp);
    __m512i b[Q];
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q) b[q] = _mm512_load_si512(panel + (q / 2) * strip + kp * 32 + (q % 2) * 16);
#pragma GCC unroll 24
    for (int i = 0; i < R; ++i) {
      const __m512i av = _mm512_set1_epi32(pair_of(wr[i], kp));
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) t.c[i][q] = vec::dpbf16<Native>(t.c[i][q], av, b[q]);
    }
  };
  for (int64_t kp = 0; kp < full; ++kp)
    step(kp, [](const uint16_t* row, int64_t j) {
      int32_t v;
      std::memcpy(&v, row + 2 * j, 4);
      return v;
    });
  // An odd K: the last pair is (w[K-1], 0); reading a whole pair would run past the row (and the buffer).
  if (k & 1) step(full, [](const uint16_t* row, int64_t j) { return static_cast<int32_t>(row[2 * j]); });
  t.spill(tile);
}

// Encoded W with bf16 a: each KC slice of the tile's rows is decoded to bf16 as the blocked path's packer decodes
// it, multiplied as in tile_bf16, and the slice's sums are added to the running ones (in `tile`) as the blocked
// kernel adds them (matmul_kernel_avx512.cpp store_row), so every output has the blocked path's bits. w: row n0 of
// W; next_rows: rows of the following tile, whose first slice is fetched during the last one.
template <int Q, bool Native>
void tile_encoded(const OperandB& w, int rows, int next_rows, const uint32_t* panel, int64_t strip, int64_t k,
                  float (*tile)[kMaxM]) {
  constexpr int R = Tile<Q>::R;
  constexpr int64_t kc_max = kKC_bf16;  // the blocked path's slices of encoded weights (run_block)
  const auto block = static_cast<int64_t>(dtype_block_elems(w.dtype));
  const auto block_bytes = static_cast<int64_t>(dtype_block_bytes(w.dtype));
  const auto slice_bytes = [&](int64_t pc) { return std::min(kc_max, k - pc) / block * block_bytes; };
  alignas(64) uint16_t lines[R][kc_max + 2];  // + a zero pair for an odd slice (an 8-bit float K)
  for (int64_t pc = 0; pc < k; pc += kc_max) {
    const int64_t kc = std::min(kc_max, k - pc);
    for (int i = 0; i < rows; ++i) {
      const std::byte* src = w.data + i * w.row_bytes + pc / block * block_bytes;
      if (pc + kc < k)
        prefetch_bytes(src + slice_bytes(pc), slice_bytes(pc + kc));
      else if (i < next_rows)
        prefetch_bytes(w.data + (i + R) * w.row_bytes, slice_bytes(0));
      decode_row_bf16(w.dtype, src, kc, lines[i]);
      lines[i][kc] = 0;
    }
    const uint16_t* wr[R];
    for (int i = 0; i < R; ++i) wr[i] = lines[std::min(i, rows - 1)];
    Tile<Q> t;
    for (int i = 0; i < R; ++i)
      for (int q = 0; q < Q; ++q) t.c[i][q] = _mm512_setzero_ps();
    const uint32_t* slice_panel = panel + pc / 2 * 32;
    for (int64_t kp = 0; kp < (kc + 1) / 2; ++kp) {
      __m512i b[Q];
#pragma GCC unroll 4
      for (int q = 0; q < Q; ++q) b[q] = _mm512_load_si512(slice_panel + (q / 2) * strip + kp * 32 + (q % 2) * 16);
#pragma GCC unroll 24
      for (int i = 0; i < R; ++i) {
        int32_t pair;
        std::memcpy(&pair, wr[i] + 2 * kp, 4);
        const __m512i av = _mm512_set1_epi32(pair);
#pragma GCC unroll 4
        for (int q = 0; q < Q; ++q) t.c[i][q] = vec::dpbf16<Native>(t.c[i][q], av, b[q]);
      }
    }
    for (int i = 0; i < R; ++i)
      for (int q = 0; q < Q; ++q) {
        float* sum = tile[i] + 16 * q;
        _mm512_storeu_ps(sum, pc == 0 ? t.c[i][q] : _mm512_add_ps(t.c[i][q], _mm512_loadu_ps(sum)));
      }
  }
}

// outᵀ tile rows n0 .. n0 + rows, columns m0 .. m0 + count, into out[m, n0 ..]: 16 m at a time through a
// register transpose, so that each output row gets one masked store.
template <int R>
void store_tile(const Problem& p, const float (*tile)[kMaxM], int64_t n0, int rows, int64_t m0, int64_t count) {
  const int64_t es = static_cast<int64_t>(dtype_block_bytes(p.out_dtype));
  const auto row_mask = static_cast<__mmask16>((1u << rows) - 1u);
  for (int64_t mb = 0; mb < count; mb += 16) {
    __m512 r[16];
    for (int i = 0; i < 16; ++i) r[i] = i < R ? _mm512_load_ps(tile[i] + mb) : _mm512_setzero_ps();
    transpose16(r);
    const int64_t n_m = std::min<int64_t>(16, count - mb);
    for (int64_t j = 0; j < n_m; ++j) {
      std::byte* o = p.out + ((m0 + mb + j) * p.ldo + n0) * es;
      if (p.out_dtype == DType::F32)
        _mm512_mask_storeu_ps(o, row_mask, r[j]);
      else  // bf16 (the small path runs only same-dtype f32 or bf16), rounded to nearest even
        _mm256_mask_storeu_epi16(o, row_mask, vec::to_bf16_rne(r[j]));
    }
  }
}

// Row n of W: in the Linear layout, or encoded.
const std::byte* w_row(const OperandB& b, int64_t n) {
  if (dtype_is_quantized(b.dtype)) return b.data + n * b.row_bytes;
  return b.data + n * b.sn * static_cast<int64_t>(dtype_block_bytes(b.dtype));
}

// One tile: W rows n0 .. n0 + rows against the panel columns m0 .. m0 + count (count <= 16·Q; panel points at
// the strip holding m0). next_rows: the rows of the tile after this one.
template <int Q>
void run_tile(const Problem& p, const std::byte* panel, int64_t strip, int64_t n0, int rows, int next_rows, int64_t m0,
              int64_t count) {
  alignas(64) float tile[Tile<Q>::R][kMaxM];
  const std::byte* w = w_row(p.b, n0);
  static const bool native = cpu_features().avx512_bf16;
  const auto* pairs = reinterpret_cast<const uint32_t*>(panel);
  if (dtype_is_quantized(p.b.dtype)) {
    OperandB tile_rows = p.b;
    tile_rows.data = w;
    (native ? tile_encoded<Q, true> : tile_encoded<Q, false>)(tile_rows, rows, next_rows, pairs, strip, p.k, tile);
  } else if (p.compute == Compute::F32) {
    tile_f32<Q>(reinterpret_cast<const float*>(w), p.b.sn, rows, reinterpret_cast<const float*>(panel), strip, p.k,
                tile);
  } else {
    (native ? tile_bf16<Q, true> : tile_bf16<Q, false>)(reinterpret_cast<const uint16_t*>(w), p.b.sn, rows, pairs,
                                                        strip, p.k, tile);
  }
  store_tile<Tile<Q>::R>(p, tile, n0, rows, m0, count);
}

// Columns [n_begin, n_end) of out. Blocks of `block_m` columns of m share each R rows of W (then still in L1).
void run_tiles(const Problem& p, const std::byte* panel, int64_t strip, int64_t n_begin, int64_t n_end, int r,
               int64_t block_m) {
  for (int64_t n0 = n_begin; n0 < n_end; n0 += r) {
    const int rows = static_cast<int>(std::min<int64_t>(r, n_end - n0));
    const int next_rows = static_cast<int>(std::clamp<int64_t>(n_end - n0 - r, 0, r));
    for (int64_t m0 = 0; m0 < p.m; m0 += block_m) {
      const int64_t count = std::min(block_m, p.m - m0);
      const std::byte* pm = panel + m0 / kNR * strip * 4;
      if (count <= 16)
        run_tile<1>(p, pm, strip, n0, rows, next_rows, m0, count);
      else
        run_tile<2>(p, pm, strip, n0, rows, next_rows, m0, count);
    }
  }
}

// With an epilogue: each group of up to 16 tiles of W rows is computed into an f32 buffer [M][group columns] (the
// results are kept in L1/L2), then the epilogue stores each of its M rows once.
void run_tiles_epilogue(const Problem& p, const std::byte* panel, int64_t strip, int64_t n_begin, int64_t n_end, int r,
                        int64_t block_m) {
  const int64_t group = 16 * static_cast<int64_t>(r);
  thread_local std::vector<float> buf;
  if (buf.size() < static_cast<size_t>(p.m * group)) buf.resize(static_cast<size_t>(p.m * group));
  for (int64_t g0 = n_begin; g0 < n_end; g0 += group) {
    const int64_t width = std::min(group, n_end - g0);
    Problem q = p;  // columns g0 .. g0 + width of p, stored as f32 in buf
    q.b.data = w_row(p.b, g0);
    q.n = width;
    q.out = reinterpret_cast<std::byte*>(buf.data());
    q.ldo = width;
    q.out_dtype = DType::F32;
    q.epilogue = nullptr;
    run_tiles(q, panel, strip, 0, width, r, block_m);
    for (int64_t m = 0; m < p.m; ++m) p.epilogue->store(p.epilogue_row0 + m, g0, width, buf.data() + m * width);
  }
}

class Panel {  // a 64-byte aligned buffer that only grows
 public:
  std::byte* get(int64_t bytes) {
    if (bytes > size_) {
      std::free(data_);
      data_ = static_cast<std::byte*>(std::aligned_alloc(64, static_cast<size_t>((bytes + 63) / 64 * 64)));
      LTX_CHECK(data_ != nullptr, "cpu", "matmul: out of memory for a ", bytes, "-byte panel");
      size_ = bytes;
    }
    return data_;
  }
  ~Panel() { std::free(data_); }

 private:
  std::byte* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace

bool small_m_applies(const Problem& p) {
  const bool same_dtype = (p.compute == Compute::F32 && p.a.dtype == DType::F32 && p.b.dtype == DType::F32) ||
                          (p.compute == Compute::BF16 && p.a.dtype == DType::BF16 && p.b.dtype == DType::BF16);
  // Encoded W with bf16 a: up to one block of m, so that each tile's rows are decoded once for all of M.
  const bool encoded =
      p.compute == Compute::BF16 && p.a.dtype == DType::BF16 && dtype_is_quantized(p.b.dtype) && p.m <= kBlockM;
  const int64_t strips = (p.m + kNR - 1) / kNR;
  return ((same_dtype && p.b.sk == 1) || encoded) && p.k > 0 && strips * units_of(p) * kNR * 4 <= kMaxPanelBytes;
}

void run_small_m(const Problem& p) {
  // aᵀ as a B operand: b(k, n = m) = a(m, k), packed by pack_b one 32-column strip at a time over all of K.
  Problem t = p;
  t.b = {p.a.data, p.a.dtype, p.a.sk, p.a.sm, 0};
  const int64_t strip = units_of(p) * kNR;  // 32-bit units per strip
  thread_local Panel panel_buf;
  std::byte* panel = panel_buf.get((p.m + kNR - 1) / kNR * strip * 4);
  for (int64_t s = 0; s * kNR < p.m; ++s)
    pack_b(t, 0, p.k, s * kNR, std::min<int64_t>(kNR, p.m - s * kNR), panel + s * strip * 4);

  const int64_t block_m = kBlockM;
  const int r = Tile<2>::R;
  const int64_t tiles = (p.n + r - 1) / r;
  // Below ~1 MFLOP the pool's wake-up costs more than a second thread saves.
  const bool tiny = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6;
  parallel_for(tiles, tiny ? tiles : 1, [&](int64_t begin, int64_t end) {
    if (p.epilogue != nullptr)
      run_tiles_epilogue(p, panel, strip, begin * r, std::min(p.n, end * r), r, block_m);
    else
      run_tiles(p, panel, strip, begin * r, std::min(p.n, end * r), r, block_m);
  });
}

}  // namespace ltx::cpu::gemm
