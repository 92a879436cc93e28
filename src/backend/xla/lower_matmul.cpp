// MatMul (backend/cpu/matmul/matmul_ref.cpp): f32 products summed in f32, one rounding. b may be an 8-bit float
// weight (the checkpoint's scale is a separate op); batch dimensions broadcast. When both operands are bf16 (an 8-bit
// float weight widens to bf16 exactly) the dot takes them as they are with an f32 result: the same exact products
// and f32 sums, without an f32 copy of the weight (2x its bf16 size, 4x an fp8 one's) in the program's temps.
#include "backend/xla/lower_ops.h"

namespace ltx::xla {

HloValue lower_matmul(const OpLowering& op) {
  HloBuilder& b = op.b;
  const auto& attrs = op.attrs_of<MatMulAttrs>();
  auto is_8bit_float = [](DType t) { return t == DType::F8_E4M3 || t == DType::F8_E5M2; };
  const bool in_bf16 = op.in_metas[0].dtype == DType::BF16 &&
                       (op.in_metas[1].dtype == DType::BF16 || is_8bit_float(op.in_metas[1].dtype));
  HloValue lhs = in_bf16 ? op.in[0] : op.f32(0), rhs = in_bf16 ? b.convert(op.in[1], "bf16") : op.f32(1);
  const int64_t lhs_k = attrs.transpose_a ? lhs.rank() - 2 : lhs.rank() - 1;
  if (rhs.rank() == 2) {  // a weight shared by every batch: lhs's leading dimensions stay free
    const int64_t lk[] = {lhs_k}, rk[] = {attrs.transpose_b ? 1 : 0};
    return op.result(b.dot_general(lhs, rhs, {}, {}, lk, rk, "f32"));
  }
  std::vector<int64_t> batch(op.out.shape.begin(), op.out.shape.end() - 2);
  auto with_batch = [&](const HloValue& v) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), v.dims.end() - 2, v.dims.end());
    return b.broadcast_to(v, dims);
  };
  lhs = with_batch(lhs);
  rhs = with_batch(rhs);
  std::vector<int64_t> batch_axes;
  for (size_t i = 0; i < batch.size(); ++i) batch_axes.push_back(static_cast<int64_t>(i));
  const int64_t nb = static_cast<int64_t>(batch.size());
  const int64_t lk[] = {attrs.transpose_a ? nb : nb + 1}, rk[] = {attrs.transpose_b ? nb + 1 : nb};
  return op.result(b.dot_general(lhs, rhs, batch_axes, batch_axes, lk, rk, "f32"));
}

}  // namespace ltx::xla
