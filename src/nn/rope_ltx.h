// LTX's fractional-position rotary tables, ltx_core/model/transformer/rope.py:precompute_freqs_cis.
//   N = dim / (2·n_axes) frequencies g[k] = (π/2)·theta^(k/(N-1)) (a float64 grid, generate_freq_grid_np, or
//   torch's float32 linspace/pow, generate_freq_grid_pytorch, rounded as torch's CPU kernels round them), then per
//   token and axis a frac_a = pos_a / max_pos[a] (pos = midpoint of [start, end) or start), angle[k·n + a] =
//   g[k]·(2·frac_a − 1). Split: cos/sin of the angles, padded at the front to dim/2 with (1, 0), laid out per head: [B,
//   H, T, dh/2]. Interleaved: each angle repeated twice, padded at the front to dim with (1, 0): [B, T, dim].
// Everything after the grid is f32 in torch's order, as the reference computes it.
#pragma once

#include <vector>

#include "core/tensor.h"
#include "core/torch_cpu_math.h"
#include "graph/builder.h"

namespace ltx::nn {

struct LtxRopeSpec {
  int64_t dim = 0;      // the full inner width the angles cover (all heads)
  int64_t n_heads = 1;  // split layout: frequencies are spread across heads
  double theta = 10000.0;
  std::vector<double> max_pos;  // one per position axis
  bool use_middle = true;       // midpoint of [start, end) (positions [B, n, T, 2]) or start
  RopeMode mode = RopeMode::SplitHalf;
  bool float64_grid = true;  // frequencies_precision == "float64"
};

struct RopeTables {
  Tensor cos, sin;  // split: [B, H, T, dh/2]; interleaved: [B, T, dim]; f32
};

// positions: [B, n_axes, T, 2] (start, end) or [B, n_axes, T] (start only; then use_middle must be false).
RopeTables ltx_rope_tables(const LtxRopeSpec& spec, const Tensor& positions);
// The same tables written into contiguous f32 `cos` and `sin` of ltx_rope_table_shape() (a plan's input slots), with
// no other buffer than one value per token and axis; rows split across the thread pool.
Shape ltx_rope_table_shape(const LtxRopeSpec& spec, const Tensor& positions);
void ltx_rope_tables_into(const LtxRopeSpec& spec, const Tensor& positions, const Tensor& cos, const Tensor& sin);

// The frequency grid g[0..N) (f32 values, as the reference stores them); a float32 grid rounds as torch's `kernels`
// do (ltx_rope_tables uses torch_cpu_kernels()).
std::vector<float> ltx_rope_grid(double theta, int64_t n_axes, int64_t dim, bool float64_grid, TorchCpuKernels kernels);

// Applies the tables to projected queries or keys x [B, T, dim]; returns [B, H, T, dh] (heads split), the layout
// attention takes. Split tables rotate per head of their own layout (their dim 1, which may differ from n_heads);
// interleaved tables rotate the flat width before the split.
Value apply_ltx_rope(Value x, Value cos, Value sin, RopeMode mode, int64_t n_heads);

}  // namespace ltx::nn
