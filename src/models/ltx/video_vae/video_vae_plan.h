// Planned video decode memory (DESIGN.md principle 3): decode a latent whole, in temporal chunks that give the same
// numbers as the whole decode, or in spatial tiles blended linearly over their overlap as ltx-core's tiled decode
// does; a planner picks the cheapest of them whose compiled plan fits a memory budget, before anything runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/ltx/video_vae/video_vae.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::video_vae {

// Latent frames [in_begin, in_end) are decoded together; of the window's output, the global frames
// [keep_begin, keep_end) are kept. The window's local output frame 0 is global frame out_offset.
struct TemporalWindow {
  int64_t in_begin = 0, in_end = 0;
  int64_t keep_begin = 0, keep_end = 0;
  int64_t out_offset = 0;
};

// One spatial tile along one axis: latent [begin, end), and its blend weight per output pixel (length
// (end - begin) · scale): linear ramps over the overlap with each neighbour, 1 elsewhere.
struct SpatialTile {
  int64_t begin = 0, end = 0;
  std::vector<float> mask;
};

struct DecodeStrategy {
  enum class Kind : uint8_t { Whole, SplitBatch, Chunked, Tiled };
  Kind kind = Kind::Whole;         // the strongest measure taken (a tiled plan may also chunk time and split the batch)
  int64_t batch_per_run = 1;       // items decoded together; divides the batch
  int64_t chunk_frames = 0;        // latent frames kept per temporal window (all of them when not chunked)
  int64_t window_frames = 0;       // latent frames each window decodes: the chunk plus the convolutions' context
  int64_t tile_h = 0, tile_w = 0;  // latent tile size (the latent's when not tiled)
  int64_t tile_overlap = 0;        // latent rows/columns shared by neighbouring tiles
  size_t plan_peak_bytes = 0;      // Plan::peak_bytes() of the window graph, its conv steps' scratch included
  size_t output_bytes = 0;         // the decoded video, f32
  size_t staging_bytes = 0;        // the window's inputs (latent, noise) and the tiles' 1-D blend weights
  double work = 1.0;               // latent voxels decoded / latent voxels (recomputed context and overlap)

  size_t peak_bytes() const { return plan_peak_bytes + output_bytes + staging_bytes; }
  bool splits_batch(int64_t batch) const { return batch_per_run < batch; }
  std::string describe() const;
};

struct DecodePlannerOptions {
  int64_t tile_overlap = 2;  // latent units; ltx-core's default is 64 pixels = 2 latent pixels
};

// The decoded video's shape for a latent [B, C, F, H, W] (checked against the config).
Shape decoded_shape(const VideoDecoder& dec, const Shape& latent);
// Whether every layer is local in time (no normalisation over the whole tensor), so temporal chunks are exact.
bool temporally_local(const VideoDecoder& dec);
// Windows of equal length covering `latent_frames` in chunks of `chunk_frames`, each with the context its
// convolutions need so that its kept frames equal the whole decode's (checked by propagating which frames of
// every layer are exact).
std::vector<TemporalWindow> temporal_windows(const VideoDecoder& dec, int64_t latent_frames, int64_t chunk_frames);
// Tiles of equal size `tile` covering `size` latent pixels with at least `overlap` shared between neighbours
// (the last one shifted back to end at the edge), with blend masks at `scale` output pixels per latent pixel.
std::vector<SpatialTile> spatial_tiles(int64_t size, int64_t tile, int64_t overlap, int64_t scale);

// The decode graph for one window shape: inputs "latent" then dec.noise_inputs(window) in that order, output
// "video".
void build_window_graph(Graph& g, const VideoDecoder& dec, const Shape& window);

// A strategy with given parameters, priced by compiling its window graph without allocating the arena.
DecodeStrategy price_strategy(const Backend& backend, const VideoDecoder& dec, const Shape& latent,
                              int64_t batch_per_run, int64_t chunk_frames, int64_t tile_h, int64_t tile_w,
                              int64_t tile_overlap);
// The cheapest strategy whose peak fits `budget_bytes`: exact ones first (whole, split batch, temporal chunks,
// by work), then spatial tiles (by work). Throws naming the smallest peak when none fits.
DecodeStrategy plan_decode(const Backend& backend, const VideoDecoder& dec, const Shape& latent, size_t budget_bytes,
                           const DecodePlannerOptions& options = {});

// Decodes `latent` [B, C, F, H, W] with the strategy -> video [B, 3, F_out, H_out, W_out] (f32). `noise` holds
// the tensors dec.noise_inputs(latent.shape()) names, for the whole latent (timestep-conditioned decoders).
Tensor decode_video(const Backend& backend, const VideoDecoder& dec, const Tensor& latent,
                    const DecodeStrategy& strategy, const std::map<std::string, Tensor>& noise = {});

}  // namespace ltx::video_vae
