#include "nn/rope_ltx.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/thread_pool.h"
#include "nn/layers.h"

namespace ltx::nn {

std::vector<float> ltx_rope_grid(double theta, int64_t n_axes, int64_t dim, bool float64_grid,
                                 TorchCpuKernels kernels) {
  const int64_t n = dim / (2 * n_axes);
  std::vector<float> g(static_cast<size_t>(n));
  if (n == 0) return g;
  if (float64_grid) {
    // rope.py:generate_freq_grid_np: theta ** np.linspace(0, 1, n) in float64, · π/2, then cast to f32.
    for (int64_t k = 0; k < n; ++k) {
      const double e = n == 1 ? 0.0 : (k == n - 1 ? 1.0 : static_cast<double>(k) * (1.0 / static_cast<double>(n - 1)));
      g[static_cast<size_t>(k)] = static_cast<float>(std::pow(theta, e) * std::numbers::pi / 2.0);
    }
    return g;
  }
  // rope.py:generate_freq_grid_pytorch: theta ** torch.linspace(log_theta(1), log_theta(theta), n) = (0, 1) in f32,
  // then · π / 2 in f32; linspace and pow as torch's kernels round them (torch_cpu_math.h).
  const std::vector<float> exponents = torch_linspace(0.0f, 1.0f, n, kernels);
  const std::vector<float> p = torch_pow(static_cast<float>(theta), exponents, kernels);
  for (int64_t k = 0; k < n; ++k)
    g[static_cast<size_t>(k)] = p[static_cast<size_t>(k)] * static_cast<float>(std::numbers::pi / 2.0);
  return g;
}

Shape ltx_rope_table_shape(const LtxRopeSpec& spec, const Tensor& positions) {
  LTX_CHECK(positions.rank() == 4 || positions.rank() == 3, "rope", "positions must be [B, n, T, 2] or [B, n, T], got ",
            positions.shape().str());
  const int64_t b = positions.dim(0), t = positions.dim(2);
  if (spec.mode == RopeMode::SplitHalf) return {b, spec.n_heads, t, spec.dim / 2 / std::max<int64_t>(spec.n_heads, 1)};
  return {b, t, spec.dim};
}

void ltx_rope_tables_into(const LtxRopeSpec& spec, const Tensor& positions, const Tensor& cos, const Tensor& sin) {
  const Shape shape = ltx_rope_table_shape(spec, positions);
  const int64_t b = positions.dim(0), n_axes = positions.dim(1), t = positions.dim(2);
  LTX_CHECK(static_cast<int64_t>(spec.max_pos.size()) == n_axes, "rope", "positions have ", n_axes,
            " axes but max_pos has ", spec.max_pos.size());
  LTX_CHECK(!spec.use_middle || (positions.rank() == 4 && positions.dim(3) == 2), "rope",
            "midpoint positions need [B, n, T, 2], got ", positions.shape().str());
  for (const Tensor* out : {&cos, &sin})
    LTX_CHECK(out->dtype() == DType::F32 && out->shape() == shape && out->is_contiguous(), "rope", "table ",
              out->describe(), " must be contiguous f32", shape.str());
  const std::vector<float> grid = ltx_rope_grid(spec.theta, n_axes, spec.dim, spec.float64_grid, torch_cpu_kernels());
  const auto n_freq = static_cast<int64_t>(grid.size());
  const std::vector<float> pos = positions.to_floats();
  const int64_t pos_last = positions.rank() == 4 ? positions.dim(3) : 1;

  // s[b, t, a] = 2·frac_a − 1; angle k·n_axes + a of a token is grid[k]·s (rope.py:generate_freqs: the angles are
  // ordered k major, axis minor, transpose(-1,-2).flatten(2)). Computed per element below, not stored.
  std::vector<float> unit(static_cast<size_t>(b * t * n_axes));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t a = 0; a < n_axes; ++a) {
      const auto max_pos = static_cast<float>(spec.max_pos[static_cast<size_t>(a)]);
      for (int64_t ti = 0; ti < t; ++ti) {
        const float* p = pos.data() + ((bi * n_axes + a) * t + ti) * pos_last;
        const float x = spec.use_middle ? (p[0] + p[1]) / 2.0f : p[0];
        const float frac = x / max_pos;
        unit[static_cast<size_t>((bi * t + ti) * n_axes + a)] = frac * 2.0f - 1.0f;
      }
    }
  const int64_t n_ang = n_freq * n_axes;
  const auto angle = [&](int64_t bi, int64_t ti, int64_t j) {  // j < n_ang
    return grid[static_cast<size_t>(j / n_axes)] * unit[static_cast<size_t>((bi * t + ti) * n_axes + j % n_axes)];
  };
  float* c = cos.data<float>();
  float* s = sin.data<float>();
  if (spec.mode == RopeMode::SplitHalf) {
    const int64_t half = spec.dim / 2, pad = half - n_ang;
    LTX_CHECK(pad >= 0 && half % spec.n_heads == 0, "rope", "split tables: dim ", spec.dim, ", ", n_axes, " axes, ",
              spec.n_heads, " heads do not fit");
    const int64_t per_head = half / spec.n_heads;
    // [B, H, T, dh/2]: rows (b, h, t) split across the pool (std::cos/std::sin dominate).
    parallel_for(b * spec.n_heads * t, 64, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t ti = r % t, h = r / t % spec.n_heads, bi = r / t / spec.n_heads;
        for (int64_t e = 0; e < per_head; ++e) {
          const int64_t j = h * per_head + e, o = r * per_head + e;
          if (j < pad) {
            c[o] = 1.0f;
            s[o] = 0.0f;
          } else {
            const float a = angle(bi, ti, j - pad);
            c[o] = std::cos(a);
            s[o] = std::sin(a);
          }
        }
      }
    });
    return;
  }
  const int64_t pad = spec.dim % (2 * n_axes);
  LTX_CHECK(pad + 2 * n_ang == spec.dim, "rope", "interleaved tables: dim ", spec.dim, " vs ", n_ang, " angles");
  // [B, T, dim]: rows (b, t) split across the pool.
  parallel_for(b * t, 64, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t j = 0; j < spec.dim; ++j) {
        const int64_t o = r * spec.dim + j;
        if (j < pad) {
          c[o] = 1.0f;
          s[o] = 0.0f;
        } else {
          const float a = angle(r / t, r % t, (j - pad) / 2);
          c[o] = std::cos(a);
          s[o] = std::sin(a);
        }
      }
  });
}

RopeTables ltx_rope_tables(const LtxRopeSpec& spec, const Tensor& positions) {
  const Shape shape = ltx_rope_table_shape(spec, positions);
  RopeTables r{Tensor::empty(DType::F32, shape), Tensor::empty(DType::F32, shape)};
  ltx_rope_tables_into(spec, positions, r.cos, r.sin);
  return r;
}

Value apply_ltx_rope(Value x, Value cos, Value sin, RopeMode mode, int64_t n_heads) {
  if (mode == RopeMode::SplitHalf) {
    // Split tables rotate over their own head layout (rope.py:apply_split_rotary_emb reshapes x to the tables'
    // [B, H, T, ·]); a cross-modal table has the other stream's heads when the streams' head counts differ.
    const int64_t table_heads = cos.dim(1);
    if (table_heads == n_heads) return ops::rope(split_heads(x, n_heads), cos, sin, RopeMode::SplitHalf);
    return split_heads(merge_heads(ops::rope(split_heads(x, table_heads), cos, sin, RopeMode::SplitHalf)), n_heads);
  }
  return split_heads(ops::rope(x, cos, sin, RopeMode::Interleaved), n_heads);
}

}  // namespace ltx::nn
