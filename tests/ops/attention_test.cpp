// Attention against F.scaled_dot_product_attention goldens (tools/reference/make_op_goldens_b.py), a long
// sequence against an exact double-precision softmax, and shape-inference errors.
#include <cmath>

#include "golden_b.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Attention);

struct Case {
  const char* name;
  AttentionAttrs attrs;
  bool mask;
};
constexpr Case kCases[] = {
    {"plain", {0.0f, false}, false},     {"gqa", {0.3f, false}, false},       {"key_padding_mask", {0.0f, false}, true},
    {"mask_2d", {0.0f, false}, true},    {"causal", {0.0f, true}, false},     {"causal_rect", {0.0f, true}, false},
    {"causal_mask", {0.0f, true}, true}, {"masked_row", {0.0f, false}, true}, {"many_blocks", {0.0f, false}, true},
    {"bf16", {0.0f, false}, false},
};

std::vector<Tensor> case_inputs(const std::string& n, bool mask) {
  std::vector<Tensor> in{golden_b("attention", n + ".q"), golden_b("attention", n + ".k"),
                         golden_b("attention", n + ".v")};
  if (mask) in.push_back(golden_b("attention", n + ".mask"));
  return in;
}

TEST(Attention, MatchesTorchGoldens) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::vector<Tensor> in = case_inputs(c.name, c.mask);
    const Tensor expected = golden_b("attention", std::string(c.name) + ".out");
    const bool bf16 = expected.dtype() == DType::BF16;
    const float atol = bf16 ? kBf16Atol : kF32Atol, rtol = bf16 ? kBf16Rtol : kF32Rtol;
    const Tensor out = run_reference(OpKind::Attention, c.attrs, in);
    EXPECT_EQ(out.dtype(), in[0].dtype());
    expect_close(out, expected, atol, rtol, "contiguous");

    std::vector<Tensor> strided;
    for (const Tensor& t : in) strided.push_back(non_contiguous(t));
    expect_close(run_reference(OpKind::Attention, c.attrs, strided), expected, atol, rtol, "non-contiguous");

    if (c.mask) {  // the mask as an explicit stride-0 view of the full score shape
      std::vector<Tensor> expanded = in;
      expanded[3] = in[3].broadcast_to(Shape{in[0].dim(0), in[0].dim(1), in[0].dim(2), in[1].dim(2)});
      expect_close(run_reference(OpKind::Attention, c.attrs, expanded), expected, atol, rtol, "stride-0 mask");
    }
  }
}

// A query row whose every key is masked gives zeros, as torch does, and no NaN leaks anywhere.
TEST(Attention, FullyMaskedRowIsZeroNotNaN) {
  const Tensor out = run_reference(OpKind::Attention, AttentionAttrs{}, case_inputs("masked_row", true));
  const std::vector<float> v = out.to_floats();  // [1,1,3,4]
  for (float x : v) EXPECT_FALSE(std::isnan(x));
  for (int d = 0; d < 4; ++d) EXPECT_EQ(v[4 + d], 0.0f) << "row 1 is fully masked";
  for (int d = 0; d < 4; ++d) EXPECT_NE(v[d], 0.0f) << "row 0 has live keys";
}

// Tq = Tk = 4096: the kernel streams key blocks with O(D + Dv + block) scratch per row (see attention_ref.cpp),
// never a [Tq, Tk] score matrix. Checked against an exact two-pass softmax in double on sampled rows.
TEST(Attention, LongSequenceMatchesExactSoftmax) {
  const int64_t t = 4096, d = 4;
  const Tensor q = random_tensor(DType::F32, {1, 1, t, d}, 31, -2.0f, 2.0f);
  const Tensor k = random_tensor(DType::F32, {1, 1, t, d}, 32, -2.0f, 2.0f);
  const Tensor v = random_tensor(DType::F32, {1, 1, t, d}, 33);
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const Tensor out = run_reference(OpKind::Attention, AttentionAttrs{0.0f, causal}, {q, k, v});
    const auto qv = q.to_floats(), kv = k.to_floats(), vv = v.to_floats(), ov = out.to_floats();
    for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{1000}, int64_t{2047}, int64_t{4095}}) {
      const int64_t n_keys = causal ? i + 1 : t;
      std::vector<double> s(static_cast<size_t>(n_keys));
      double mx = -INFINITY;
      for (int64_t j = 0; j < n_keys; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e) dot += double(qv[size_t(i * d + e)]) * kv[size_t(j * d + e)];
        s[size_t(j)] = dot / std::sqrt(double(d));
        mx = std::max(mx, s[size_t(j)]);
      }
      double denom = 0;
      std::vector<double> acc(size_t(d), 0.0);
      for (int64_t j = 0; j < n_keys; ++j) {
        const double p = std::exp(s[size_t(j)] - mx);
        denom += p;
        for (int64_t e = 0; e < d; ++e) acc[size_t(e)] += p * vv[size_t(j * d + e)];
      }
      // f32 accumulation over 4096 keys: relative error ~1e-6 on O(1) outputs.
      for (int64_t e = 0; e < d; ++e)
        EXPECT_NEAR(ov[size_t(i * d + e)], acc[size_t(e)] / denom, 2e-5) << "row " << i << " dim " << e;
    }
  }
}

TEST(Attention, ShapeInferenceErrors) {
  const AttentionAttrs a{};
  const TensorMeta q{DType::F32, {1, 4, 5, 8}}, k{DType::F32, {1, 2, 7, 8}}, v{DType::F32, {1, 2, 7, 6}};
  expect_op_error(OpKind::Attention, a, {q, k, v, {DType::F32, {1, 4, 5, 6}}}, "does not broadcast");
  expect_op_error(OpKind::Attention, a, {q, k, v, {DType::F32, {2, 1, 1, 7}}}, "does not broadcast");
  expect_op_error(OpKind::Attention, a, {q, {DType::F32, {1, 3, 7, 8}}, {DType::F32, {1, 3, 7, 6}}}, "multiple");
  expect_op_error(OpKind::Attention, a, {q, k, {DType::F32, {1, 1, 7, 6}}}, "multiple");
  expect_op_error(OpKind::Attention, a, {q, {DType::F32, {1, 2, 7, 4}}, v}, "head dims differ");
  expect_op_error(OpKind::Attention, a, {q, k, {DType::F32, {1, 2, 6, 6}}}, "lengths differ");
  expect_op_error(OpKind::Attention, a, {q, k, {DType::F32, {2, 2, 7, 6}}}, "batch sizes differ");
  expect_op_error(OpKind::Attention, a, {{DType::F32, {4, 5, 8}}, k, v}, "4-D");
  expect_op_error(OpKind::Attention, a, {q, k}, "expects q, k, v");
  expect_op_error(OpKind::Attention, AttentionAttrs{-1.0f, false}, {q, k, v}, "scale");

  const std::vector<TensorMeta> ok{{DType::BF16, {1, 4, 5, 8}}, k, v, {DType::F32, {5, 7}}};
  const TensorMeta out = infer_output(OpKind::Attention, a, ok);
  EXPECT_EQ(out.dtype, DType::BF16);
  EXPECT_EQ(out.shape, (Shape{1, 4, 5, 6}));
}

}  // namespace
}  // namespace ltx::test
