// The closed set of primitive ops, their attributes, and shape/dtype inference. Graphs are built from these;
// every backend implements each of them (backend/cpu: a reference kernel for every op).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "core/dtype.h"
#include "core/shape.h"

namespace ltx {

enum class OpKind : uint8_t {
  // linear algebra
  MatMul,  // batched a·b with optional transposes, broadcasting batch dims; b may be bf16 or quantized
  // elementwise, numpy broadcasting over all inputs
  Add,
  Sub,
  Mul,
  Div,
  Lerp,   // a + t·(b − a); inputs a, b, t
  Scale,  // x·scale + bias (scalars)
  Clamp,
  Silu,
  Gelu,
  GeluTanh,
  Sigmoid,
  Tanh,
  LeakyRelu,
  Snake,      // x + sin²(α·x)/α, α per channel (axis 1); inputs x, alpha [C]; alpha may be stored as log
  SnakeBeta,  // x + sin²(α·x)/β; inputs x, alpha [C], beta [C]
  // normalization (all reductions in f32)
  Softmax,    // along the last axis
  RmsNorm,    // over the last axis; optional weight (plain w or 1+w)
  LayerNorm,  // over the last axis; optional weight and bias
  GroupNorm,  // x [B, C, ...]; optional weight/bias [C]
  PixelNorm,  // x / sqrt(mean(x², axis) + eps)
  // attention
  Attention,  // q [B,Hq,Tq,D], k [B,Hkv,Tk,D], v [B,Hkv,Tk,Dv], optional additive mask broadcastable to
              // [B,Hq,Tq,Tk]; Hq a multiple of Hkv (grouped-query)
  Rope,       // x [..., T, D] with cos/sin tables broadcastable to x (interleaved) or to x[..., :D/2] (split half)
  // convolution and resampling
  Conv,             // x [B, C, *S] (S of 1-3 dims), weight [O, C/groups, *K], optional bias [O]
  ConvTranspose1d,  // x [B, C, L], weight [C, O/groups, K], optional bias [O]
  DepthToSpace,     // [B, C·∏f, *S] -> [B, C, *(S·f)], channel order (c, f0, f1, f2) as torch's pixel_shuffle
  SpaceToDepth,     // the inverse
  UpsampleNearest,  // [B, C, *S] -> [B, C, *(S·f)]
  // BigVGAN-v2's anti-aliased SnakeBeta (Activation1d): x [B, C, L] ×2 upsampled by the even-length filter
  // `up` (replicate pad, transposed conv, crop), SnakeBeta with alpha/beta [C], ×2 downsampled by the even-length
  // low-pass `down` (replicate pad, strided conv) -> [B, C, L]; inputs x, alpha, beta, up [Ku], down [Kd]
  AntiAliasSnakeBeta,
  // indexing and layout
  Gather,  // table [V, D] (any dtype, quantized included), ids (i32/i64) [...] -> [..., D]
  Concat,
  Slice,
  Permute,
  Reshape,
  Pad,
  // reductions (f32 accumulation)
  ReduceSum,
  ReduceMean,
  ReduceMax,
  ReduceMin,
  Cast,
};
inline constexpr int kOpKindCount = static_cast<int>(OpKind::Cast) + 1;

std::string_view op_name(OpKind kind);
bool op_is_elementwise(OpKind kind);  // Add..SnakeBeta: one output element per broadcast input element
bool op_is_view(OpKind kind);         // Slice, Permute, Reshape: may alias their input

enum class PadMode : uint8_t { Zeros, Reflect, Replicate, Constant };
enum class RopeMode : uint8_t { Interleaved, SplitHalf };
enum class NormWeight : uint8_t { None, Plain, OnePlus };  // x·w or x·(1+w) (Gemma)

struct NoAttrs {};
struct MatMulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};
struct ScaleAttrs {
  float scale = 1.0f;
  float bias = 0.0f;
};
struct ClampAttrs {
  float lo = -3.4e38f;
  float hi = 3.4e38f;
};
struct LeakyReluAttrs {
  float slope = 0.01f;
};
struct SnakeAttrs {
  bool log_scale = false;  // alpha (and beta) hold log values, as BigVGAN's alpha_logscale
};
struct NormAttrs {  // RmsNorm, LayerNorm, PixelNorm (axis), GroupNorm (groups)
  float eps = 1e-6f;
  NormWeight weight = NormWeight::None;
  bool bias = false;
  int groups = 1;
  int axis = -1;
};
struct SoftmaxAttrs {
  float scale = 1.0f;  // softmax(x·scale)
};
struct AttentionAttrs {
  float scale = 0.0f;  // 0: 1/sqrt(D)
  bool causal = false;
};
struct RopeAttrs {
  RopeMode mode = RopeMode::SplitHalf;
};
struct ConvAttrs {  // per spatial dimension, outermost first
  int spatial = 2;
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> pad_before{0, 0, 0};  // causal temporal padding: pad_before = k-1, pad_after = 0
  std::array<int64_t, 3> pad_after{0, 0, 0};
  // Per spatial dimension: LTX's CausalConv3d replicates edge frames in time but pads space with zeros or
  // reflection (ltx_core/model/video_vae/convolution.py, CausalConv3d.forward).
  std::array<PadMode, 3> pad_mode{PadMode::Zeros, PadMode::Zeros, PadMode::Zeros};
  int64_t groups = 1;
  int64_t output_padding = 0;  // ConvTranspose1d only
};
struct ResampleAttrs {  // DepthToSpace, SpaceToDepth, UpsampleNearest
  int spatial = 2;
  std::array<int64_t, 3> factor{1, 1, 1};
};
struct AxisAttrs {  // Concat
  int axis = 0;
};
struct SliceAttrs {
  int axis = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
};
struct PermuteAttrs {
  std::array<int, kMaxRank> perm{};
  int rank = 0;
};
struct ReshapeAttrs {
  Shape shape;
};
struct PadAttrs {
  std::array<int64_t, kMaxRank> before{};
  std::array<int64_t, kMaxRank> after{};
  PadMode mode = PadMode::Zeros;
  float value = 0.0f;
};
struct ReduceAttrs {
  std::array<bool, kMaxRank> axes{};  // axes[i]: reduce dimension i
  bool keepdim = false;
};
struct CastAttrs {
  DType to = DType::F32;
};

using OpAttrs = std::variant<NoAttrs, MatMulAttrs, ScaleAttrs, ClampAttrs, LeakyReluAttrs, SnakeAttrs, NormAttrs,
                             SoftmaxAttrs, AttentionAttrs, RopeAttrs, ConvAttrs, ResampleAttrs, AxisAttrs, SliceAttrs,
                             PermuteAttrs, ReshapeAttrs, PadAttrs, ReduceAttrs, CastAttrs>;

// What shape inference sees of an input.
struct TensorMeta {
  DType dtype = DType::F32;
  Shape shape;
};

[[noreturn]] void throw_wrong_attrs(OpKind kind);

// The attributes of a node of kind `kind`, which must be of type T; a mismatch is a programming error reported
// as ltx::Error naming the op.
template <typename T>
const T& attrs_as(OpKind kind, const OpAttrs& attrs) {
  const T* p = std::get_if<T>(&attrs);
  if (p == nullptr) throw_wrong_attrs(kind);
  return *p;
}

// The output of `kind` on `inputs`; throws ltx::Error("[op] ...") naming the op and the shapes when invalid.
TensorMeta infer_output(OpKind kind, const OpAttrs& attrs, std::span<const TensorMeta> inputs);

}  // namespace ltx
