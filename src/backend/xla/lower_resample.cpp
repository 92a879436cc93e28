// DepthToSpace, SpaceToDepth and UpsampleNearest (backend/cpu/resample/resample_ref.cpp): exact moves of the
// operand's own elements, as reshapes, transposes and broadcasts; channel order (c, f0, f1, f2), f2 fastest.
#include "backend/xla/lower_ops.h"
#include "core/error.h"

namespace ltx::xla {

HloValue lower_resample(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& a = op.attrs_of<ResampleAttrs>();
  const HloValue& x = op.in[0];
  const int n = a.spatial;
  const int64_t batch = x.dims[0];
  // Dimensions [B, C, (S_d, f_d) for each d] <-> [B, C, f..., S...]
  const int64_t channels = op.kind == OpKind::DepthToSpace ? op.out.shape[1] : x.dims[1];  // without the factors
  std::vector<int64_t> interleaved = {batch, channels}, grouped = {batch, channels};
  std::vector<int> to_interleaved = {0, 1}, to_grouped = {0, 1};
  for (int d = 0; d < n; ++d) {
    const int64_t f = a.factor[static_cast<size_t>(d)];
    const int64_t s = op.kind == OpKind::DepthToSpace ? x.dims[static_cast<size_t>(2 + d)] : op.out.shape[2 + d];
    interleaved.push_back(s);
    interleaved.push_back(f);
    to_interleaved.push_back(2 + n + d);  // from grouped: S_d sits at 2 + n + d, f_d at 2 + d
    to_interleaved.push_back(2 + d);
    to_grouped.push_back(3 + 2 * d);  // from interleaved: f_d sits at 3 + 2d, S_d at 2 + 2d
  }
  for (int d = 0; d < n; ++d) grouped.push_back(a.factor[static_cast<size_t>(d)]);
  for (int d = 0; d < n; ++d) {
    grouped.push_back(interleaved[static_cast<size_t>(2 + 2 * d)]);
    to_grouped.push_back(2 + 2 * d);
  }
  switch (op.kind) {
    case OpKind::DepthToSpace:
      return b.reshape(b.transpose(b.reshape(x, grouped), to_interleaved), op.out_dims());
    case OpKind::SpaceToDepth:
      return b.reshape(b.transpose(b.reshape(x, interleaved), to_grouped), op.out_dims());
    case OpKind::UpsampleNearest: {
      std::vector<int64_t> mapping = {0, 1};
      std::vector<int64_t> dims = {batch, x.dims[1]};
      for (int d = 0; d < n; ++d) {
        mapping.push_back(2 + 2 * d);
        dims.push_back(x.dims[static_cast<size_t>(2 + d)]);
        dims.push_back(a.factor[static_cast<size_t>(d)]);
      }
      return b.reshape(b.broadcast_in_dim(x, dims, mapping), op.out_dims());
    }
    default:
      fail("xla", "not a resample op: " + std::string(op_name(op.kind)));
  }
}

}  // namespace ltx::xla
