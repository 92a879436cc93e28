// Conv and ConvTranspose1d against F.conv1d/2d/3d (after F.pad in the case's mode), F.conv_transpose1d and
// ltx_core's CausalConv3d (goldens by tools/reference/make_op_goldens_b.py), and shape-inference errors.
#include "golden_b.h"
#include "op_test_util.h"

namespace ltx::test {
namespace {

LTX_COVERS_OPS(OpKind::Conv, OpKind::ConvTranspose1d);

constexpr PadMode Z = PadMode::Zeros, R = PadMode::Reflect, P = PadMode::Replicate;

struct Case {
  const char* name;
  OpKind kind;
  ConvAttrs attrs;
};

// The attributes of each case in make_op_goldens_b.py, written with ours.
std::vector<Case> cases() {
  ConvAttrs t1 = conv_attrs(1, {3, 1, 1}, {1, 1, 1}, {2, 0, 0}, {0, 0, 0}, {Z, Z, Z}, 1);
  t1.output_padding = 1;
  ConvAttrs t2 = conv_attrs(1, {2, 1, 1}, {2, 1, 1}, {1, 0, 0}, {0, 0, 0}, {Z, Z, Z}, 3);
  t2.output_padding = 1;
  return {
      {"conv1d", OpKind::Conv, conv_attrs(1, {2, 1, 1}, {1, 1, 1}, {1, 0, 0}, {1, 0, 0}, {Z, Z, Z}, 1)},
      {"conv1d_groups", OpKind::Conv, conv_attrs(1, {1, 1, 1}, {2, 1, 1}, {3, 0, 0}, {1, 0, 0}, {R, Z, Z}, 2)},
      {"conv2d", OpKind::Conv, conv_attrs(2, {2, 1, 1}, {1, 1, 1}, {1, 0, 0}, {1, 1, 0}, {P, P, Z}, 1)},
      {"conv2d_depthwise", OpKind::Conv, conv_attrs(2, {1, 1, 1}, {1, 2, 1}, {1, 2, 0}, {1, 2, 0}, {Z, Z, Z}, 4)},
      {"conv3d", OpKind::Conv, conv_attrs(3, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {Z, Z, Z}, 1)},
      {"conv2d_bf16", OpKind::Conv, conv_attrs(2, {1, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {R, R, Z}, 1)},
      // CausalConv3d(kernel 3, stride (1,2,2), zeros in space), causal: time pads 2 copies of frame 0 before and
      // nothing after; space pads kernel//2 zeros on each side (ltx_core/model/video_vae/convolution.py).
      {"causal_conv3d", OpKind::Conv, conv_attrs(3, {1, 2, 2}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1)},
      // CausalConv3d(kernel 3, reflect in space), non-causal: (k-1)/2 replicated edge frames on each side.
      {"causal_conv3d_reflect", OpKind::Conv, conv_attrs(3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {P, R, R}, 1)},
      {"conv_transpose1d", OpKind::ConvTranspose1d, t1},
      {"conv_transpose1d_groups", OpKind::ConvTranspose1d, t2},
  };
}

TEST(Conv, MatchesTorchGoldens) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string n = c.name;
    const Tensor x = golden_b("conv", n + ".x"), w = golden_b("conv", n + ".w");
    std::vector<Tensor> in{x, w};
    if (n != "conv1d_groups") in.push_back(golden_b("conv", n + ".b"));
    const Tensor expected = golden_b("conv", n + ".out");
    const bool bf16 = expected.dtype() == DType::BF16;
    const float atol = bf16 ? kBf16Atol : kF32Atol, rtol = bf16 ? kBf16Rtol : kF32Rtol;
    const Tensor out = run_reference(c.kind, c.attrs, in);
    EXPECT_EQ(out.dtype(), x.dtype());
    expect_close(out, expected, atol, rtol, "contiguous");
    std::vector<Tensor> strided;
    for (const Tensor& t : in) strided.push_back(non_contiguous(t));
    expect_close(run_reference(c.kind, c.attrs, strided), expected, atol, rtol, "non-contiguous");
  }
}

// A batch of one broadcast to two with a stride-0 view convolves each copy the same.
TEST(Conv, StrideZeroBatch) {
  const Tensor x = golden_b("conv", "conv2d_depthwise.x");  // [1, 4, 6, 5]
  const std::vector<Tensor> in{x.broadcast_to(Shape{2, 4, 6, 5}), golden_b("conv", "conv2d_depthwise.w"),
                               golden_b("conv", "conv2d_depthwise.b")};
  const ConvAttrs a = conv_attrs(2, {1, 1, 1}, {1, 2, 1}, {1, 2, 0}, {1, 2, 0}, {Z, Z, Z}, 4);
  const Tensor out = run_reference(OpKind::Conv, a, in);  // [2, 4, 6, 5]
  const Tensor expected = golden_b("conv", "conv2d_depthwise.out");
  expect_close(out.slice(0, 0, 1), expected, kF32Atol, kF32Rtol, "batch 0");
  expect_close(out.slice(0, 1, 2), expected, kF32Atol, kF32Rtol, "batch 1");
}

TEST(Conv, ShapeInference) {
  const ConvAttrs a = conv_attrs(3, {1, 2, 2}, {1, 1, 1}, {2, 1, 1}, {0, 1, 1}, {P, Z, Z}, 1);
  const std::vector<TensorMeta> in{{DType::BF16, {2, 3, 4, 5, 6}}, {DType::BF16, {4, 3, 3, 3, 3}}, {DType::F32, {4}}};
  const TensorMeta out = infer_output(OpKind::Conv, a, in);
  EXPECT_EQ(out.dtype, DType::BF16);
  EXPECT_EQ(out.shape, (Shape{2, 4, 4, 3, 3}));
}

TEST(Conv, ShapeInferenceErrors) {
  const ConvAttrs a1 = conv_attrs(1, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {Z, Z, Z}, 1);
  const TensorMeta x{DType::F32, {1, 4, 5}};
  expect_op_error(OpKind::Conv, a1, {x, {DType::F32, {2, 3, 3}}}, "groups");
  expect_op_error(OpKind::Conv, a1, {x, {DType::F32, {2, 4, 3}}, {DType::F32, {3}}}, "bias");
  expect_op_error(OpKind::Conv, a1, {x, {DType::F32, {2, 4, 6}}}, "larger than the padded input");
  expect_op_error(OpKind::Conv, a1, {x, {DType::F32, {2, 4, 3, 3}}}, "rank 3");
  ConvAttrs grouped = a1;
  grouped.groups = 3;
  expect_op_error(OpKind::Conv, grouped, {{DType::F32, {1, 6, 5}}, {DType::F32, {4, 2, 3}}}, "groups");
  ConvAttrs reflect = conv_attrs(1, {1, 1, 1}, {1, 1, 1}, {5, 0, 0}, {0, 0, 0}, {R, Z, Z}, 1);
  expect_op_error(OpKind::Conv, reflect, {x, {DType::F32, {2, 4, 3}}}, "reflect padding");
  ConvAttrs constant = a1;
  constant.pad_mode[0] = PadMode::Constant;
  expect_op_error(OpKind::Conv, constant, {x, {DType::F32, {2, 4, 3}}}, "pad mode");
  ConvAttrs zero_stride = a1;
  zero_stride.stride[0] = 0;
  expect_op_error(OpKind::Conv, zero_stride, {x, {DType::F32, {2, 4, 3}}}, "stride");
  ConvAttrs spatial4 = a1;
  spatial4.spatial = 4;
  expect_op_error(OpKind::Conv, spatial4, {x, {DType::F32, {2, 4, 3}}}, "spatial");

  ConvAttrs t = a1;
  t.stride[0] = 2;
  expect_op_error(OpKind::ConvTranspose1d, t, {x, {DType::F32, {3, 2, 3}}}, "groups");
  t.pad_after[0] = 1;
  expect_op_error(OpKind::ConvTranspose1d, t, {x, {DType::F32, {4, 2, 3}}}, "pad_after must be 0");
  t.pad_after[0] = 0;
  t.output_padding = 2;
  expect_op_error(OpKind::ConvTranspose1d, t, {x, {DType::F32, {4, 2, 3}}}, "output_padding");
  t.output_padding = 0;
  expect_op_error(OpKind::ConvTranspose1d, t, {x, {DType::F32, {4, 2, 3}}, {DType::F32, {4}}}, "bias");
  const std::vector<TensorMeta> ok{x, {DType::F32, {4, 2, 3}}, {DType::F32, {2}}};
  EXPECT_EQ(infer_output(OpKind::ConvTranspose1d, t, ok).shape, (Shape{1, 2, 11}));  // (5-1)·2 + 2 + 1
}

}  // namespace
}  // namespace ltx::test
