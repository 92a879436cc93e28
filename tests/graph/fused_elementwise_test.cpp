// The fused kernel against its unfused composition through the reference kernels.
#include "graph_test_util.h"

namespace ltx::test {
namespace {

FusedInstr instr(OpKind kind, std::initializer_list<int> args, OpAttrs attrs = NoAttrs{}) {
  FusedInstr i;
  i.kind = kind;
  i.attrs = attrs;
  i.n_args = static_cast<int8_t>(args.size());
  int k = 0;
  for (int a : args) i.args[k++] = static_cast<int16_t>(a);
  return i;
}

Tensor run_fused(const FusedProgram& p, std::vector<Tensor> leaves, DType dtype, const Shape& shape) {
  Tensor out = Tensor::empty(dtype, shape);
  cpu::run_fused(p, leaves, out);
  return out;
}

// (a + b) · sigmoid(c) with b broadcast over rows and c a non-contiguous view; 300 columns cross a block edge.
TEST(FusedElementwise, BroadcastAndStridedLeavesMatchTheComposition) {
  const Shape shape{3, 300};
  const Tensor a = random_tensor(DType::F32, shape, 1), b = random_tensor(DType::F32, {300}, 2);
  const Tensor c = random_tensor(DType::F32, {300, 3}, 3).transpose(0, 1);
  FusedProgram p;
  p.n_leaves = 3;
  p.instrs = {instr(OpKind::Add, {0, 1}), instr(OpKind::Sigmoid, {2}), instr(OpKind::Mul, {3, 4})};
  const Tensor got = run_fused(p, {a, b, c}, DType::F32, shape);
  const Tensor expect =
      ref(OpKind::Mul, NoAttrs{}, {ref(OpKind::Add, NoAttrs{}, {a, b}), ref(OpKind::Sigmoid, NoAttrs{}, {c})});
  EXPECT_LE(max_abs_diff(got, expect), 1e-6f);
}

// Every elementwise op, one at a time, in f32 and bf16.
TEST(FusedElementwise, EachOpMatchesItsReferenceKernel) {
  const Shape shape{2, 5, 33};
  const Tensor x = random_tensor(DType::F32, shape, 4, -3.0f, 3.0f),
               y = random_tensor(DType::F32, shape, 5, 0.5f, 2.0f);
  const Tensor t = random_tensor(DType::F32, shape, 6), alpha = random_tensor(DType::F32, {5}, 7, 0.2f, 1.5f);
  const Tensor beta = random_tensor(DType::F32, {5}, 8, 0.2f, 1.5f);
  struct Case {
    OpKind kind;
    OpAttrs attrs;
    std::vector<Tensor> in;
    uint32_t channel_leaves;
  };
  const std::vector<Case> cases = {
      {OpKind::Add, NoAttrs{}, {x, y}, 0},
      {OpKind::Sub, NoAttrs{}, {x, y}, 0},
      {OpKind::Mul, NoAttrs{}, {x, y}, 0},
      {OpKind::Div, NoAttrs{}, {x, y}, 0},
      {OpKind::Lerp, NoAttrs{}, {x, y, t}, 0},
      {OpKind::Scale, ScaleAttrs{-1.5f, 0.25f}, {x}, 0},
      {OpKind::Clamp, ClampAttrs{-1.0f, 0.5f}, {x}, 0},
      {OpKind::Silu, NoAttrs{}, {x}, 0},
      {OpKind::Gelu, NoAttrs{}, {x}, 0},
      {OpKind::GeluTanh, NoAttrs{}, {x}, 0},
      {OpKind::Sigmoid, NoAttrs{}, {x}, 0},
      {OpKind::Tanh, NoAttrs{}, {x}, 0},
      {OpKind::LeakyRelu, LeakyReluAttrs{0.1f}, {x}, 0},
      {OpKind::Snake, SnakeAttrs{false}, {x, alpha}, 2},
      {OpKind::Snake, SnakeAttrs{true}, {x, alpha}, 2},
      {OpKind::SnakeBeta, SnakeAttrs{true}, {x, alpha, beta}, 6},
  };
  for (DType dtype : {DType::F32, DType::BF16}) {
    for (const Case& c : cases) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < c.in.size(); ++i) in.push_back((c.channel_leaves >> i) & 1u ? c.in[i] : c.in[i].to(dtype));
      FusedProgram p;
      p.n_leaves = static_cast<int>(in.size());
      p.channel_leaves = c.channel_leaves;
      FusedInstr ins;
      ins.kind = c.kind;
      ins.attrs = c.attrs;
      ins.n_args = static_cast<int8_t>(in.size());
      for (int i = 0; i < p.n_leaves; ++i) ins.args[i] = static_cast<int16_t>(i);
      p.instrs = {ins};
      const Tensor got = run_fused(p, in, dtype, shape);
      const Tensor expect = ref(c.kind, c.attrs, in);
      // f32: same formula, libm differences only. bf16: both round the f32 result once; allow one bf16 ulp.
      const float tol = dtype == DType::F32 ? 2e-6f : 1.6e-2f;
      EXPECT_LE(max_abs_diff(got, expect), tol) << op_name(c.kind) << " " << dtype_name(dtype);
    }
  }
}

}  // namespace
}  // namespace ltx::test
