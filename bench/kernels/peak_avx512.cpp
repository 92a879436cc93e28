// Measures the machine's multiply-add ceiling: every pool thread runs 24 independent accumulator chains (enough
// to cover the FMA latency on current cores), so the loop is bound by issue throughput alone.
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "backend/cpu/vec_avx512.h"
#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "peak.h"

namespace ltx::bench {
using cpu::gemm::Compute;
namespace {

constexpr int kChains = 24;
constexpr int64_t kIters = 4'000'000;

float spin_f32() {
  __m512 acc[kChains];
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-7f);
  for (auto& a : acc) a = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < kIters; ++i) {
#pragma GCC unroll 24
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], x, y);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}

// vdpbf16ps, or its AVX-512F emulation (the kernels' path) where the CPU has no AVX512_BF16.
template <bool Native>
float spin_bf16() {
  __m512 acc[kChains];
  const __m512i x = _mm512_set1_epi32(0x3f803f80);  // (1.0, 1.0)
  const __m512i y = _mm512_set1_epi32(0x33d633d6);  // tiny
  for (auto& a : acc) a = _mm512_setzero_ps();
  for (int64_t i = 0; i < kIters; ++i) {
#pragma GCC unroll 24
    for (int c = 0; c < kChains; ++c) acc[c] = cpu::vec::dpbf16<Native>(acc[c], x, y);
  }
  __m512 s = acc[0];
  for (int c = 1; c < kChains; ++c) s = _mm512_add_ps(s, acc[c]);
  return _mm512_reduce_add_ps(s);
}

}  // namespace

double measure_peak_gflops(Compute c) {
  const int threads = thread_count();
  const bool native = cpu_features().avx512_bf16;
  std::atomic<float> sink{0.0f};  // keeps the loops from being optimized away
  // The best of several trials: a ceiling is what the cores reach when nothing else is running on them.
  // On one thread the loop runs inline, and the thread's CPU time leaves out time other processes held the core.
  const auto now = [threads] {
    if (threads == 1) {
      timespec t{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
      return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  double seconds = 1e30;
  for (int trial = 0; trial < 7; ++trial) {
    const double t0 = now();
    parallel_for(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        sink.store(c == Compute::F32 ? spin_f32() : native ? spin_bf16<true>() : spin_bf16<false>());
    });
    seconds = std::min(seconds, now() - t0);
  }
  // Per instruction: 16 lanes x 1 multiply-add (f32) or 16 lanes x 2 multiply-adds (bf16 pairs), 2 flops each.
  const double flops_per_instr = c == Compute::F32 ? 32.0 : 64.0;
  return flops_per_instr * kChains * static_cast<double>(kIters) * threads / seconds / 1e9;
}

}  // namespace ltx::bench
