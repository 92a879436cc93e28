// The measurement behind the small-conv cost rule (conv_small_avx512.cpp): for each shape, the first call and the
// median of later calls on oneDNN (try_conv's oneDNN path: primitive made on the first call of a shape in this
// process, weights prepared into a kept slot as a plan step keeps them) and on the direct small-conv kernel, in
// production precision (f32 activations, bf16 weights, f32 bias and output). The shapes are the embedded default
// model's convolutions (video decoder, audio decoder, vocoder) and a few larger ones to find where oneDNN wins.
// Usage: bench_conv_small [REPS=15]   (milliseconds; run on an otherwise idle machine)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backend/cpu/conv/conv_opt.h"
#include "backend/cpu/conv/conv_small.h"
#include "core/openmp_env.h"
#include "ops/infer.h"

using namespace ltx;

namespace {

struct Spec {
  Shape x, w;  // [1, C, *S], [O, C, *K]
  ConvAttrs a;
};

ConvAttrs attrs(int sp, std::array<int64_t, 3> before, std::array<int64_t, 3> after, std::array<PadMode, 3> mode,
                int64_t dil = 1) {
  ConvAttrs a;
  a.spatial = sp;
  a.pad_before = before, a.pad_after = after, a.pad_mode = mode;
  a.dilation = {dil, dil, dil};
  return a;
}

Tensor random(DType dt, const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (float& x : v) x = u(rng);
  return Tensor::from_floats(dt, s, v);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  ensure_passive_openmp_wait(argv);  // as the ltx CLI runs oneDNN
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  constexpr auto Z = PadMode::Zeros, P = PadMode::Replicate;
  std::vector<Spec> specs;
  // Vocoder 1-D convs (BigVGAN-style resblocks: kernels 3/7/11, dilations 1/3/5 as pads show).
  for (const auto& [c, len] : std::vector<std::pair<int64_t, int64_t>>{{2, 16560}, {4, 8280}, {8, 4140}, {16, 828}})
    for (const int64_t k : {3, 7, 11})
      for (const int64_t d : {1, 5})
        specs.push_back({{1, c, len}, {c, c, k}, attrs(1, {d * (k - 1) / 2}, {d * (k - 1) / 2}, {Z}, d)});
  specs.push_back({{1, 128, 138}, {32, 128, 7}, attrs(1, {3}, {3}, {Z})});
  // Audio decoder 2-D (causal in time) and video decoder 3-D (causal: replicate 2 frames before).
  specs.push_back({{1, 16, 16, 16}, {16, 16, 3, 3}, attrs(2, {2, 1}, {0, 1}, {Z, Z})});
  specs.push_back({{1, 16, 67, 64}, {16, 16, 3, 3}, attrs(2, {2, 1}, {0, 1}, {Z, Z})});
  specs.push_back({{1, 8, 3, 4, 6}, {16, 8, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 8, 5, 8, 12}, {64, 8, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 8, 9, 16, 24}, {8, 8, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 4, 17, 16, 24}, {8, 4, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 2, 17, 32, 48}, {48, 2, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  // Larger: where oneDNN's per-call speed must win.
  specs.push_back({{1, 32, 5, 16, 24}, {32, 32, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 64, 5, 16, 24}, {64, 64, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 128, 5, 32, 48}, {128, 128, 3, 3, 3}, attrs(3, {2, 1, 1}, {0, 1, 1}, {P, Z, Z})});
  specs.push_back({{1, 32, 240000}, {32, 32, 7}, attrs(1, {3}, {3}, {Z})});
  specs.push_back({{1, 64, 30000}, {64, 64, 11}, attrs(1, {5}, {5}, {Z})});

  std::printf("| shape x -> O, kernel | MMAC | oneDNN first | oneDNN later | small first | small later | rule |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  uint32_t seed = 1;
  for (const Spec& s : specs) {
    std::vector<Tensor> in{random(DType::F32, s.x, seed), random(DType::BF16, s.w, seed + 1),
                           random(DType::F32, Shape{s.w[0]}, seed + 2)};
    seed += 3;
    std::vector<TensorMeta> metas;
    for (const Tensor& t : in) metas.push_back({t.dtype(), t.shape()});
    const TensorMeta m = infer::conv(OpKind::Conv, s.a, metas);
    Tensor out = Tensor::empty(m.dtype, m.shape);
    double macs = static_cast<double>(out.numel());
    for (int i = 1; i < s.w.rank(); ++i) macs *= static_cast<double>(s.w[i]);
    auto time = [&](auto&& call) {
      auto t0 = std::chrono::steady_clock::now();
      call();
      const double first = ms_since(t0);
      std::vector<double> later;
      for (int r = 0; r < reps; ++r) {
        t0 = std::chrono::steady_clock::now();
        call();
        later.push_back(ms_since(t0));
      }
      std::nth_element(later.begin(), later.begin() + reps / 2, later.end());
      return std::pair{first, later[static_cast<size_t>(reps / 2)]};
    };
    PreparedSlot dnnl_slot, small_slot;
    const auto dnnl =
        time([&] { cpu::opt::conv_with_path(cpu::opt::ConvPath::OneDnn, OpKind::Conv, s.a, in, out, &dnnl_slot); });
    const auto small = time([&] { cpu::opt::run_small_conv(s.a, in, out, &small_slot); });
    std::printf("| %s -> %lld, %s | %.2f | %.3f | %.3f | %.3f | %.3f | %s |\n", s.x.str().c_str(),
                static_cast<long long>(s.w[0]), s.w.str().c_str(), macs / 1e6, dnnl.first, dnnl.second, small.first,
                small.second, cpu::opt::small_conv_applies(s.a, in, out) ? "small" : "oneDNN");
  }
  return 0;
}
