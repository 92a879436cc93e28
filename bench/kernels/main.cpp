// bench_kernels: our CPU kernels beside a vendor peer (oneDNN) measured in the same run, as a markdown table.
// Benchmark-only code (the oneDNN peers, the peak probe) lives here, outside the library.
// Each figure is the median of --reps timed runs after one warm-up; ours and the peer's runs alternate so that
// load from other processes hits both alike.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/matmul/onednn_matmul.h"
#include "backend/cpu/optimized.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "onednn_peers.h"
#include "peak.h"

namespace ltx::bench {
namespace {

struct Options {
  int reps = 5;
  bool quick = false;
  bool all_ops = false;  // time attention/conv through cpu::run even when only the reference kernel exists
  struct MKN {
    int64_t m, k, n;
  };
  std::vector<MKN> shapes;  // --shape M,K,N (repeatable): only these matmuls, bf16
};

Options parse(std::span<char* const> args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--reps" && i + 1 < args.size()) {
      o.reps = std::max(1, std::atoi(args[++i]));
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--all-ops") {
      o.all_ops = true;
    } else if (a == "--shape" && i + 1 < args.size()) {
      Options::MKN s{};
      LTX_CHECK(std::sscanf(args[++i], "%ld,%ld,%ld", &s.m, &s.k, &s.n) == 3 && s.m > 0 && s.k > 0 && s.n > 0, "bench",
                "--shape wants M,K,N (positive integers), got '", args[i], "'");
      o.shapes.push_back(s);
    } else {
      fail("bench", "unknown argument '" + std::string(a) +
                        "'; usage: bench_kernels [--reps N] [--quick] [--all-ops] [--shape M,K,N]...");
    }
  }
  return o;
}

// With one thread every kernel (ours inline, oneDNN on an OpenMP team of one) runs on the calling thread, so its
// CPU time is the kernel's time without the time other processes held the core: steadier on a shared machine.
// With more threads only the wall clock counts every thread's work.
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double seconds_of(const std::function<void()>& fn) {
  if (thread_count() == 1) {
    const double t0 = thread_cpu_seconds();
    fn();
    return thread_cpu_seconds() - t0;
  }
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median seconds of ours and peer, interleaved; a null `ours` is not timed.
std::pair<double, double> time_pair(int reps, const std::function<void()>& ours, const std::function<void()>& peer) {
  if (ours) ours();
  peer();
  std::vector<double> a, b;
  for (int r = 0; r < reps; ++r) {
    if (ours) a.push_back(seconds_of(ours));
    b.push_back(seconds_of(peer));
  }
  return {ours ? median(a) : 0.0, median(b)};
}

Tensor random_tensor(DType dt, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) x = dist(rng);
  return Tensor::from_floats(dt, shape, v);
}

struct Peaks {
  double f32 = 0, bf16 = 0;
  double of(DType t) const { return t == DType::F32 ? f32 : bf16; }
};

void print_row(const std::string& what, DType dt, double flops, double ours_s, double peer_s, const Peaks& peak,
               const std::string& note) {
  const double peer_gf = flops / peer_s / 1e9;
  if (ours_s <= 0) {
    std::printf("| %s | %s | not implemented | %.1f | - | - | %s |\n", what.c_str(), dtype_name(dt).data(), peer_gf,
                note.c_str());
  } else {
    const double ours_gf = flops / ours_s / 1e9;
    std::printf("| %s | %s | %.1f | %.1f | %.2f | %.0f%% | %s |\n", what.c_str(), dtype_name(dt).data(), ours_gf,
                peer_gf, ours_gf / peer_gf, 100.0 * ours_gf / peak.of(dt), note.c_str());
  }
  std::fflush(stdout);
}

// x [M, K] · W [N, K]ᵀ, the Linear layout of every weight in the models. "engine" is what cpu::run does
// (opt::try_matmul: our kernel, or oneDNN where it measured faster); the two peers are oneDNN reading the same
// W [N, K] in place on every call, and oneDNN with W reordered once into its own blocked layout (as an engine
// that keeps a second, reordered copy of its weights resident would).
void bench_matmul(const Options& o, const Peaks& peaks, int64_t m, int64_t k, int64_t n, DType dt) {
  const Tensor a = random_tensor(dt, Shape{m, k}, 1);
  const Tensor w = random_tensor(dt, Shape{n, k}, 2);
  const Tensor out = Tensor::empty(dt, Shape{m, n});
  const Tensor peer_out = Tensor::empty(dt, Shape{m, n});
  const MatMulAttrs attrs{false, true};
  const std::vector<Tensor> in{a, w};
  cpu::onednn::MatmulShape s;
  s.m = m, s.n = n, s.k = k, s.a = s.b = s.out = dt, s.lda = k, s.b_sk = 1, s.b_sn = k, s.ldo = n;
  const cpu::onednn::Matmul plain(s);
  s.packed_weights = true;
  cpu::onednn::Matmul packed(s);
  packed.set_weights(w.raw());
  cpu::gemm::Path path = cpu::gemm::Path::Blocked;
  LTX_CHECK(cpu::gemm::path_for(attrs, in, out, path), "bench", "try_matmul declines the call");
  const bool routed = path == cpu::gemm::Path::OneDNN;
  const auto [engine_s, plain_s] = time_pair(
      o.reps, [&] { LTX_CHECK(cpu::opt::try_matmul(attrs, in, out), "bench", "try_matmul declined the call"); },
      [&] { plain.run(a.raw(), w.raw(), peer_out.raw()); });
  const auto [own_s, packed_s] = time_pair(
      o.reps,
      routed ? std::function<void()>([&] { LTX_CHECK(cpu::gemm::matmul_own(attrs, in, out), "bench", "declined"); })
             : std::function<void()>(),
      [&] { packed.run(a.raw(), peer_out.raw()); });
  const double flops = 2.0 * m * n * k;
  const auto gf = [&](double sec) { return flops / sec / 1e9; };
  const std::string own = routed ? std::to_string(static_cast<int>(gf(own_s) + 0.5)) : "=";
  std::printf("| %ld×%ld·%ld×%ld | %s | %.0f | %s | %.0f | %.0f | **%.2f** | %.2f | %.0f%% | %s |\n",
              static_cast<long>(m), static_cast<long>(k), static_cast<long>(k), static_cast<long>(n),
              dtype_name(dt).data(), gf(engine_s), own.c_str(), gf(plain_s), gf(packed_s), plain_s / engine_s,
              packed_s / engine_s, 100.0 * gf(engine_s) / peaks.of(dt),
              routed                           ? "oneDNN (plain)"
              : path == cpu::gemm::Path::Panel ? "ours, panel"
                                               : "ours, blocked");
  std::fflush(stdout);
}

void bench_attention(const Options& o, const Peaks& peaks, int64_t tq, int64_t tk, DType dt) {
  const int64_t h = 32, d = 128;
  const Tensor q = random_tensor(dt, Shape{1, h, tq, d}, 3);
  const Tensor k = random_tensor(dt, Shape{1, h, tk, d}, 4);
  const Tensor v = random_tensor(dt, Shape{1, h, tk, d}, 5);
  const Tensor out = Tensor::empty(dt, Shape{1, h, tq, d});
  const Tensor peer_out = Tensor::empty(dt, Shape{1, h, tq, d});
  cpu::onednn::AttentionPeer peer(h, tq, tk, d, dt);
  const std::vector<Tensor> in{q, k, v};
  std::function<void()> ours;
  ours = [&] { cpu::run(OpKind::Attention, AttentionAttrs{}, in, out); };  // opt::try_attention
  const auto [ours_s, peer_s] = time_pair(o.reps, ours, [&] { peer.run(q.raw(), k.raw(), v.raw(), peer_out.raw()); });
  const std::string what = "attention " + std::to_string(tq) + "q×" + std::to_string(tk) + "k, 32×128";
  print_row(what, dt, 4.0 * h * tq * tk * d, ours_s, peer_s, peaks, "peer: matmul+softmax+matmul");
}

void bench_conv(const Options& o, const Peaks& peaks, DType dt) {
  const int64_t c = 1024, sp[3] = {4, 16, 24}, kern[3] = {3, 3, 3}, pad[3] = {1, 1, 1};
  const Tensor x = random_tensor(dt, Shape{1, c, sp[0], sp[1], sp[2]}, 6);
  const Tensor w = random_tensor(dt, Shape{c, c, 3, 3, 3}, 7);
  const Tensor out = Tensor::empty(dt, Shape{1, c, sp[0], sp[1], sp[2]});
  cpu::onednn::ConvPeer peer(c, c, sp, kern, pad, dt);
  peer.set_inputs(x.raw(), w.raw());
  ConvAttrs attrs;
  attrs.spatial = 3;
  attrs.pad_before = {1, 1, 1};
  attrs.pad_after = {1, 1, 1};
  const std::vector<Tensor> in{x, w};
  std::function<void()> ours;
  ours = [&] { cpu::run(OpKind::Conv, attrs, in, out); };  // opt::try_conv
  const auto [ours_s, peer_s] = time_pair(o.reps, ours, [&] { peer.run(); });
  const double flops = 2.0 * c * c * 27 * sp[0] * sp[1] * sp[2];
  print_row("conv3d 1024→1024 3×3×3 @4×16×24", dt, flops, ours_s, peer_s, peaks, "peer: oneDNN conv, own layouts");
}

}  // namespace

int run(std::span<char* const> args) {
  const Options o = parse(args);
  LTX_CHECK(cpu::gemm::avx512_available(), "bench", "this CPU lacks AVX-512; our GEMM does not run here");
  Peaks peaks;
  peaks.f32 = measure_peak_gflops(cpu::gemm::Compute::F32);
  peaks.bf16 = measure_peak_gflops(cpu::gemm::Compute::BF16);
  std::printf(
      "threads: %d for every kernel (ours: our pool; oneDNN: OpenMP set to the same count, called from "
      "the main thread, outside our pool); peak measured with independent FMA / vdpbf16ps chains (%s): f32 %.0f "
      "GFLOP/s, bf16 %.0f GFLOP/s; median of %d runs, ours and the peer's interleaved, timed by %s\n\n",
      thread_count(), cpu_features().avx512_bf16 ? "native" : "emulated: no AVX512_BF16", peaks.f32, peaks.bf16, o.reps,
      thread_count() == 1 ? "the thread's CPU time" : "the wall clock");
  std::printf(
      "x [M, K] · W [N, K]ᵀ (Linear layout). GFLOP/s of: engine = cpu::run's pick (route); own = our "
      "kernel when the route is oneDNN; plain = oneDNN reading W [N, K] in place per call; packed = oneDNN "
      "with W reordered once into its blocked layout.\n\n");
  std::printf(
      "| matmul | dtype | engine | own | oneDNN plain | oneDNN packed | engine/plain | engine/packed | "
      "engine %% of peak | route |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  using MKN = Options::MKN;
  if (!o.shapes.empty()) {
    for (const MKN& s : o.shapes) bench_matmul(o, peaks, s.m, s.k, s.n, DType::BF16);
    return 0;
  }
  const std::vector<MKN> shapes =
      o.quick ? std::vector<MKN>{{60, 640, 2048}, {256, 1024, 1024}}
              : std::vector<MKN>{
                    {1536, 4096, 4096}, {1536, 4096, 16384}, {1536, 16384, 4096}, {1024, 3840, 15360}, {60, 640, 2048}};
  for (DType dt : {DType::BF16, DType::F32})
    for (const MKN& s : shapes) bench_matmul(o, peaks, s.m, s.k, s.n, dt);
  std::printf("\n| case | dtype | ours GFLOP/s | peer GFLOP/s | ours/peer | ours %% of peak | note |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  if (o.quick) return 0;
  for (DType dt : {DType::BF16, DType::F32}) {
    bench_attention(o, peaks, 1536, 1536, dt);
    bench_attention(o, peaks, 1536, 1024, dt);
    bench_conv(o, peaks, dt);
  }
  return 0;
}

}  // namespace ltx::bench

int main(int argc, char** argv) {
  try {
    return ltx::bench::run(std::span<char* const>(argv + 1, static_cast<size_t>(argc - 1)));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_kernels: %s\n", e.what());
    return 1;
  }
}
