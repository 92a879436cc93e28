// Picks the kernel for a call: an optimized kernel when one handles this case on this CPU, else the reference.
// Each optimized family exposes `bool try_<family>(...)` returning false when it does not handle the call.
#include "backend/cpu/conv/conv1d_opt.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/optimized.h"
#include "backend/cpu/resample/anti_alias_opt.h"

namespace ltx::cpu {

void run(OpKind kind, const OpAttrs& attrs, Inputs inputs, const Tensor& out, PreparedSlot* prepared) {
  if (kind == OpKind::MatMul && opt::try_matmul(std::get<MatMulAttrs>(attrs), inputs, out)) return;
  if (kind == OpKind::Attention && opt::try_attention(std::get<AttentionAttrs>(attrs), inputs, out)) return;
  if (kind == OpKind::Rope && opt::try_rope(std::get<RopeAttrs>(attrs), inputs, out)) return;
  if (kind == OpKind::Conv && opt::try_conv1d_bf16(kind, std::get<ConvAttrs>(attrs), inputs, out)) return;
  if ((kind == OpKind::Conv || kind == OpKind::ConvTranspose1d) &&
      opt::try_conv(kind, std::get<ConvAttrs>(attrs), inputs, out, prepared))
    return;
  if (kind == OpKind::AntiAliasSnakeBeta && opt::try_anti_alias_snake_beta(std::get<SnakeAttrs>(attrs), inputs, out))
    return;
  if ((kind == OpKind::RmsNorm || kind == OpKind::LayerNorm) &&
      opt::try_norm(kind, std::get<NormAttrs>(attrs), inputs, out))
    return;
  if (kind == OpKind::Cast && opt::try_cast(std::get<CastAttrs>(attrs), inputs, out)) return;
  if (kind == OpKind::PixelNorm && opt::try_pixel_norm(std::get<NormAttrs>(attrs), inputs, out)) return;
  if ((kind == OpKind::Slice || kind == OpKind::Permute || kind == OpKind::Gather || kind == OpKind::Concat) &&
      opt::try_layout(kind, attrs, inputs, out))
    return;
  run_reference(kind, attrs, inputs, out);
}

}  // namespace ltx::cpu
