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

// keyframe_cond.py VideoConditionByKeyframeIndex: append tokens with positions shifted by the frame index.
void append_keyframe(StreamState& s, const VideoCondition& c, const VideoLatentShape& target, double fps) {
  const Tensor latent = to_batch(c.latent, target.batch);
  const VideoLatentShape cs = shape_of(latent);
  LTX_CHECK(cs.batch == target.batch && cs.channels == target.channels, "conditioning", "keyframe latent ",
            c.latent.shape().str(), " does not fit the video latent ", target.shape().str());
  const Tensor tokens = video_to_tokens(latent);  // [B, n, C]
  // Pixel coordinates with time in frames (fps 1), the causal fix only at frame 0; then + frame, then / fps in f32.
  std::vector<float> pos = video_positions(cs, 1.0, {}, c.frame == 0).to_floats();  // [B, 3, n, 2]
  const int64_t n = tokens.dim(1);
  const auto fps_f = static_cast<float>(fps);
  for (int64_t b = 0; b < cs.batch; ++b)
    for (int64_t i = 0; i < n * 2; ++i) {
      float& v = pos[static_cast<size_t>(b * 3 * n * 2 + i)];
      v = (v + static_cast<float>(c.frame)) / fps_f;
    }
  const Tensor positions = Tensor::from_floats(DType::F32, {cs.batch, 3, n, 2}, pos);
  s.latent = concat(s.latent, tokens, 1);
  s.clean = concat(s.clean, tokens, 1);
  s.denoise_mask = concat(s.denoise_mask, filled({cs.batch, n, 1}, static_cast<float>(1.0 - c.strength)), 1);
  s.positions = concat(s.positions, positions, 2);
}

}  // namespace

void apply_video_conditions(StreamState& state, const std::vector<VideoCondition>& conditions,
                            const VideoLatentShape& target, double fps) {
  for (const VideoCondition& c : conditions) {
    LTX_CHECK(c.latent.rank() == 5, "conditioning", "a conditioning latent must be [B, C, F, H, W], got ",
              c.latent.shape().str());
    LTX_CHECK(c.strength >= 0.0 && c.strength <= 1.0, "conditioning", "strength ", c.strength, " is outside [0, 1]");
    if (c.frame == 0 && !c.as_keyframe) {
      replace_first_frame(state, c, target);
    } else {
      append_keyframe(state, c, target, fps);
    }
  }
}

Tensor drop_appended_tokens(const Tensor& latent, int64_t tokens) {
  if (latent.dim(1) == tokens) return latent;
  return latent.slice(1, 0, tokens).contiguous();
}

}  // namespace ltx::stages
