// Running a decode strategy: one compiled plan for the window shape (all windows and tiles share it, so the arena
// is allocated once), windows of latent and noise copied in, kept frames copied (or, for tiles, accumulated with
// their blend weights) into the output, which is normalised by the summed weights at the end as ltx-core's
// tiled_decode does (video_vae.py _accumulate_temporal_group_into_buffer).
#include <algorithm>

#include "core/error.h"
#include "graph/compile.h"
#include "models/ltx/video_vae/video_vae_plan.h"

namespace ltx::video_vae {
namespace {

// out[b0 + i, c, keep_begin.., y0 + y, x0 + x] (+)= win[i, c, keep_begin - offset.., y, x] · mh[y] · mw[x].
struct Placement {
  int64_t b0 = 0, y0 = 0, x0 = 0;
  int64_t keep_begin = 0, keep_end = 0, out_offset = 0;
  const float* mh = nullptr;  // null: copy without weights
  const float* mw = nullptr;
};

void place(Tensor& out, const Tensor& win, const Placement& p) {
  // win [b, C, Fw, th, tw] contiguous; out [B, C, F, H, W] contiguous.
  const Shape& os = out.shape();
  const Shape& ws = win.shape();
  float* o = out.data<float>();
  const float* v = win.data<float>();
  for (int64_t i = 0; i < ws[0]; ++i)
    for (int64_t c = 0; c < ws[1]; ++c)
      for (int64_t f = p.keep_begin; f < p.keep_end; ++f) {
        const int64_t lf = f - p.out_offset;
        for (int64_t y = 0; y < ws[3]; ++y) {
          float* orow = o + ((((p.b0 + i) * os[1] + c) * os[2] + f) * os[3] + p.y0 + y) * os[4] + p.x0;
          const float* vrow = v + (((i * ws[1] + c) * ws[2] + lf) * ws[3] + y) * ws[4];
          if (p.mh == nullptr) {
            std::copy(vrow, vrow + ws[4], orow);
          } else {
            const float wy = p.mh[y];
            for (int64_t x = 0; x < ws[4]; ++x) orow[x] += vrow[x] * wy * p.mw[x];
          }
        }
      }
}

std::vector<float> summed_weights(const std::vector<SpatialTile>& tiles, int64_t scale, int64_t length) {
  std::vector<float> sum(static_cast<size_t>(length), 0.0f);
  for (const SpatialTile& t : tiles)
    for (size_t p = 0; p < t.mask.size(); ++p) sum[static_cast<size_t>(t.begin * scale) + p] += t.mask[p];
  return sum;
}

}  // namespace

Tensor decode_video(const Backend& backend, const VideoDecoder& dec, const Tensor& latent, const DecodeStrategy& s,
                    const std::map<std::string, Tensor>& noise) {
  LTX_CHECK(latent.dtype() == DType::F32, "video_vae", "decode expects an f32 latent, got ", latent.describe());
  const Shape out_shape = decoded_shape(dec, latent.shape());
  const int64_t batch = latent.dim(0), n = latent.dim(2), h = latent.dim(3), w = latent.dim(4);
  LTX_CHECK(
      s.batch_per_run >= 1 && batch % s.batch_per_run == 0 && s.chunk_frames >= 1 && s.tile_h >= 1 && s.tile_w >= 1,
      "video_vae", "strategy (", s.describe(), ") does not fit latent ", latent.shape().str());
  // Noise: exactly the tensors the whole decode would read, at the whole latent's shapes.
  const auto needed = dec.noise_inputs(latent.shape());
  LTX_CHECK(noise.size() == needed.size(), "video_vae", "decoder needs ", needed.size(), " noise tensors, got ",
            noise.size());
  for (const auto& [name, shape] : needed) {
    const auto it = noise.find(name);
    LTX_CHECK(it != noise.end() && it->second.shape() == shape && it->second.dtype() == DType::F32, "video_vae",
              "noise '", name, "' must be f32", shape.str());
  }

  const std::vector<TemporalWindow> windows = temporal_windows(dec, n, s.chunk_frames);
  const int64_t wf = windows.front().in_end - windows.front().in_begin;
  const int64_t sy = out_shape[3] / h, sx = out_shape[4] / w;
  const auto tiles_h = spatial_tiles(h, s.tile_h, s.tile_overlap, sy);
  const auto tiles_w = spatial_tiles(w, s.tile_w, s.tile_overlap, sx);
  const bool tiled = tiles_h.size() > 1 || tiles_w.size() > 1;
  const int64_t th = tiles_h.front().end - tiles_h.front().begin, tw = tiles_w.front().end - tiles_w.front().begin;
  const Shape window{s.batch_per_run, latent.dim(1), wf, th, tw};

  Graph g;
  build_window_graph(g, dec, window);
  // Weights kept converted (one more copy of the conv weights, PreparedWeights) only when the same plan runs
  // several times AND memory is not what the strategy is about: a split batch. Chunks and tiles exist to save
  // memory, and a single run gains nothing, so those convert each conv's weights as it runs.
  CompileOptions options = CompileOptions::from_env();
  options.prepare_weights = s.kind == DecodeStrategy::Kind::SplitBatch;
  const std::unique_ptr<Plan> plan = compile(g, backend, options);
  const auto window_noise = dec.noise_inputs(window);

  Tensor out = Tensor::empty(DType::F32, out_shape);  // zero-filled: tiles accumulate into it
  std::vector<Tensor> inputs;
  for (int64_t b0 = 0; b0 < batch; b0 += s.batch_per_run)
    for (const TemporalWindow& tw_ : windows)
      for (const SpatialTile& ty : tiles_h)
        for (const SpatialTile& tx : tiles_w) {
          inputs.clear();
          const auto region = [&](const Tensor& t) {  // [B, C, F, H, W] -> this window
            return t.slice(0, b0, b0 + s.batch_per_run)
                .slice(2, tw_.in_begin, tw_.in_end)
                .slice(3, ty.begin, ty.end)
                .slice(4, tx.begin, tx.end)
                .contiguous();
          };
          inputs.push_back(region(latent));
          for (const auto& [name, shape] : window_noise) {
            const Tensor& full = noise.at(name);
            if (name == "noise.latent") {
              inputs.push_back(region(full));
            } else {  // [Hb, Wb] at the block's resolution
              const int64_t fy = full.dim(0) / h, fx = full.dim(1) / w;
              inputs.push_back(
                  full.slice(0, ty.begin * fy, ty.end * fy).slice(1, tx.begin * fx, tx.end * fx).contiguous());
            }
          }
          Tensor video = plan->run(inputs)[0];
          if (!video.is_contiguous()) video = video.contiguous();
          Placement p;
          p.b0 = b0;
          p.y0 = ty.begin * sy;
          p.x0 = tx.begin * sx;
          p.keep_begin = tw_.keep_begin;
          p.keep_end = tw_.keep_end;
          p.out_offset = tw_.out_offset;
          if (tiled) {
            p.mh = ty.mask.data();
            p.mw = tx.mask.data();
          }
          place(out, video, p);
        }
  if (tiled) {  // the tiles' weights are separable: sum over the grid = (sum over rows) · (sum over columns)
    const std::vector<float> wy = summed_weights(tiles_h, sy, out_shape[3]);
    const std::vector<float> wx = summed_weights(tiles_w, sx, out_shape[4]);
    float* o = out.data<float>();
    const int64_t planes = out_shape[0] * out_shape[1] * out_shape[2];
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t y = 0; y < out_shape[3]; ++y) {
        float* row = o + (pl * out_shape[3] + y) * out_shape[4];
        for (int64_t x = 0; x < out_shape[4]; ++x) row[x] /= wy[static_cast<size_t>(y)] * wx[static_cast<size_t>(x)];
      }
  }
  return out;
}

}  // namespace ltx::video_vae
