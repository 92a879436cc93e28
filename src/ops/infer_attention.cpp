// Attention shape inference: q [B,Hq,Tq,D], k [B,Hkv,Tk,D], v [B,Hkv,Tk,Dv], optional additive mask
// broadcastable to [B,Hq,Tq,Tk] -> [B,Hq,Tq,Dv].
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

TensorMeta attention(const AttentionAttrs& attrs, Inputs in) {
  LTX_CHECK(in.size() == 3 || in.size() == 4, "op", "attention: expects q, k, v and an optional mask, got ", in.size(),
            " inputs");
  const Shape& q = in[0].shape;
  const Shape& k = in[1].shape;
  const Shape& v = in[2].shape;
  const std::string shapes = "q " + q.str() + ", k " + k.str() + ", v " + v.str();
  LTX_CHECK(q.rank() == 4 && k.rank() == 4 && v.rank() == 4, "op", "attention: q, k, v must be 4-D, got ", shapes);
  for (size_t i = 0; i < in.size(); ++i)
    LTX_CHECK(dtype_is_float(in[i].dtype), "op", "attention: input ", i, " must be f32, bf16 or f16, got ",
              dtype_name(in[i].dtype));
  LTX_CHECK(k[0] == q[0] && v[0] == q[0], "op", "attention: batch sizes differ: ", shapes);
  LTX_CHECK(k[1] == v[1] && k[1] > 0 && q[1] % k[1] == 0, "op",
            "attention: query heads must be a multiple of the key/value heads (equal in k and v): ", shapes);
  LTX_CHECK(k[2] == v[2], "op", "attention: k and v lengths differ: ", shapes);
  LTX_CHECK(k[3] == q[3], "op", "attention: q and k head dims differ: ", shapes);
  LTX_CHECK(attrs.scale >= 0.0f, "op", "attention: scale must be >= 0 (0: 1/sqrt(D)), got ", attrs.scale);
  if (in.size() == 4) {
    const Shape scores{q[0], q[1], q[2], k[2]};
    LTX_CHECK(broadcasts_to(in[3].shape, scores), "op", "attention: mask ", in[3].shape.str(),
              " does not broadcast to the scores ", scores.str(), " (", shapes, ")");
  }
  return {in[0].dtype, Shape{q[0], q[1], q[2], v[3]}};
}

}  // namespace ltx::infer
