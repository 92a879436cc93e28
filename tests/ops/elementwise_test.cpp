// Elementwise ops against torch goldens (f32 and bf16, broadcasting, non-contiguous inputs) and their shape
// inference errors.
#include <cmath>

#include "golden_a.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Lerp, OpKind::Scale, OpKind::Clamp,
               OpKind::Silu, OpKind::Gelu, OpKind::GeluTanh, OpKind::Sigmoid, OpKind::Tanh, OpKind::LeakyRelu,
               OpKind::Snake, OpKind::SnakeBeta);

// f32: a handful of roundings plus one transcendental function whose libm and SLEEF (torch) implementations
// differ by a few ulp; 1e-5 relative is ~80 ulp, while a wrong constant or formula moves results by >= 1e-3.
constexpr Tolerance kF32{1e-6f, 1e-5f};

struct Case {
  const char* name;
  OpKind kind;
  OpAttrs attrs;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"add", OpKind::Add, NoAttrs{}},
      {"sub", OpKind::Sub, NoAttrs{}},
      {"mul", OpKind::Mul, NoAttrs{}},
      {"div", OpKind::Div, NoAttrs{}},
      {"lerp", OpKind::Lerp, NoAttrs{}},
      {"scale", OpKind::Scale, ScaleAttrs{2.5f, -0.75f}},
      {"clamp", OpKind::Clamp, ClampAttrs{-0.3f, 0.6f}},
      {"silu", OpKind::Silu, NoAttrs{}},
      {"gelu", OpKind::Gelu, NoAttrs{}},
      {"gelu_tanh", OpKind::GeluTanh, NoAttrs{}},
      {"sigmoid", OpKind::Sigmoid, NoAttrs{}},
      {"tanh", OpKind::Tanh, NoAttrs{}},
      {"leaky_relu", OpKind::LeakyRelu, LeakyReluAttrs{0.2f}},
      {"snake_log", OpKind::Snake, SnakeAttrs{true}},
      {"snake", OpKind::Snake, SnakeAttrs{false}},
      {"snake_beta_log", OpKind::SnakeBeta, SnakeAttrs{true}},
      {"snake_beta", OpKind::SnakeBeta, SnakeAttrs{false}},
  };
  return c;
}

const GoldenFile& golden() {
  static const GoldenFile g("elementwise");
  return g;
}

TEST(Elementwise, MatchesTorchInF32) {
  for (const Case& c : cases()) check_golden(golden(), c.name, c.kind, c.attrs, kF32);
}

TEST(Elementwise, MatchesTorchInBf16) {
  for (const Case& c : cases()) check_golden(golden(), std::string(c.name) + "_bf16", c.kind, c.attrs, kBf16);
}

TEST(Elementwise, BroadcastsOverEveryInput) {
  // add: [3,5,7] + [5,1]; sub: [1,7] - [3,5,7] (input 0 is the one broadcast); lerp: three shapes.
  EXPECT_EQ(golden().output("sub").shape(), (Shape{3, 5, 7}));
  const Tensor out = run_reference(OpKind::Lerp, NoAttrs{}, golden().inputs("lerp"));
  EXPECT_EQ(out.shape(), (Shape{3, 5, 7}));
}

TEST(Elementwise, OutputTakesInputZerosDtype) {
  const Tensor x = random_tensor(DType::BF16, Shape{2, 3}, 1);
  const Tensor bias = random_tensor(DType::F32, Shape{3}, 2);
  const Tensor out = run_reference(OpKind::Add, NoAttrs{}, {x, bias});
  EXPECT_EQ(out.dtype(), DType::BF16);
  // The sum is formed in f32 and rounded once: it equals bf16(f32(x) + bias) exactly.
  const auto xs = x.to_floats(), bs = bias.to_floats(), os = out.to_floats();
  for (size_t i = 0; i < os.size(); ++i) {
    const Tensor one = Tensor::from_floats(DType::BF16, Shape{1}, {xs[i] + bs[i % 3]});
    EXPECT_EQ(os[i], one.to_floats()[0]) << i;
  }
}

TEST(Elementwise, ClampKeepsNan) {
  const Tensor x = Tensor::from_floats(DType::F32, Shape{3}, {std::nanf(""), -5.0f, 5.0f});
  const auto out = run_reference(OpKind::Clamp, ClampAttrs{-1.0f, 1.0f}, {x}).to_floats();
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_EQ(out[2], 1.0f);
}

TEST(Elementwise, InferenceErrors) {
  const DType f = DType::F32;
  expect_infer_error(OpKind::Add, NoAttrs{}, {{f, {3, 4}}, {f, {5}}}, {"add", "[3, 4]", "[5]", "broadcast"});
  expect_infer_error(OpKind::Lerp, NoAttrs{}, {{f, {3}}, {f, {3}}}, {"lerp", "expects 3 inputs"});
  expect_infer_error(OpKind::Mul, NoAttrs{}, {{f, {3}}, {DType::I32, {3}}}, {"mul", "i32[3]"});
  expect_infer_error(OpKind::Silu, NoAttrs{}, {{DType::Q8_0, {32}}}, {"silu", "q8_0"});
  expect_infer_error(OpKind::Snake, SnakeAttrs{}, {{f, {2, 5, 7}}, {f, {7}}}, {"snake", "[5]", "[2, 5, 7]", "[7]"});
  expect_infer_error(OpKind::Snake, SnakeAttrs{}, {{f, {5}}, {f, {5}}}, {"snake", "[B, C, ...]"});
  expect_infer_error(OpKind::SnakeBeta, SnakeAttrs{}, {{f, {2, 5, 7}}, {f, {5}}, {f, {5, 1}}},
                     {"snake_beta", "[5, 1]"});
  expect_infer_error(OpKind::Clamp, ClampAttrs{1.0f, -1.0f}, {{f, {3}}}, {"clamp", "exceeds"});
  expect_infer_error(OpKind::Scale, NoAttrs{}, {{f, {3}}}, {"scale", "attribute"});
  expect_infer_error(OpKind::Tanh, NoAttrs{}, {{f, {3}}, {f, {3}}}, {"tanh", "expects 1 inputs"});
}

}  // namespace
}  // namespace ltx::test
