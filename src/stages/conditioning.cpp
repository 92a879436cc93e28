#include "stages/conditioning.h"

#include "core/error.h"

namespace ltx::stages {
namespace {

// Concatenates f32 tensors along `axis` (all other dims equal).
Tensor concat(const Tensor& a, const Tensor& b, int axis) {
  Shape shape = a.shape();
  const int64_t outer = [&] {
    int64_t n = 1;
    for (int i = 0; i < axis; ++i) n *= a.dim(i);
    return n;
  }();
  const std::vector<float> va = a.to_floats(), vb = b.to_floats();
  const size_t ra = va.size() / static_cast<size_t>(outer), rb = vb.size() / static_cast<size_t>(outer);
  std::vector<float> out;
  out.reserve(va.size() + vb.size());
  for (int64_t o = 0; o < outer; ++o) {
    out.insert(out.end(), va.begin() + static_cast<ptrdiff_t>(o * ra),
               va.begin() + static_cast<ptrdiff_t>((o + 1) * ra));
    out.insert(out.end(), vb.begin() + static_cast<ptrdiff_t>(o * rb),
               vb.begin() + static_cast<ptrdiff_t>((o + 1) * rb));
  }
  shape[axis] = a.dim(axis) + b.dim(axis);
  return Tensor::from_floats(DType::F32, shape, out);
}

Tensor filled(const Shape& shape, float value) {
  return Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), value));
}

VideoLatentShape shape_of(const Tensor& latent) {
  return {latent.dim(0), latent.dim(1), latent.dim(2), latent.dim(3), latent.dim(4)};
}

// One image conditions every item of a batch: a [1, ...] latent is repeated to the target's batch.
Tensor to_batch(const Tensor& latent, int64_t batch) {
  const Tensor x = latent.to(DType::F32);
  if (x.dim(0) == batch || x.dim(0) != 1) return x;
  Shape shape = x.shape();
  shape[0] = batch;
  return x.broadcast_to(shape).contiguous();
}

// latent_cond.py VideoConditionByLatentIndex (latent_idx 0): overwrite tokens [0, n) of latent, clean and mask.
void replace_first_frame(StreamState& s, const VideoCondition& c, const VideoLatentShape& target) {
  const Tensor image = to_batch(c.latent, target.batch);
  const VideoLatentShape cs = shape_of(image);
  LTX_CHECK(cs.batch == target.batch && cs.channels == target.channels && cs.height == target.height &&
                cs.width == target.width && cs.frames <= target.frames,
            "conditioning", "image latent ", c.latent.shape().str(), " does not fit the video latent ",
            target.shape().str());
  const Tensor tokens = video_to_tokens(image);  // [B, n, C]
  const int64_t n = tokens.dim(1), t = s.latent.dim(1), ch = s.latent.dim(2);
  std::vector<float> latent = s.latent.to_floats(), clean = s.clean.to_floats(), mask = s.denoise_mask.to_floats();
  const std::vector<float> tok = tokens.to_floats();
  for (int64_t b = 0; b < cs.batch; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < ch; ++k) {
        const float v = tok[static_cast<size_t>((b * n + i) * ch + k)];
        latent[static_cast<size_t>((b * t + i) * ch + k)] = v;
        clean[static_cast<size_t>((b * t + i) * ch + k)] = v;
      }
      mask[static_cast<size_t>(b * t + i)] = static_cast<float>(1.0 - c.strength);  // Python float, then f32
    }
  }
  s.latent = Tensor::from_floats(DType::F32, s.latent.shape(), latent);
  s.clean = Tensor::from_floats(DType::F32, s.clean.shape(), clean);
  s.denoise_mask = Tensor::from_floats(DType::F32, s.denoise_mask.shape(), mask);
}

// mask_utils.py update_attention_mask + build_attention_mask: the [B, N+M, N+M] mask after M tokens are appended
// to N (the first `noisy` of them generated): the old block kept (all 1 when there was none), the new tokens
// attending each other fully, generated <-> new at the item's weights (1 when it has none), earlier appended
// tokens <-> new at 0.
Tensor extended_attention_mask(const Tensor& existing, const std::vector<float>& weights, int64_t batch, int64_t n,
                               int64_t m, int64_t noisy) {
  LTX_CHECK(weights.empty() || weights.size() == 1 || static_cast<int64_t>(weights.size()) == m, "conditioning",
            "an attention mask has ", weights.size(), " values for ", m, " conditioning tokens");
  const auto cross = [&](int64_t j) {
    return weights.empty() ? 1.0f : weights[weights.size() == 1 ? 0 : static_cast<size_t>(j)];
  };
  const int64_t t = n + m;
  std::vector<float> out(static_cast<size_t>(batch * t * t), 0.0f);
  const std::vector<float> old = existing.defined() ? existing.to_floats() : std::vector<float>{};
  for (int64_t b = 0; b < batch; ++b) {
    float* o = out.data() + b * t * t;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) o[i * t + j] = old.empty() ? 1.0f : old[static_cast<size_t>((b * n + i) * n + j)];
    for (int64_t i = n; i < t; ++i)
      for (int64_t j = n; j < t; ++j) o[i * t + j] = 1.0f;
    for (int64_t i = 0; i < noisy; ++i)
      for (int64_t j = 0; j < m; ++j) {
        o[i * t + n + j] = cross(j);
        o[(n + j) * t + i] = cross(j);
      }
  }
  return Tensor::from_floats(DType::F32, {batch, t, t}, out);
}

// keyframe_cond.py VideoConditionByKeyframeIndex / reference_video_cond.py VideoConditionByReferenceLatent: append
// the tokens with pixel-coordinate positions (time in frames, fps 1; the causal fix at frame 0 and for references),
// then + frame, then / fps in f32, a reference's H and W then times its downscale factor.
void append_tokens(StreamState& s, const VideoCondition& c, const VideoLatentShape& target, double fps) {
  const Tensor latent = to_batch(c.latent, target.batch);
  const VideoLatentShape cs = shape_of(latent);
  LTX_CHECK(cs.batch == target.batch && cs.channels == target.channels, "conditioning", "conditioning latent ",
            c.latent.shape().str(), " does not fit the video latent ", target.shape().str());
  const bool reference = c.placement == Placement::Reference;
  const Tensor tokens = video_to_tokens(latent);                                                 // [B, n, C]
  std::vector<float> pos = video_positions(cs, 1.0, {}, reference || c.frame == 0).to_floats();  // [B, 3, n, 2]
  const int64_t n = tokens.dim(1);
  const auto fps_f = static_cast<float>(fps);
  const auto frame = static_cast<float>(reference ? 0 : c.frame);
  const auto scale = static_cast<float>(reference ? c.downscale_factor : 1);
  for (int64_t b = 0; b < cs.batch; ++b)
    for (int64_t axis = 0; axis < 3; ++axis)
      for (int64_t i = 0; i < n * 2; ++i) {
        float& v = pos[static_cast<size_t>((b * 3 + axis) * n * 2 + i)];
        v = axis == 0 ? (v + frame) / fps_f : v * scale;
      }
  const int64_t before = s.latent.dim(1);
  s.latent = concat(s.latent, tokens, 1);
  s.clean = concat(s.clean, tokens, 1);
  s.denoise_mask = concat(s.denoise_mask, filled({cs.batch, n, 1}, static_cast<float>(1.0 - c.strength)), 1);
  s.positions = concat(s.positions, Tensor::from_floats(DType::F32, {cs.batch, 3, n, 2}, pos), 2);
  if (!c.attention.empty() || s.attention_mask.defined())
    s.attention_mask = extended_attention_mask(s.attention_mask, c.attention, cs.batch, before, n, target.tokens());
}

}  // namespace

void apply_video_conditions(StreamState& state, const std::vector<VideoCondition>& conditions,
                            const VideoLatentShape& target, double fps) {
  for (const VideoCondition& c : conditions) {
    LTX_CHECK(c.latent.rank() == 5, "conditioning", "a conditioning latent must be [B, C, F, H, W], got ",
              c.latent.shape().str());
    LTX_CHECK(c.strength >= 0.0 && c.strength <= 1.0, "conditioning", "strength ", c.strength, " is outside [0, 1]");
    LTX_CHECK(c.placement != Placement::Reference || c.downscale_factor >= 1, "conditioning",
              "a reference's downscale factor must be at least 1, got ", c.downscale_factor);
    if (c.placement == Placement::ByFrame && c.frame == 0) {
      LTX_CHECK(c.attention.empty(), "conditioning", "an image replacing frame 0 appends no tokens to weigh");
      replace_first_frame(state, c, target);
    } else {
      append_tokens(state, c, target, fps);
    }
  }
}

Tensor drop_appended_tokens(const Tensor& latent, int64_t tokens) {
  if (latent.dim(1) == tokens) return latent;
  return latent.slice(1, 0, tokens).contiguous();
}

}  // namespace ltx::stages
