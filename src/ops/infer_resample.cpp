// Shape/dtype inference for DepthToSpace, SpaceToDepth and UpsampleNearest over 1-3 spatial dimensions, and for
// AntiAliasSnakeBeta (×2 up, activation, ×2 down: the shape of x).
#include <string>

#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {

TensorMeta resample(OpKind kind, const ResampleAttrs& a, Inputs in) {
  LTX_CHECK(in.size() == 1, "op", op_name(kind), ": expects 1 input, got ", in.size());
  const TensorMeta& x = in[0];
  LTX_CHECK(!dtype_is_quantized(x.dtype), "op", op_name(kind), ": x cannot be quantized (", dtype_name(x.dtype), ")");
  LTX_CHECK(a.spatial >= 1 && a.spatial <= 3, "op", op_name(kind), ": spatial must be 1, 2 or 3, got ", a.spatial);
  LTX_CHECK(x.shape.rank() == 2 + a.spatial, "op", op_name(kind), ": x must be [B, C, ", a.spatial,
            " spatial dims], got ", x.shape.str());
  int64_t block = 1;
  for (int i = 0; i < a.spatial; ++i) {
    LTX_CHECK(a.factor[static_cast<size_t>(i)] >= 1, "op", op_name(kind), ": factor ", i, " must be >= 1, got ",
              a.factor[static_cast<size_t>(i)]);
    block *= a.factor[static_cast<size_t>(i)];
  }
  Shape out = x.shape;
  switch (kind) {
    case OpKind::DepthToSpace:
      LTX_CHECK(x.shape[1] % block == 0, "op", op_name(kind), ": channels of x ", x.shape.str(),
                " are not a multiple of the block size ", block);
      out[1] = x.shape[1] / block;
      for (int i = 0; i < a.spatial; ++i) out[2 + i] *= a.factor[static_cast<size_t>(i)];
      break;
    case OpKind::SpaceToDepth:
      for (int i = 0; i < a.spatial; ++i)
        LTX_CHECK(x.shape[2 + i] % a.factor[static_cast<size_t>(i)] == 0, "op", op_name(kind), ": spatial dim ", i,
                  " of x ", x.shape.str(), " is not a multiple of its factor ", a.factor[static_cast<size_t>(i)]);
      out[1] = x.shape[1] * block;
      for (int i = 0; i < a.spatial; ++i) out[2 + i] /= a.factor[static_cast<size_t>(i)];
      break;
    case OpKind::UpsampleNearest:
      for (int i = 0; i < a.spatial; ++i) out[2 + i] *= a.factor[static_cast<size_t>(i)];
      break;
    default:
      fail("op", std::string(op_name(kind)) + ": not a resampling op");
  }
  return {x.dtype, out};
}

TensorMeta anti_alias_snake_beta(const SnakeAttrs&, Inputs in) {
  const std::string_view name = op_name(OpKind::AntiAliasSnakeBeta);
  LTX_CHECK(in.size() == 5, "op", name, ": expects x, alpha, beta, up filter, down filter; got ", in.size(), " inputs");
  const TensorMeta& x = in[0];
  LTX_CHECK(x.dtype == DType::F32 || x.dtype == DType::BF16, "op", name, ": x must be f32 or bf16, got ",
            dtype_name(x.dtype));
  LTX_CHECK(x.shape.rank() == 3 && x.shape[2] >= 1, "op", name, ": x must be [B, C, L], got ", x.shape.str());
  for (size_t i = 1; i < 5; ++i) {
    LTX_CHECK(dtype_is_float(in[i].dtype), "op", name, ": input ", i, " must be floating point, got ",
              dtype_name(in[i].dtype));
    if (i < 3)
      LTX_CHECK(in[i].shape.rank() == 1 && in[i].shape[0] == x.shape[1], "op", name, ": alpha and beta must be [",
                x.shape[1], "], got ", in[i].shape.str());
    else
      LTX_CHECK(in[i].shape.numel() >= 2 && in[i].shape.numel() % 2 == 0 &&
                    in[i].shape.numel() == in[i].shape[in[i].shape.rank() - 1],
                "op", name, ": the filters must have an even number of taps along one axis, got ", in[i].shape.str());
  }
  return x;
}

}  // namespace ltx::infer
