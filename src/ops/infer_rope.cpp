// Rope shape inference: x [..., T, D] with cos/sin broadcastable to x (interleaved) or to x[..., :D/2] (split
// half, ltx_core/model/transformer/rope.py: apply_split_rotary_emb) -> x's shape and dtype.
#include "core/error.h"
#include "ops/infer.h"

namespace ltx::infer {
namespace {

bool broadcasts_to(const Shape& s, const Shape& target) {
  if (s.rank() > target.rank()) return false;
  for (int i = 1; i <= s.rank(); ++i)
    if (s.dim(-i) != 1 && s.dim(-i) != target.dim(-i)) return false;
  return true;
}

}  // namespace

TensorMeta rope(const RopeAttrs& attrs, Inputs in) {
  LTX_CHECK(in.size() == 3, "op", "rope: expects x, cos, sin, got ", in.size(), " inputs");
  const Shape& x = in[0].shape;
  for (size_t i = 0; i < 3; ++i)
    LTX_CHECK(dtype_is_float(in[i].dtype), "op", "rope: input ", i, " must be f32, bf16 or f16, got ",
              dtype_name(in[i].dtype));
  LTX_CHECK(x.rank() >= 1 && x.dim(-1) % 2 == 0, "op", "rope: x ", x.str(), " needs an even last dimension");
  Shape table = x;
  if (attrs.mode == RopeMode::SplitHalf) table[x.rank() - 1] = x.dim(-1) / 2;
  const char* mode = attrs.mode == RopeMode::SplitHalf ? "split-half" : "interleaved";
  for (size_t i = 1; i < 3; ++i)
    LTX_CHECK(broadcasts_to(in[i].shape, table), "op", "rope (", mode, "): ", (i == 1 ? "cos " : "sin "),
              in[i].shape.str(), " does not broadcast to ", table.str(), " for x ", x.str());
  return in[0];
}

}  // namespace ltx::infer
