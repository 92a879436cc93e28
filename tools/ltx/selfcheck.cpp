// `ltx selfcheck [--backend NAME] [--xla-plugin FILE]`: every op through what the engine would run against the
// reference backend's plain kernel, on small odd-sized inputs. On the CPU backend that is the kernel it would pick (its
// step, a fused program for elementwise ops); on a whole-graph backend (xla), a one-op graph compiled and run by it.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "backend/backend.h"
#include "commands.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "graph/compile.h"

namespace ltx::cli {
namespace {

Tensor random(DType dtype, const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (auto& x : v) x = dist(rng);
  return Tensor::from_floats(dtype, shape, v);
}

struct Example {
  OpKind kind;
  OpAttrs attrs;
  std::vector<Tensor> inputs;
};

// One small call per op, odd sizes throughout.
std::vector<Example> examples() {
  const Tensor x = random(DType::F32, {2, 5, 7}, 1), y = random(DType::F32, {2, 5, 7}, 2);
  const Tensor pos = random(DType::F32, {2, 5, 7}, 3, 0.5f, 2.0f), ch = random(DType::F32, {5}, 4, 0.2f, 1.5f);
  std::vector<Example> e = {
      {OpKind::MatMul, MatMulAttrs{false, true}, {random(DType::F32, {33, 65}, 5), random(DType::BF16, {17, 65}, 6)}},
      {OpKind::Add, NoAttrs{}, {x, y}},
      {OpKind::Sub, NoAttrs{}, {x, y}},
      {OpKind::Mul, NoAttrs{}, {x, y}},
      {OpKind::Div, NoAttrs{}, {x, pos}},
      {OpKind::Lerp, NoAttrs{}, {x, y, pos}},
      {OpKind::Scale, ScaleAttrs{1.5f, -0.5f}, {x}},
      {OpKind::Clamp, ClampAttrs{-0.5f, 0.5f}, {x}},
      {OpKind::Silu, NoAttrs{}, {x}},
      {OpKind::Gelu, NoAttrs{}, {x}},
      {OpKind::GeluTanh, NoAttrs{}, {x}},
      {OpKind::Sigmoid, NoAttrs{}, {x}},
      {OpKind::Tanh, NoAttrs{}, {x}},
      {OpKind::LeakyRelu, LeakyReluAttrs{0.1f}, {x}},
      {OpKind::Snake, SnakeAttrs{false}, {x, ch}},
      {OpKind::SnakeBeta, SnakeAttrs{true}, {x, ch, ch}},
      {OpKind::Softmax, SoftmaxAttrs{0.7f}, {x}},
      {OpKind::RmsNorm, NormAttrs{1e-6f, NormWeight::OnePlus}, {x, random(DType::F32, {7}, 7)}},
      {OpKind::LayerNorm,
       NormAttrs{1e-5f, NormWeight::Plain, true},
       {x, random(DType::F32, {7}, 8), random(DType::F32, {7}, 9)}},
      {OpKind::GroupNorm, NormAttrs{1e-5f, NormWeight::None, false, 5}, {x}},
      {OpKind::PixelNorm, NormAttrs{1e-8f, NormWeight::None, false, 1, 1}, {x}},
      {OpKind::Attention,
       AttentionAttrs{},
       {random(DType::F32, {1, 4, 9, 8}, 10), random(DType::F32, {1, 2, 11, 8}, 11),
        random(DType::F32, {1, 2, 11, 8}, 12)}},
      {OpKind::Rope,
       RopeAttrs{RopeMode::SplitHalf},
       {random(DType::F32, {1, 2, 9, 8}, 13), random(DType::F32, {1, 2, 9, 4}, 14),
        random(DType::F32, {1, 2, 9, 4}, 15)}},
  };
  ConvAttrs conv;
  conv.spatial = 2;
  conv.pad_before = {1, 1, 0};
  conv.pad_after = {1, 1, 0};
  e.push_back({OpKind::Conv, conv, {random(DType::F32, {1, 3, 6, 7}, 16), random(DType::F32, {5, 3, 3, 3}, 17)}});
  ConvAttrs convt;
  convt.spatial = 1;
  convt.stride = {2, 1, 1};
  e.push_back({OpKind::ConvTranspose1d, convt, {random(DType::F32, {1, 3, 9}, 18), random(DType::F32, {3, 4, 3}, 19)}});
  e.push_back({OpKind::DepthToSpace, ResampleAttrs{2, {2, 2, 1}}, {random(DType::F32, {1, 8, 3, 5}, 20)}});
  e.push_back({OpKind::SpaceToDepth, ResampleAttrs{2, {2, 2, 1}}, {random(DType::F32, {1, 2, 6, 10}, 21)}});
  e.push_back({OpKind::UpsampleNearest, ResampleAttrs{2, {2, 3, 1}}, {random(DType::F32, {1, 2, 3, 5}, 22)}});
  e.push_back({OpKind::AntiAliasSnakeBeta,
               SnakeAttrs{true},
               {random(DType::F32, {1, 5, 37}, 24, -2.0f, 2.0f), ch, ch, random(DType::F32, {1, 1, 12}, 25),
                random(DType::F32, {1, 1, 12}, 26)}});
  e.push_back(
      {OpKind::Gather,
       NoAttrs{},
       {random(DType::F32, {11, 6}, 23), Tensor::from_ints(DType::I64, {4}, std::vector<int64_t>{3, 0, 10, 3})}});
  e.push_back({OpKind::Concat, AxisAttrs{1}, {x, y}});
  e.push_back({OpKind::Slice, SliceAttrs{2, 1, 6, 2}, {x}});
  PermuteAttrs perm;
  perm.rank = 3;
  perm.perm = {2, 0, 1};
  e.push_back({OpKind::Permute, perm, {x}});
  e.push_back({OpKind::Reshape, ReshapeAttrs{Shape{10, 7}}, {x}});
  PadAttrs pad;
  pad.before = {0, 1, 2};
  pad.after = {0, 2, 1};
  pad.mode = PadMode::Reflect;
  e.push_back({OpKind::Pad, pad, {x}});
  ReduceAttrs red;
  red.axes = {false, true, false};
  for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax, OpKind::ReduceMin})
    e.push_back({k, red, {x}});
  e.push_back({OpKind::Cast, CastAttrs{DType::BF16}, {x}});
  return e;
}

Tensor output_for(const Example& ex) {
  std::vector<TensorMeta> metas;
  for (const auto& t : ex.inputs) metas.push_back({t.dtype(), t.shape()});
  const TensorMeta m = infer_output(ex.kind, ex.attrs, metas);
  return Tensor::empty(m.dtype, m.shape);
}

// max |a − b| / max |b|: an error relative to the output's scale, meaningful near zero crossings too.
double max_rel_diff(const Tensor& a, const Tensor& b) {
  const auto x = a.to_floats(), y = b.to_floats();
  double worst = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::abs(double(x[i]) - y[i]));
    scale = std::max(scale, std::abs(double(y[i])));
  }
  return worst / std::max(scale, 1e-30);
}

// The example as a one-op graph of its inputs, compiled for a whole-graph backend and run.
void run_as_graph(const Backend& backend, const Example& ex, const Tensor& out) {
  Graph g;
  std::vector<Value> in;
  for (size_t i = 0; i < ex.inputs.size(); ++i)
    in.push_back(g.input("in" + std::to_string(i), ex.inputs[i].dtype(), ex.inputs[i].shape()));
  g.output(g.op(ex.kind, ex.attrs, in), "out");
  CompileOptions options;
  options.fuse = false;
  const auto plan = compile(g, backend, options);
  Tensor view = out;
  view.copy_from(plan->run(ex.inputs)[0]);
}

}  // namespace

int selfcheck(Args args) {
  std::string backend_name = "cpu", xla_plugin;
  for (size_t i = 0; i < args.size(); i += 2) {
    const std::string a = args[i];
    LTX_CHECK((a == "--backend" || a == "--xla-plugin") && i + 1 < args.size(), "selfcheck",
              "takes only --backend NAME and --xla-plugin FILE");
    (a == "--backend" ? backend_name : xla_plugin) = args[i + 1];
  }
  const Backend& backend = backend_named(backend_name, xla_plugin);
  const CpuFeatures& cpu = cpu_features();
  std::printf("ltx selfcheck: %s backend, %d threads; AVX-512 %s, AVX-512 BF16 %s, AVX-512 VNNI %s, AMX-BF16 %s\n",
              backend.name(), thread_count(), cpu.avx512 ? "yes" : "no", cpu.avx512_bf16 ? "yes" : "no",
              cpu.avx512_vnni ? "yes" : "no", cpu.amx_bf16 ? "yes" : "no");
  const auto list = examples();
  std::vector<bool> seen(kOpKindCount, false);
  int bad = 0;
  for (const Example& ex : list) {
    seen[static_cast<size_t>(ex.kind)] = true;
    Tensor expect = output_for(ex), got = output_for(ex);
    reference_backend().run(ex.kind, ex.attrs, ex.inputs, expect, {});
    const char* path = "dispatch";
    if (backend.steps() == nullptr) {
      run_as_graph(backend, ex, got);
      path = "graph";
    } else if (op_is_elementwise(ex.kind)) {
      FusedProgram p;
      p.n_leaves = static_cast<int>(ex.inputs.size());
      if (ex.kind == OpKind::Snake || ex.kind == OpKind::SnakeBeta) p.channel_leaves = ex.kind == OpKind::Snake ? 2 : 6;
      FusedInstr ins;
      ins.kind = ex.kind;
      ins.attrs = ex.attrs;
      ins.n_args = static_cast<int8_t>(ex.inputs.size());
      for (int i = 0; i < p.n_leaves; ++i) ins.args[i] = static_cast<int16_t>(i);
      p.instrs = {ins};
      backend.steps()->run(p, ex.inputs, got, {});
      path = "fused";
    } else {
      backend.steps()->run(ex.kind, ex.attrs, ex.inputs, got, {});
    }
    // The optimized GEMM sums in another order (K = 65 terms); everything else agrees to f32 rounding (XLA's
    // vectorized exp, tanh, erf and tree reductions included).
    const double tol = ex.kind == OpKind::MatMul ? 1e-5 : 1e-6;
    const double err = max_rel_diff(got, expect);
    const bool ok = err <= tol;
    bad += ok ? 0 : 1;
    std::printf("  %-4s %-18s %-8s rel err %.2e\n", ok ? "ok" : "FAIL", std::string(op_name(ex.kind)).c_str(), path,
                err);
  }
  for (int k = 0; k < kOpKindCount; ++k)
    if (!seen[static_cast<size_t>(k)]) {
      std::printf("  FAIL %-18s no self-check example\n", std::string(op_name(static_cast<OpKind>(k))).c_str());
      ++bad;
    }
  std::printf("selfcheck: %d ops, %d failed\n", kOpKindCount, bad);
  return bad == 0 ? 0 : 1;
}

}  // namespace ltx::cli
