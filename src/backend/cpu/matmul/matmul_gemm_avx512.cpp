// The AVX-512 GEMM driver: splits C over a tm×tn grid of threads (one parallel region, no barriers), and each
// thread runs the blocked loop nest of matmul_avx512.h over its own block. Its packing buffers and f32 partial
// sums come from the scratch a plan lends the step (kernel_scratch.h, one slice per grid task), else from
// grow-only thread-local buffers.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "backend/cpu/kernel_scratch.h"
#include "backend/cpu/matmul/matmul_avx512.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace ltx::cpu::gemm {
namespace {

std::atomic<int64_t> g_fallback_allocations{0};

// The grow-only fallback buffer, its allocations counted (fallback_allocations).
class Scratch {
 public:
  std::byte* get(int64_t bytes) {
    bool grew = false;
    std::byte* p = buffer_.get(bytes, &grew);
    if (grew) g_fallback_allocations.fetch_add(1, std::memory_order_relaxed);
    return p;
  }

 private:
  GrowOnlyBuffer buffer_;
};

struct Range {
  int64_t begin, end;
};

// Part i of `parts` of [0, n), cut at multiples of `unit`.
Range split(int64_t n, int64_t unit, int parts, int i) {
  const int64_t units = (n + unit - 1) / unit;
  return {std::min(n, units * i / parts * unit), std::min(n, units * (i + 1) / parts * unit)};
}

// Threads along M (tm) and N (tn), tm·tn = threads. Each thread packs its own A rows once per column block and
// its own B columns once, so the grid minimizes the duplicated packing tn·M + tm·N (in units of K).
void choose_grid(const Problem& p, int threads, int& tm, int& tn) {
  const int64_t strips_m = (p.m + kMR - 1) / kMR, strips_n = (p.n + kNR - 1) / kNR;
  tm = 1;
  tn = 1;
  int64_t best = -1;
  for (int a = 1; a <= threads; ++a) {
    if (threads % a != 0) continue;
    const int b = threads / a;
    if (a > strips_m || b > strips_n) continue;
    const int64_t cost = b * p.m + a * p.n;
    if (best < 0 || cost < best) {
      best = cost;
      tm = a;
      tn = b;
    }
  }
}

// Threads along M and N for p: one task when the problem is too small to wake the pool.
void grid_for(const Problem& p, int& tm, int& tn) {
  tm = tn = 1;
  // Below ~1 MFLOP the pool's wake-up costs more than the second thread saves.
  const bool tiny = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < 1e6;
  if (!tiny) choose_grid(p, thread_count(), tm, tn);
}

int64_t aligned64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// What run_block needs for a block of rows × cols of p: packed A (up to MC rows of KC), packed B (the NR-column
// strips of up to NC columns, KC deep) and, when the output needs f32 partial sums across KC slices or an epilogue
// takes them, f32 partials [rows][NC].
struct BlockScratch {
  int64_t a = 0, b = 0, c = 0;
  int64_t total() const { return aligned64(a) + aligned64(b) + aligned64(c); }
};

BlockScratch block_scratch(const Problem& p, int64_t rows, int64_t cols) {
  BlockScratch s;
  const int64_t nc_max = nc_for(p.compute);
  s.a = std::min(kMC, rows) * (a_strip_bytes(p.compute) / kMR);
  s.b = (std::min(nc_max, cols) + kNR - 1) / kNR * b_strip_bytes(p.compute);
  const bool epilogue = p.epilogue != nullptr;
  const bool f32_out = p.out_dtype == DType::F32 && !epilogue;
  const bool partials = epilogue || (!f32_out && p.k > kc_for(p.compute));
  if (partials) s.c = rows * nc_max * 4;
  return s;
}

// The largest block's scratch over the tm×tn grid: the size of each task's slice of a lent span.
int64_t task_scratch_bytes(const Problem& p, int tm, int tn) {
  int64_t rows = 0, cols = 0;
  for (int i = 0; i < tm; ++i) rows = std::max(rows, split(p.m, kMR, tm, i).end - split(p.m, kMR, tm, i).begin);
  for (int j = 0; j < tn; ++j) cols = std::max(cols, split(p.n, kNR, tn, j).end - split(p.n, kNR, tn, j).begin);
  return block_scratch(p, rows, cols).total();
}

void zero_output(const Problem& p, Range rows) {
  if (p.epilogue != nullptr) {  // zeros through the epilogue
    const std::vector<float> zeros(static_cast<size_t>(p.n), 0.0f);
    for (int64_t i = rows.begin; i < rows.end; ++i) p.epilogue->store(p.epilogue_row0 + i, 0, p.n, zeros.data());
    return;
  }
  const auto es = static_cast<size_t>(dtype_block_bytes(p.out_dtype));
  for (int64_t i = rows.begin; i < rows.end; ++i)
    std::memset(p.out + i * p.ldo * static_cast<int64_t>(es), 0, static_cast<size_t>(p.n) * es);
}

// `lent`: this task's slice of a lent span (at least task_scratch_bytes), or null for the thread-local buffers.
void run_block(const Problem& p, Range rows, Range cols, std::byte* lent) {
  if (rows.begin >= rows.end || cols.begin >= cols.end) return;
  const BlockScratch need = block_scratch(p, rows.end - rows.begin, cols.end - cols.begin);
  std::byte *a_buf, *b_buf, *c_bytes;
  if (lent != nullptr) {
    a_buf = lent;
    b_buf = a_buf + aligned64(need.a);
    c_bytes = b_buf + aligned64(need.b);
  } else {
    thread_local Scratch a_scratch, b_scratch, c_scratch;
    a_buf = a_scratch.get(need.a);
    b_buf = b_scratch.get(need.b);
    c_bytes = need.c > 0 ? c_scratch.get(need.c) : nullptr;
  }
  const int64_t kc_max = kc_for(p.compute);
  // Equal KC slices (K = 640: 2 x 320 rather than 512 + 128) so that no slice pays the tile overhead for little
  // depth; multiples of 16 keep packed rows aligned. Quantized weights keep KC: slices must be whole blocks.
  const int64_t slices = (p.k + kc_max - 1) / kc_max;
  const int64_t kc_step =
      dtype_is_quantized(p.b.dtype) ? kc_max : std::min(kc_max, ((p.k + slices - 1) / slices + 15) / 16 * 16);
  // An epilogue takes the f32 sums of each finished block from the partials buffer, so nothing is stored in out.
  const bool epilogue = p.epilogue != nullptr;
  const bool f32_out = p.out_dtype == DType::F32 && !epilogue;
  // f32 partial sums [rows][NC]: a non-f32 output summed over several KC slices, or an epilogue.
  const bool partials = need.c > 0;
  const int64_t nc_max = nc_for(p.compute);
  float* c_buf = partials ? reinterpret_cast<float*>(c_bytes) : nullptr;
  const int64_t out_es = static_cast<int64_t>(dtype_block_bytes(p.out_dtype));

  for (int64_t jc = cols.begin; jc < cols.end; jc += nc_max) {
    const int64_t nc = std::min(nc_max, cols.end - jc);
    for (int64_t pc = 0; pc < p.k; pc += kc_step) {
      const int64_t kc = std::min(kc_step, p.k - pc);
      const bool first = pc == 0, last = pc + kc >= p.k;
      pack_b(p, pc, kc, jc, nc, b_buf);
      for (int64_t ic = rows.begin; ic < rows.end; ic += kMC) {
        const int64_t mc = std::min(kMC, rows.end - ic);
        pack_a(p, ic, mc, pc, kc, a_buf);
        // Strips of equal height (60 rows: 5 x 12, not 4 x 14 + 4): a short strip reloads b for few rows.
        const int64_t height = (mc + (mc + kMR - 1) / kMR - 1) / ((mc + kMR - 1) / kMR);
        for (int64_t ir = 0; ir < mc; ir += height) {
          const int r = static_cast<int>(std::min<int64_t>(height, mc - ir));
          const std::byte* a_strip = a_buf + ir * a_strip_bytes(p.compute) / kMR;
          for (int64_t jr = 0; jr < nc; jr += kNR) {
            const int c = static_cast<int>(std::min<int64_t>(kNR, nc - jr));
            const std::byte* b_strip = b_buf + jr / kNR * b_strip_bytes(p.compute);
            const int64_t row = ic + ir, col = jc + jr;
            TileOut t;
            t.accumulate = !first;
            if (f32_out) {
              t.c = reinterpret_cast<float*>(p.out) + row * p.ldo + col;
              t.ldc = p.ldo;
            } else {
              if (partials) {
                t.c = c_buf + (row - rows.begin) * nc_max + jr;
                t.ldc = nc_max;
              }
              if (last && !epilogue) {
                t.out = p.out + (row * p.ldo + col) * out_es;
                t.ldo = p.ldo;
                t.out_dtype = p.out_dtype;
              }
            }
            if (p.compute == Compute::F32)
              kernel_f32(r, reinterpret_cast<const float*>(a_strip), reinterpret_cast<const float*>(b_strip), kc, c, t);
            else
              kernel_bf16(r, reinterpret_cast<const uint16_t*>(a_strip), reinterpret_cast<const uint16_t*>(b_strip), kc,
                          c, t);
          }
        }
        if (epilogue && last)  // the block's sums are final (and still in cache): the epilogue's single store
          for (int64_t i = ic; i < ic + mc; ++i)
            p.epilogue->store(p.epilogue_row0 + i, jc, nc, c_buf + (i - rows.begin) * nc_max);
      }
    }
  }
}

}  // namespace

void run_avx512(const Problem& p) {
  if (p.k == 0) {  // an empty sum: zeros
    zero_output(p, {0, p.m});
    return;
  }
  if (int8_applies(p)) {
    run_int8(p);
    return;
  }
  if (gemv_applies(p)) {
    run_gemv(p);
    return;
  }
  if (small_m_applies(p)) {
    run_small_m(p);
    return;
  }
  int tm = 1, tn = 1;
  grid_for(p, tm, tn);
  // Task t of the grid uses slice t of the span a plan lent this thread for the step: tasks run on one thread each
  // (or one after another inline), so slices are never shared, whichever threads run them.
  const KernelScratch lent = bound_kernel_scratch();
  const int64_t slice = task_scratch_bytes(p, tm, tn);
  std::byte* base = lent.data != nullptr && lent.bytes >= static_cast<size_t>(slice) * static_cast<size_t>(tm * tn)
                        ? lent.data
                        : nullptr;
  parallel_for(tm * tn, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int i = static_cast<int>(t) / tn, j = static_cast<int>(t) % tn;
      run_block(p, split(p.m, kMR, tm, i), split(p.n, kNR, tn, j), base != nullptr ? base + t * slice : nullptr);
    }
  });
}

int64_t scratch_bytes(const Problem& p) {
  if (p.k == 0) return 0;
  if (int8_applies(p)) return int8_scratch_bytes(p);
  if (gemv_applies(p) || small_m_applies(p)) return 0;
  int tm = 1, tn = 1;
  grid_for(p, tm, tn);
  return task_scratch_bytes(p, tm, tn) * tm * tn;
}

int64_t fallback_allocations() { return g_fallback_allocations.load(std::memory_order_relaxed); }

}  // namespace ltx::cpu::gemm
