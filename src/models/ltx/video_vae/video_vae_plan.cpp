// Decode strategies and the planner. Temporal chunks are exact by construction: every window carries the context
// frames its convolutions read (recomputed from the latent, not cached), and which output frames of a window equal
// the whole decode's is derived by walking the decoder's layers, never assumed. Spatial tiles follow ltx-core's
// tiled decode (ltx_core/model/video_vae/video_vae.py VideoDecoder.tiled_decode, split_with_symmetric_overlaps;
// tiling.py compute_trapezoidal_mask_1d): overlapping tiles, linear ramps, normalised by the summed weights.
#include "models/ltx/video_vae/video_vae_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "graph/compile.h"

namespace ltx::video_vae {
namespace {

// Which frames of a window are exact, in global frame indices at the current temporal resolution: the window
// holds [lo, hi) of n frames; [va, vb) equal the whole decode's.
struct FrameSpan {
  int64_t lo = 0, hi = 0, n = 0, va = 0, vb = 0;

  // A stride-1 temporal conv with replicated padding (video_vae_layers.h CausalConv3d): output t reads
  // [t - before, t + after]; a padded frame is exact only at the true ends of the video.
  void conv(int64_t kernel, bool causal) {
    const int64_t before = causal ? kernel - 1 : (kernel - 1) / 2, after = causal ? 0 : (kernel - 1) / 2;
    if (va > 0) va += before;
    if (vb < n) vb -= after;
    va = std::min(va, vb);
  }
  // DepthToSpaceUpsample with time stride 2 (sampling.py): frame i becomes 2i, 2i+1, then the first frame of the
  // tensor is dropped, so global frame i gives 2i-1 and 2i; the window drops its own first frame (global 2lo-1).
  void upsample2() {
    lo = 2 * lo;
    hi = 2 * hi - 1;
    n = 2 * n - 1;
    va = va == 0 ? 0 : std::max(2 * va - 1, lo);
    vb = 2 * vb - 1;
    va = std::min(va, vb);
  }
};

void walk_resnet(FrameSpan& s, const ResnetBlock& r, bool causal) {
  s.conv(r.conv1.kernel, causal);
  s.conv(r.conv2.kernel, causal);
}

// The exact output frames of a window decoding latent frames [lo, hi) of n.
FrameSpan exact_frames(const VideoDecoder& dec, int64_t lo, int64_t hi, int64_t n) {
  const bool causal = dec.config.causal_decoder;
  FrameSpan s{lo, hi, n, lo, hi};
  s.conv(dec.conv_in.kernel, causal);
  for (const Block& b : dec.up_blocks) {
    if (const auto* m = std::get_if<MidBlock>(&b)) {
      for (const ResnetBlock& r : m->res_blocks) walk_resnet(s, r, causal);
    } else if (const auto* r = std::get_if<ResnetBlock>(&b)) {
      walk_resnet(s, *r, causal);
    } else if (const auto* u = std::get_if<DepthToSpaceUp>(&b)) {
      s.conv(u->conv.kernel, causal);
      LTX_CHECK(u->stride[0] == 1 || u->stride[0] == 2, "video_vae", "temporal upsampling by ", u->stride[0]);
      if (u->stride[0] == 2) s.upsample2();
    }
  }
  s.conv(dec.conv_out.kernel, causal);
  return s;
}

int64_t time_factor(const VideoDecoder& dec) {
  int64_t t = 1;
  for (const Block& b : dec.up_blocks)
    if (const auto* u = std::get_if<DepthToSpaceUp>(&b)) t *= u->stride[0];
  return t;
}

int64_t space_factor(const VideoDecoder& dec, int axis) {  // axis 1: height, 2: width
  int64_t f = dec.config.patch_size;
  for (const Block& b : dec.up_blocks)
    if (const auto* u = std::get_if<DepthToSpaceUp>(&b)) f *= u->stride[static_cast<size_t>(axis)];
  return f;
}

// Output frames owned by latent frames [s, e): latent 0 gives frame 0, latent i > 0 gives (T(i-1), Ti].
std::pair<int64_t, int64_t> owned_frames(int64_t s, int64_t e, int64_t t) {
  return {s == 0 ? 0 : t * (s - 1) + 1, t * (e - 1) + 1};
}

bool window_covers(const VideoDecoder& dec, int64_t lo, int64_t hi, int64_t n, int64_t s, int64_t e) {
  const FrameSpan f = exact_frames(dec, lo, hi, n);
  const auto [kb, ke] = owned_frames(s, e, time_factor(dec));
  return f.va <= kb && ke <= f.vb;
}

std::vector<int64_t> divisors_descending(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = n; i >= 1; --i)
    if (n % i == 0) d.push_back(i);
  return d;
}

const char* kind_name(DecodeStrategy::Kind k) {
  switch (k) {
    case DecodeStrategy::Kind::Whole:
      return "whole";
    case DecodeStrategy::Kind::SplitBatch:
      return "split batch";
    case DecodeStrategy::Kind::Chunked:
      return "temporal chunks";
    case DecodeStrategy::Kind::Tiled:
      return "spatial tiles";
  }
  return "?";
}

}  // namespace

std::string DecodeStrategy::describe() const {
  std::ostringstream o;
  o << kind_name(kind) << ": " << batch_per_run << " item(s) per run, windows of " << window_frames
    << " latent frames keeping " << chunk_frames << ", tiles " << tile_h << "x" << tile_w << " (overlap "
    << tile_overlap << "), peak " << peak_bytes() << " bytes (plan " << plan_peak_bytes << ", output " << output_bytes
    << ", staging " << staging_bytes << "), work x" << work;
  return o.str();
}

Shape decoded_shape(const VideoDecoder& dec, const Shape& latent) {
  LTX_CHECK(latent.rank() == 5 && latent[1] == dec.config.latent_channels && latent[0] >= 1 && latent[2] >= 1 &&
                latent[3] >= 1 && latent[4] >= 1,
            "video_vae", "decoder expects a latent [B, ", dec.config.latent_channels, ", F, H, W], got ", latent.str());
  const int64_t t = time_factor(dec);
  return Shape{latent[0], dec.config.out_channels, t * (latent[2] - 1) + 1, latent[3] * space_factor(dec, 1),
               latent[4] * space_factor(dec, 2)};
}

bool temporally_local(const VideoDecoder& dec) {
  // A resnet block that changes width normalises its shortcut with GroupNorm(1) over (C, F, H, W).
  for (const Block& b : dec.up_blocks) {
    if (const auto* m = std::get_if<MidBlock>(&b)) {
      for (const ResnetBlock& r : m->res_blocks)
        if (r.shortcut_weight.defined()) return false;
    } else if (const auto* r = std::get_if<ResnetBlock>(&b)) {
      if (r->shortcut_weight.defined()) return false;
    }
  }
  return true;
}

std::vector<TemporalWindow> temporal_windows(const VideoDecoder& dec, int64_t latent_frames, int64_t chunk_frames) {
  const int64_t n = latent_frames;
  LTX_CHECK(n >= 1 && chunk_frames >= 1, "video_vae", "temporal chunks of ", chunk_frames, " over ", n, " frames");
  const int64_t c = std::min(chunk_frames, n);
  if (c < n)
    LTX_CHECK(temporally_local(dec), "video_vae",
              "this decoder normalises over whole tensors (GroupNorm shortcut): temporal chunks would not be exact");
  // Context before and after a chunk in the middle of a long video, found by widening until its frames are exact.
  const int64_t far = 4096;
  int64_t before = 0, after = 0;
  while (!window_covers(dec, far - before, far + c + far, far + c + far, far, far + c)) {
    LTX_CHECK(++before < far, "video_vae", "no finite temporal context makes a chunk exact");
  }
  while (!window_covers(dec, 0, far + c + after, 2 * far + c, far, far + c)) {
    LTX_CHECK(++after < far, "video_vae", "no finite temporal context makes a chunk exact");
  }
  const int64_t width = std::min(n, c + before + after);
  const int64_t t = time_factor(dec);
  std::vector<TemporalWindow> out;
  for (int64_t s = 0; s < n; s += c) {
    const int64_t e = std::min(n, s + c);
    const int64_t lo = std::clamp<int64_t>(s - before, 0, n - width);
    LTX_CHECK(window_covers(dec, lo, lo + width, n, s, e), "video_vae", "temporal window [", lo, ", ", lo + width,
              ") does not make latent frames [", s, ", ", e, ") exact");
    const auto [kb, ke] = owned_frames(s, e, t);
    out.push_back({lo, lo + width, kb, ke, t * lo});
  }
  return out;
}

std::vector<SpatialTile> spatial_tiles(int64_t size, int64_t tile, int64_t overlap, int64_t scale) {
  LTX_CHECK(size >= 1 && tile >= 1 && overlap >= 0 && scale >= 1, "video_vae", "spatial tiles of ", tile, " (overlap ",
            overlap, ") over ", size);
  std::vector<SpatialTile> tiles;
  if (tile >= size) {
    tiles.push_back({0, size, std::vector<float>(static_cast<size_t>(size * scale), 1.0f)});
    return tiles;
  }
  LTX_CHECK(overlap < tile, "video_vae", "tile overlap ", overlap, " must be below the tile size ", tile);
  // split_with_symmetric_overlaps: starts every (tile - overlap); here the last tile keeps the full size and
  // moves back to end at the edge, so that every tile has one shape (one plan, one arena).
  const int64_t stride = tile - overlap;
  const int64_t count = (size - overlap + stride - 1) / stride;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t b = std::min(i * stride, size - tile);
    tiles.push_back({b, b + tile, {}});
  }
  for (size_t i = 0; i < tiles.size(); ++i) {
    const int64_t len = tile * scale;
    const int64_t left = i == 0 ? 0 : (tiles[i - 1].end - tiles[i].begin) * scale;
    const int64_t right = i + 1 == tiles.size() ? 0 : (tiles[i].end - tiles[i + 1].begin) * scale;
    std::vector<float>& m = tiles[i].mask;
    m.assign(static_cast<size_t>(len), 1.0f);
    // compute_trapezoidal_mask_1d(left_starts_from_0=False): ramps k/(r+1), k = 1..r, never reaching 0.
    for (int64_t p = 0; p < std::min(left, len); ++p)
      m[static_cast<size_t>(p)] *= static_cast<float>(p + 1) / static_cast<float>(left + 1);
    for (int64_t q = 0; q < std::min(right, len); ++q)
      m[static_cast<size_t>(len - 1 - q)] *= static_cast<float>(q + 1) / static_cast<float>(right + 1);
  }
  return tiles;
}

void build_window_graph(Graph& g, const VideoDecoder& dec, const Shape& window) {
  const Value x = g.input("latent", DType::F32, window);
  DecoderNoise noise;
  for (const auto& [name, shape] : dec.noise_inputs(window)) {
    const Value v = g.input(name, DType::F32, shape);
    if (name == "noise.latent") {
      noise.latent = v;
    } else {
      noise.spatial[name] = v;
    }
  }
  g.output(dec.forward(x, noise), "video");
}

DecodeStrategy price_strategy(const Backend& backend, const VideoDecoder& dec, const Shape& latent,
                              int64_t batch_per_run, int64_t chunk_frames, int64_t tile_h, int64_t tile_w,
                              int64_t tile_overlap) {
  const Shape out = decoded_shape(dec, latent);
  const int64_t batch = latent[0], n = latent[2], h = latent[3], w = latent[4];
  LTX_CHECK(batch_per_run >= 1 && batch % batch_per_run == 0, "video_vae", batch_per_run,
            " items per run do not divide the batch of ", batch);
  DecodeStrategy s;
  s.batch_per_run = batch_per_run;
  s.chunk_frames = std::min(chunk_frames, n);
  s.tile_h = std::min(tile_h, h);
  s.tile_w = std::min(tile_w, w);
  s.tile_overlap = s.tile_h < h || s.tile_w < w ? tile_overlap : 0;
  const std::vector<TemporalWindow> windows = temporal_windows(dec, n, s.chunk_frames);
  s.window_frames = windows.front().in_end - windows.front().in_begin;
  const auto th = spatial_tiles(h, s.tile_h, s.tile_overlap, space_factor(dec, 1));
  const auto tw = spatial_tiles(w, s.tile_w, s.tile_overlap, space_factor(dec, 2));
  s.work = static_cast<double>(windows.size() * static_cast<size_t>(s.window_frames)) / static_cast<double>(n) *
           static_cast<double>(th.size() * static_cast<size_t>(s.tile_h)) / static_cast<double>(h) *
           static_cast<double>(tw.size() * static_cast<size_t>(s.tile_w)) / static_cast<double>(w);
  s.kind = s.tile_h < h || s.tile_w < w ? DecodeStrategy::Kind::Tiled
           : s.chunk_frames < n         ? DecodeStrategy::Kind::Chunked
           : batch_per_run < batch      ? DecodeStrategy::Kind::SplitBatch
                                        : DecodeStrategy::Kind::Whole;

  const Shape window{batch_per_run, latent[1], s.window_frames, s.tile_h, s.tile_w};
  Graph g;
  build_window_graph(g, dec, window);
  CompileOptions options;  // no LTX_DUMP here: dumped intermediates would change the peak
  options.allocate = false;
  s.plan_peak_bytes = compile(g, backend, options)->peak_bytes();
  s.output_bytes = static_cast<size_t>(out.numel()) * sizeof(float);
  size_t staging = static_cast<size_t>(window.numel()) * sizeof(float);
  for (const auto& [name, shape] : dec.noise_inputs(window)) staging += static_cast<size_t>(shape.numel()) * 4;
  if (s.kind == DecodeStrategy::Kind::Tiled)
    staging += static_cast<size_t>(out[3] + out[4]) * sizeof(float) * 2;  // summed 1-D weights and masks
  s.staging_bytes = staging;
  return s;
}

DecodeStrategy plan_decode(const Backend& backend, const VideoDecoder& dec, const Shape& latent, size_t budget_bytes,
                           const DecodePlannerOptions& options) {
  decoded_shape(dec, latent);  // checks the latent
  const int64_t batch = latent[0], n = latent[2], h = latent[3], w = latent[4];
  struct Candidate {
    int64_t b, c, th, tw;
    double work;
  };
  const auto work_of = [&](int64_t c, int64_t th, int64_t tw) {
    double f = 1.0;
    if (c < n) {
      const auto windows = temporal_windows(dec, n, c);
      f *= static_cast<double>(windows.size() * static_cast<size_t>(windows[0].in_end - windows[0].in_begin)) /
           static_cast<double>(n);
    }
    if (th < h)
      f *= static_cast<double>(spatial_tiles(h, th, options.tile_overlap, 1).size() * static_cast<size_t>(th)) /
           static_cast<double>(h);
    if (tw < w)
      f *= static_cast<double>(spatial_tiles(w, tw, options.tile_overlap, 1).size() * static_cast<size_t>(tw)) /
           static_cast<double>(w);
    return f;
  };
  const std::vector<int64_t> batches = divisors_descending(batch);
  const std::vector<int64_t> chunks = [&] {
    std::vector<int64_t> c{n};
    if (temporally_local(dec))
      for (int64_t i = n - 1; i >= 1; --i) c.push_back(i);
    return c;
  }();
  std::vector<Candidate> exact, tiled;
  for (int64_t c : chunks) {
    const double wk = work_of(c, h, w);
    for (int64_t b : batches) exact.push_back({b, c, h, w, wk});
  }
  // Tiles keep the latent's aspect ratio as ltx-core's _prepare_tiles does: the long side's tile size scaled.
  const int64_t long_side = std::max(h, w), min_tile = options.tile_overlap + 1;
  for (int64_t t = long_side - 1; t >= min_tile; --t) {
    const int64_t th = std::max(min_tile, static_cast<int64_t>(std::lround(static_cast<double>(t * h) / long_side)));
    const int64_t tw = std::max(min_tile, static_cast<int64_t>(std::lround(static_cast<double>(t * w) / long_side)));
    if (th >= h && tw >= w) continue;
    for (int64_t c : chunks) {
      const double wk = work_of(c, th, tw);
      for (int64_t b : batches) tiled.push_back({b, c, th, tw, wk});
    }
  }
  const auto by_work = [](const Candidate& a, const Candidate& b) {
    return a.work != b.work ? a.work < b.work : a.b > b.b;
  };
  std::stable_sort(exact.begin(), exact.end(), by_work);
  std::stable_sort(tiled.begin(), tiled.end(), by_work);
  size_t smallest = std::numeric_limits<size_t>::max();
  std::string smallest_desc;
  for (const auto* list : {&exact, &tiled}) {
    for (const Candidate& c : *list) {
      const DecodeStrategy s = price_strategy(backend, dec, latent, c.b, c.c, c.th, c.tw, options.tile_overlap);
      if (s.peak_bytes() <= budget_bytes) return s;
      if (s.peak_bytes() < smallest) {
        smallest = s.peak_bytes();
        smallest_desc = s.describe();
      }
    }
  }
  throw Error("video_vae",
              "no decode strategy fits the memory budget of " + std::to_string(budget_bytes) + " bytes for latent " +
                  latent.str() + "; the smallest is " + smallest_desc,
              ErrorCategory::OutOfMemory);
}

}  // namespace ltx::video_vae
