// One pass over the output evaluating a FusedProgram: for each block of up to kBlock output elements along the
// innermost dimension, leaves are loaded (converted to f32, broadcast by stride), each instruction runs over the
// block in f32, and the last result is stored once in the output dtype. On AVX-512 CPUs the instructions, bf16
// loads and stores run as vectors (fused_elementwise_avx512.cpp). A matmul step's epilogue runs the same program
// with its first value taken from the matmul kernel's f32 results (FusedEpilogue); a program led by a norm takes it
// from each row normalized in f32 (RowNormalizer).
#include "backend/cpu/elementwise/fused_elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <variant>

#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul/matmul_gemm.h"
#include "backend/cpu/norm/row_norm.h"
#include "backend/cpu/optimized.h"
#include "core/error.h"
#include "core/half.h"
#include "core/thread_pool.h"

namespace ltx::cpu {
using fused::kBlock;
using fused::kMaxValues;
using fused::LeafView;

namespace {

// BigVGAN's activations add this to the divisor (ltx_core/model/audio_vae/vocoder.py, SnakeBeta.eps).
constexpr float kSnakeEps = 1e-9f;

LeafView make_leaf_view(const Tensor& leaf, const Shape& out_shape, bool per_channel) {
  LeafView v;
  v.base = leaf.raw();
  v.dtype = leaf.dtype();
  const int rank = out_shape.rank();
  if (per_channel) {  // leaf [C] broadcast along axis 1 of the output
    LTX_CHECK(leaf.rank() == 1 && rank >= 2 && leaf.dim(0) == out_shape[1], "cpu", "per-channel operand ",
              leaf.describe(), " does not match output ", out_shape.str());
    v.strides[1] = leaf.strides()[0];
    return v;
  }
  const int lead = rank - leaf.rank();
  LTX_CHECK(lead >= 0, "cpu", "fused operand ", leaf.describe(), " has a higher rank than ", out_shape.str());
  for (int i = 0; i < leaf.rank(); ++i) {
    LTX_CHECK(leaf.dim(i) == out_shape[lead + i] || leaf.dim(i) == 1, "cpu", "fused operand ", leaf.describe(),
              " does not broadcast to ", out_shape.str());
    v.strides[lead + i] = leaf.dim(i) == 1 ? 0 : leaf.strides()[i];
  }
  return v;
}

void load_block(const LeafView& v, int64_t elem_offset, int64_t inner_stride, int64_t n, float* dst) {
  if (inner_stride == 0) {
    const float x = load_as_f32(v.base + elem_offset * static_cast<int64_t>(dtype_block_bytes(v.dtype)), v.dtype);
    std::fill(dst, dst + n, x);
    return;
  }
  if (v.dtype == DType::BF16) {
    const auto* p = reinterpret_cast<const uint16_t*>(v.base) + elem_offset;
    if (inner_stride == 1 && gemm::avx512_available()) return fused::load_bf16_avx512(p, n, dst);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(p[i * inner_stride]);
    return;
  }
  const auto es = static_cast<int64_t>(dtype_block_bytes(v.dtype));
  for (int64_t i = 0; i < n; ++i) dst[i] = load_as_f32(v.base + (elem_offset + i * inner_stride) * es, v.dtype);
}

void store_block(const float* src, int64_t n, DType dtype, std::byte* dst) {
  if (dtype == DType::F32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
  if (dtype == DType::BF16) {
    auto* p = reinterpret_cast<uint16_t*>(dst);
    if (gemm::avx512_available()) return fused::store_bf16_avx512(src, n, p);
    for (int64_t i = 0; i < n; ++i) p[i] = f32_to_bf16(src[i]);
    return;
  }
  const auto es = static_cast<int64_t>(dtype_block_bytes(dtype));
  for (int64_t i = 0; i < n; ++i) store_from_f32(dst + i * es, dtype, src[i]);
}

float snake_param(float p, bool log_scale) { return log_scale ? std::exp(p) : p; }

// r = op(a, b, c) over n elements. Formulas as the reference kernels (elementwise_ref.cpp).
void eval(const FusedInstr& ins, const float* a, const float* b, const float* c, float* r, int64_t n) {
  switch (ins.kind) {
    case OpKind::Add:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] + b[i];
      return;
    case OpKind::Sub:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] - b[i];
      return;
    case OpKind::Mul:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] * b[i];
      return;
    case OpKind::Div:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] / b[i];
      return;
    case OpKind::Lerp:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] + c[i] * (b[i] - a[i]);
      return;
    case OpKind::Scale: {
      const auto& s = std::get<ScaleAttrs>(ins.attrs);
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] * s.scale + s.bias;
      return;
    }
    case OpKind::Clamp: {
      const auto& s = std::get<ClampAttrs>(ins.attrs);
      for (int64_t i = 0; i < n; ++i) r[i] = std::min(std::max(a[i], s.lo), s.hi);
      return;
    }
    case OpKind::Silu:
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] / (1.0f + std::exp(-a[i]));
      return;
    case OpKind::Gelu:
      for (int64_t i = 0; i < n; ++i) r[i] = 0.5f * a[i] * (1.0f + std::erf(a[i] * 0.70710678118654752f));
      return;
    case OpKind::GeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        const float x = a[i];
        r[i] = 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
      }
      return;
    case OpKind::Sigmoid:
      for (int64_t i = 0; i < n; ++i) r[i] = 1.0f / (1.0f + std::exp(-a[i]));
      return;
    case OpKind::Tanh:
      for (int64_t i = 0; i < n; ++i) r[i] = std::tanh(a[i]);
      return;
    case OpKind::LeakyRelu: {
      const float slope = std::get<LeakyReluAttrs>(ins.attrs).slope;
      for (int64_t i = 0; i < n; ++i) r[i] = a[i] >= 0.0f ? a[i] : a[i] * slope;
      return;
    }
    case OpKind::Snake: {
      const bool log_scale = std::get<SnakeAttrs>(ins.attrs).log_scale;
      for (int64_t i = 0; i < n; ++i) {
        const float alpha = snake_param(b[i], log_scale);
        const float s = std::sin(a[i] * alpha);
        r[i] = a[i] + s * s / (alpha + kSnakeEps);
      }
      return;
    }
    case OpKind::SnakeBeta: {
      const bool log_scale = std::get<SnakeAttrs>(ins.attrs).log_scale;
      for (int64_t i = 0; i < n; ++i) {
        const float alpha = snake_param(b[i], log_scale);
        const float beta = snake_param(c[i], log_scale);
        const float s = std::sin(a[i] * alpha);
        r[i] = a[i] + s * s / (beta + kSnakeEps);
      }
      return;
    }
    default:
      fail("cpu", std::string("fused program holds non-elementwise op ") + std::string(op_name(ins.kind)));
  }
}

}  // namespace

fused::ProgramRunner::ProgramRunner(const FusedProgram& program, Inputs leaves, const Tensor& out)
    : program_(program), out_(out) {
  n_values_ = program.n_leaves + static_cast<int>(program.instrs.size());
  first_instr_ = !program.instrs.empty() && leads_fused_program(program.instrs[0].kind) ? 1 : 0;
  LTX_CHECK(static_cast<int>(leaves.size()) == program.n_leaves && static_cast<int>(program.instrs.size()) > 0 &&
                n_values_ <= kMaxValues && out.is_contiguous(),
            "cpu", "malformed fused program");
  const Shape& shape = out.shape();
  rank_ = shape.rank();
  inner_ = rank_ == 0 ? 1 : shape[rank_ - 1];
  rows_ = inner_ == 0 ? 0 : shape.numel() / inner_;
  for (size_t k = static_cast<size_t>(first_instr_); k < program.instrs.size(); ++k) {
    const FusedInstr& ins = program.instrs[k];
    LTX_CHECK(!leads_fused_program(ins.kind), "cpu", "a fused program's ", op_name(ins.kind),
              " must be its first instruction");
    for (int a = 0; a < ins.n_args; ++a)
      if (ins.args[a] < program.n_leaves) loaded_ |= uint64_t{1} << ins.args[a];
  }
  if (first_instr_ == 0) loaded_ = (program.n_leaves == 64 ? ~uint64_t{0} : (uint64_t{1} << program.n_leaves) - 1);
  for (int i = 0; i < program.n_leaves; ++i)
    if ((loaded_ >> i) & 1u)
      views_[i] = make_leaf_view(leaves[static_cast<size_t>(i)], shape, (program.channel_leaves >> i) & 1u);
  vector_ = gemm::avx512_available();
  // Polynomial transcendentals only where the result is stored in 16 bits (fused_elementwise.h).
  approximate_ = out.dtype() == DType::BF16 || out.dtype() == DType::F16;
}

void fused::ProgramRunner::run_row(int64_t row, int64_t col, int64_t count, const float* given) const {
  const Shape& shape = out_.shape();
  const int rank = rank_;
  const auto out_es = static_cast<int64_t>(dtype_block_bytes(out_.dtype()));
  // Per-thread scratch, one block per value (leaves and instruction results); grows once, then is reused.
  thread_local std::vector<float> scratch;
  if (scratch.size() < static_cast<size_t>(n_values_ * kBlock)) scratch.resize(static_cast<size_t>(n_values_ * kBlock));
  const float* value[kMaxValues];
  float* slot[kMaxValues];
  for (int v = 0; v < n_values_; ++v) value[v] = slot[v] = scratch.data() + static_cast<int64_t>(v) * kBlock;
  int64_t index[kMaxRank] = {};
  int64_t rem = row;  // row -> index of the outer dimensions
  for (int d = rank - 2; d >= 0; --d) {
    index[d] = rem % shape[d];
    rem /= shape[d];
  }
  for (int64_t done = 0; done < count; done += kBlock) {
    const int64_t n = std::min(kBlock, count - done), c0 = col + done;
    if (first_instr_ == 1) value[program_.n_leaves] = given + done;  // the leading op's results, read in place
    for (int l = 0; l < program_.n_leaves; ++l) {
      if (!((loaded_ >> l) & 1u)) continue;
      const int64_t inner_stride = rank ? views_[l].strides[rank - 1] : 0;
      int64_t off = c0 * inner_stride;
      for (int d = 0; d < rank - 1; ++d) off += index[d] * views_[l].strides[d];
      if (views_[l].dtype == DType::F32 && inner_stride == 1) {  // read in place: instructions never write leaves
        value[l] = reinterpret_cast<const float*>(views_[l].base) + off;
        continue;
      }
      load_block(views_[l], off, inner_stride, n, slot[l]);
    }
    for (size_t k = static_cast<size_t>(first_instr_); k < program_.instrs.size(); ++k) {
      const FusedInstr& ins = program_.instrs[k];
      float* r = slot[program_.n_leaves + static_cast<int>(k)];
      const float *a = value[ins.args[0]], *b = value[ins.args[1]], *c = value[ins.args[2]];
      if (!vector_ || !fused::eval_avx512(ins, a, b, c, r, n, approximate_)) eval(ins, a, b, c, r, n);
    }
    store_block(value[n_values_ - 1], n, out_.dtype(), out_.raw() + (row * inner_ + c0) * out_es);
  }
}

namespace {

// A program led by RmsNorm/LayerNorm (ops/fused.h): groups of rows get their statistics, then each row is
// normalized into per-thread f32 scratch (still in L1/L2) and run through the rest of the program to its one store.
void run_norm_led(const FusedProgram& program, Inputs leaves, const Tensor& out) {
  const FusedInstr& norm = program.instrs[0];
  LTX_CHECK(norm.n_args == 1 && norm.args[0] < program.n_leaves &&
                leaves[static_cast<size_t>(norm.args[0])].shape() == out.shape(),
            "cpu", "a fused program's ", op_name(norm.kind), " must read one leaf of the output's shape");
  const RowNormalizer rows(norm.kind, std::get<NormAttrs>(norm.attrs), leaves[static_cast<size_t>(norm.args[0])]);
  const fused::ProgramRunner runner(program, leaves, out);
  const int64_t n = rows.length(), kGroup = RowNormalizer::kGroup;
  if (n == 0) return;
  parallel_for((rows.rows() + kGroup - 1) / kGroup, 1, [&](int64_t g0, int64_t g1) {
    thread_local std::vector<float> normalized;
    if (normalized.size() < static_cast<size_t>(n)) normalized.resize(static_cast<size_t>(n));
    float mean[RowNormalizer::kGroup], rstd[RowNormalizer::kGroup];
    for (int64_t g = g0; g < g1; ++g) {
      const int64_t r0 = g * kGroup, count = std::min(kGroup, rows.rows() - r0);
      rows.statistics(r0, count, mean, rstd);
      for (int64_t i = 0; i < count; ++i) {
        rows.normalize(r0 + i, mean[i], rstd[i], normalized.data());
        runner.run_row(r0 + i, 0, n, normalized.data());
      }
    }
  });
}

}  // namespace

void run_fused(const FusedProgram& program, Inputs leaves, const Tensor& out) {
  LTX_CHECK(!program.instrs.empty(), "cpu", "malformed fused program");
  const OpKind lead = program.instrs[0].kind;
  if (lead == OpKind::RmsNorm || lead == OpKind::LayerNorm) return run_norm_led(program, leaves, out);
  if (lead == OpKind::MatMul) {
    // The matmul kernels (optimized where they take the call, else the reference) feed the rest of the program.
    const FusedInstr& mm = program.instrs[0];
    LTX_CHECK(mm.n_args == 2 && mm.args[0] < program.n_leaves && mm.args[1] < program.n_leaves, "cpu",
              "a fused program's MatMul must read two leaves");
    const Tensor product[2] = {leaves[static_cast<size_t>(mm.args[0])], leaves[static_cast<size_t>(mm.args[1])]};
    const fused::FusedEpilogue epilogue(program, leaves, out);
    const auto& attrs = std::get<MatMulAttrs>(mm.attrs);
    if (!opt::try_matmul(attrs, product, out, &epilogue)) ref::matmul(attrs, product, out, &epilogue);
    return;
  }
  const fused::ProgramRunner runner(program, leaves, out);
  const int64_t inner = runner.inner();
  parallel_for(runner.rows(), std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t row = r0; row < r1; ++row) runner.run_row(row, 0, inner, nullptr);
  });
}

}  // namespace ltx::cpu
