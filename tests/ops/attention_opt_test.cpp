// opt::try_attention (attention_opt_avx512.cpp, and attention_decode_avx512.cpp for a few f32 queries) against the
// reference kernel (attention_ref.cpp): odd sequence
// lengths that are multiples of no block (queries 48, keys 64, tiles 8), head dims 8/64/128 and odd ones,
// GQA, causal, masks of every broadcast shape (fully masked rows included), NaN rows, strided inputs, f32 and bf16.
//
// Tolerances. f32: both kernels sum the same f32 products in a different order and ours uses its own exp (rel.
// error < 1e-7), so outputs (convex combinations of v in [-1, 1]) differ by a few f32 ulps: 2e-6 + 1e-5·|ref|.
// bf16: q·k products are exact in both; ours rounds each probability to bf16 for vdpbf16ps (rel. <= 2^-9, so the
// output moves by at most 2^-9·max|v| ~ 0.002) and both round the output once to bf16, where a difference just
// before rounding can flip one bf16 ulp (2^-8·|y|): 4e-3 + 8e-3·|ref|.
#include <cmath>
#include <limits>

#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/optimized.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Attention);

enum class MaskKind { None, Key, Full, TwoD, MaskedRows };

struct Case {
  int64_t b, hq, hkv, tq, tk, d, dv;
  bool causal;
  MaskKind mask;
  float scale;
};

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Tensor make_mask(const Case& c, uint32_t seed) {
  switch (c.mask) {
    case MaskKind::Key: {  // [B, 1, 1, Tk]: padding keys set to -inf, the rest a bias
      std::vector<float> v = random_values(c.b * c.tk, seed, -2.0f, 2.0f);
      for (int64_t j = 0; j < c.b * c.tk; j += 3) v[static_cast<size_t>(j)] = kNegInf;
      return Tensor::from_floats(DType::F32, Shape{c.b, 1, 1, c.tk}, v);
    }
    case MaskKind::Full:
      return random_tensor(DType::F32, Shape{c.b, c.hq, c.tq, c.tk}, seed, -3.0f, 3.0f);
    case MaskKind::TwoD:
      return random_tensor(DType::F32, Shape{c.tq, c.tk}, seed, -3.0f, 3.0f);
    case MaskKind::MaskedRows: {  // [1, Hq, Tq, Tk]: every 5th query row sees no key at all
      std::vector<float> v = random_values(c.hq * c.tq * c.tk, seed, -1.0f, 1.0f);
      for (int64_t r = 0; r < c.hq * c.tq; ++r)
        if (r % 5 == 1)
          for (int64_t j = 0; j < c.tk; ++j) v[static_cast<size_t>(r * c.tk + j)] = kNegInf;
      return Tensor::from_floats(DType::F32, Shape{1, c.hq, c.tq, c.tk}, v);
    }
    default:
      return {};
  }
}

std::vector<Tensor> make_inputs(const Case& c, DType dt, uint32_t seed) {
  std::vector<Tensor> in{random_tensor(dt, Shape{c.b, c.hq, c.tq, c.d}, seed),
                         random_tensor(dt, Shape{c.b, c.hkv, c.tk, c.d}, seed + 1),
                         random_tensor(dt, Shape{c.b, c.hkv, c.tk, c.dv}, seed + 2)};
  if (c.mask != MaskKind::None) in.push_back(make_mask(c, seed + 3));
  return in;
}

// The layout the DiT produces: [B, T, H, D] from a Linear, viewed as [B, H, T, D].
Tensor heads_view(const Tensor& t) {
  Tensor bthd = Tensor::empty(t.dtype(), Shape{t.dim(0), t.dim(2), t.dim(1), t.dim(3)});
  bthd.copy_from(t.permute({0, 2, 1, 3}));
  return bthd.permute({0, 2, 1, 3});
}

void expect_opt_matches_ref(const Case& c, const std::vector<Tensor>& in, const char* what) {
  const AttentionAttrs attrs{c.scale, c.causal};
  const Tensor expected = run_reference(OpKind::Attention, attrs, in);
  Tensor out = output_for(OpKind::Attention, attrs, in);
  ASSERT_TRUE(cpu::opt::try_attention(attrs, in, out)) << what;
  const bool bf16 = in[0].dtype() == DType::BF16;
  expect_close(out, expected, bf16 ? 4e-3f : 2e-6f, bf16 ? 8e-3f : 1e-5f, what);
  // Fully masked rows must be exact zeros, as in the reference (not a mean of v, not NaN).
  const auto a = out.to_floats(), b = expected.to_floats();
  for (size_t i = 0; i < a.size(); ++i)
    if (b[i] == 0.0f) ASSERT_EQ(a[i], 0.0f) << what << " at " << i;
}

class AttentionOpt : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::gemm::avx512_available()) GTEST_SKIP() << "this CPU lacks AVX-512 with BF16; try_attention declines";
  }
};

const Case kCases[] = {
    // b  hq hkv  tq   tk    d   dv  causal mask              scale
    {1, 2, 2, 2, 3, 8, 8, false, MaskKind::None, 0.0f},
    {1, 3, 3, 50, 67, 8, 8, false, MaskKind::None, 0.0f},
    {2, 4, 2, 97, 131, 64, 64, false, MaskKind::None, 0.0f},        // GQA 2:1
    {1, 4, 1, 61, 200, 128, 128, false, MaskKind::Key, 0.0f},       // GQA 4:1, key mask
    {1, 2, 2, 130, 130, 128, 128, true, MaskKind::None, 0.0f},      // causal, square
    {1, 2, 2, 100, 70, 64, 64, true, MaskKind::None, 0.0f},         // causal, Tq > Tk
    {1, 2, 2, 45, 150, 64, 64, true, MaskKind::Full, 0.0f},         // causal, Tq < Tk, full mask
    {2, 2, 1, 53, 77, 24, 40, false, MaskKind::Full, 0.3f},         // Dv != D, explicit scale
    {1, 3, 3, 49, 65, 17, 33, false, MaskKind::TwoD, 0.0f},         // odd head dims, [Tq, Tk] mask
    {1, 2, 2, 51, 129, 64, 80, false, MaskKind::MaskedRows, 0.0f},  // fully masked rows
    {1, 2, 2, 33, 90, 64, 64, true, MaskKind::MaskedRows, 0.0f},
};

TEST_F(AttentionOpt, MatchesReferenceF32) {
  uint32_t seed = 10;
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "tq " << c.tq << " tk " << c.tk << " d " << c.d << " dv " << c.dv);
    std::vector<Tensor> in = make_inputs(c, DType::F32, seed += 10);
    expect_opt_matches_ref(c, in, "contiguous");
    std::vector<Tensor> strided = in;
    for (int i = 0; i < 3; ++i) strided[static_cast<size_t>(i)] = non_contiguous(in[static_cast<size_t>(i)]);
    expect_opt_matches_ref(c, strided, "last two axes swapped");
    for (int i = 0; i < 3; ++i) strided[static_cast<size_t>(i)] = heads_view(in[static_cast<size_t>(i)]);
    expect_opt_matches_ref(c, strided, "[B, T, H, D] viewed as heads");
    if (c.mask != MaskKind::None) {
      std::vector<Tensor> mask_bf16 = in;
      mask_bf16[3] = in[3].to(DType::BF16);
      expect_opt_matches_ref(c, mask_bf16, "bf16 mask");
    }
  }
}

TEST_F(AttentionOpt, MatchesReferenceBF16) {
  uint32_t seed = 500;
  for (const Case& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "tq " << c.tq << " tk " << c.tk << " d " << c.d << " dv " << c.dv);
    std::vector<Tensor> in = make_inputs(c, DType::BF16, seed += 10);
    expect_opt_matches_ref(c, in, "contiguous");
    std::vector<Tensor> strided = in;
    for (int i = 0; i < 3; ++i) strided[static_cast<size_t>(i)] = non_contiguous(in[static_cast<size_t>(i)]);
    expect_opt_matches_ref(c, strided, "last two axes swapped");
    for (int i = 0; i < 3; ++i) strided[static_cast<size_t>(i)] = heads_view(in[static_cast<size_t>(i)]);
    expect_opt_matches_ref(c, strided, "[B, T, H, D] viewed as heads");
  }
}

// A generation step's shapes, which the decode kernel takes (attention_decode_avx512.cpp: at most 4 f32 queries per
// head, the heads sharing a key/value head together, keys in chunks of 128 merged in order): one query against a KV
// cache with GQA 4:1 (Gemma 3 270M's), several chunks, causal with fewer queries than keys, odd head dims, masks of
// each kind and fully masked rows. bf16 inputs and transposed layouts fall to the flash kernel, checked above.
TEST_F(AttentionOpt, FewQueriesMatchReferenceF32) {
  const Case cases[] = {
      // b  hq hkv tq   tk    d   dv  causal mask               scale
      {1, 4, 1, 1, 385, 256, 256, false, MaskKind::Key, 0.0625f},
      {1, 4, 1, 1, 300, 256, 256, false, MaskKind::Full, 0.0f},
      {2, 2, 1, 3, 130, 64, 64, true, MaskKind::None, 0.0f},
      {1, 2, 2, 4, 129, 17, 33, false, MaskKind::TwoD, 0.0f},
      {1, 2, 2, 4, 257, 64, 80, false, MaskKind::MaskedRows, 0.0f},
      {1, 8, 2, 2, 1000, 128, 128, false, MaskKind::Key, 0.0f},
      {1, 1, 1, 1, 1, 8, 8, false, MaskKind::None, 0.0f},
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "hq " << c.hq << " tq " << c.tq << " tk " << c.tk << " d " << c.d);
    const std::vector<Tensor> in = make_inputs(c, DType::F32, seed += 10);
    expect_opt_matches_ref(c, in, "contiguous");
    std::vector<Tensor> heads = in;
    for (int i = 0; i < 3; ++i) heads[static_cast<size_t>(i)] = heads_view(in[static_cast<size_t>(i)]);
    expect_opt_matches_ref(c, heads, "[B, T, H, D] viewed as heads");
  }
  // A NaN score poisons its row only, in whichever chunk it falls.
  const Case c{1, 2, 1, 1, 300, 16, 16, false, MaskKind::Full, 0.0f};
  std::vector<Tensor> in = make_inputs(c, DType::F32, 3);
  std::vector<float> m = in[3].to_floats();
  m[300 + 200] = std::numeric_limits<float>::quiet_NaN();  // head 1, key 200 (the second chunk)
  in[3] = Tensor::from_floats(DType::F32, in[3].shape(), m);
  const AttentionAttrs attrs{};
  Tensor out = output_for(OpKind::Attention, attrs, in);
  ASSERT_TRUE(cpu::opt::try_attention(attrs, in, out));
  const auto a = out.to_floats();
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t d = 0; d < 16; ++d) EXPECT_EQ(std::isnan(a[static_cast<size_t>(h * 16 + d)]), h == 1);
}

// A NaN in the mask makes exactly its query row NaN, as in the reference; other rows are untouched.
TEST_F(AttentionOpt, NaNScorePoisonsOnlyItsRow) {
  const Case c{1, 1, 1, 20, 70, 16, 16, false, MaskKind::TwoD, 0.0f};
  std::vector<Tensor> in = make_inputs(c, DType::F32, 77);
  std::vector<float> m = in[3].to_floats();
  m[3 * 70 + 66] = std::numeric_limits<float>::quiet_NaN();  // row 3, in the second key block
  in[3] = Tensor::from_floats(DType::F32, Shape{20, 70}, m);
  const AttentionAttrs attrs{};
  Tensor out = output_for(OpKind::Attention, attrs, in);
  ASSERT_TRUE(cpu::opt::try_attention(attrs, in, out));
  const auto a = out.to_floats();
  for (int64_t i = 0; i < 20; ++i)
    for (int64_t d = 0; d < 16; ++d) EXPECT_EQ(std::isnan(a[static_cast<size_t>(i * 16 + d)]), i == 3);
}

// Mixed dtypes are left to the reference.
TEST_F(AttentionOpt, DeclinesMixedDtypes) {
  const Case c{1, 1, 1, 5, 5, 8, 8, false, MaskKind::None, 0.0f};
  std::vector<Tensor> in = make_inputs(c, DType::F32, 3);
  in[1] = in[1].to(DType::BF16);
  const AttentionAttrs attrs{};
  Tensor out = output_for(OpKind::Attention, attrs, in);
  EXPECT_FALSE(cpu::opt::try_attention(attrs, in, out));
}

// cpu::run reaches the optimized kernel and agrees with run_reference through the public dispatcher too.
TEST_F(AttentionOpt, DispatcherMatchesReference) {
  const Case c{1, 2, 2, 70, 70, 64, 64, true, MaskKind::Key, 0.0f};
  const std::vector<Tensor> in = make_inputs(c, DType::F32, 9);
  const AttentionAttrs attrs{0.0f, true};
  expect_close(run_dispatched(OpKind::Attention, attrs, in), run_reference(OpKind::Attention, attrs, in), 2e-6f, 1e-5f);
}

}  // namespace
}  // namespace ltx::test
