#include "models/gemma3/model.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "core/half.h"
#include "core/int8_activations.h"
#include "core/torch_cpu_math.h"
#include "io/gguf.h"
#include "models/gemma3/decoded_cache.h"
#include "nn/weight_source.h"

namespace ltx::gemma3 {

std::vector<float> rope_inv_freq(int64_t head_dim, double base, double linear_factor) {
  const int64_t half = head_dim / 2;
  std::vector<float> expo(static_cast<size_t>(half));
  for (int64_t j = 0; j < half; ++j) expo[j] = static_cast<float>(2 * j) / static_cast<float>(head_dim);
  std::vector<float> inv = torch_pow(static_cast<float>(base), expo, torch_cpu_kernels());
  for (float& x : inv) {
    x = 1.0f / x;
    if (linear_factor != 1.0) x /= static_cast<float>(linear_factor);
  }
  return inv;
}

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Quantized layer matrices whose f32 copy fits this are decoded once at load (dequantize_layer_matrices), unless
// int8 activations are on.
constexpr int64_t kDequantizeBudgetBytes = int64_t{2} << 30;
// forward_real_tokens pads its packed token count to a multiple of this: one compiled plan per 32 lengths.
constexpr int64_t kPackBucket = 32;
// Model::extend's cache capacity grows by this many slots: one decode plan per bucket.
constexpr int64_t kCacheBucket = 128;

int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

struct Tables {
  Tensor cos, sin;  // f32 [B, 1, T, D/2]
};

// HF's default rotary tables (Gemma3RotaryEmbedding.forward): angle = inv_freq · position in f32; cos/sin of it.
// Split-half pairing (j, j + D/2).
Tables rope_tables(const std::vector<int64_t>& pos, int64_t b, int64_t t, int64_t d, double base, double factor) {
  const int64_t half = d / 2;
  const std::vector<float> inv = rope_inv_freq(d, base, factor);
  std::vector<float> c(static_cast<size_t>(b * t * half)), s(c.size());
  for (int64_t r = 0; r < b * t; ++r)
    for (int64_t j = 0; j < half; ++j) {
      const float angle = inv[j] * static_cast<float>(pos[r]);
      c[r * half + j] = std::cos(angle);
      s[r * half + j] = std::sin(angle);
    }
  const Shape shape{b, 1, t, half};
  return {Tensor::from_floats(DType::F32, shape, c), Tensor::from_floats(DType::F32, shape, s)};
}

// Additive mask [B, 1, T, T]: 0 where query i may see key j, −inf elsewhere (masking_utils.py causal_mask_function,
// sliding_window_overlay, padding_mask_function). `segment` (per token) keeps prompts packed into one row apart:
// a query sees only keys of its own segment. A query that sees nothing gets a zero attention output, as torch's
// SDPA returns for a fully masked row.
Tensor attention_mask(const std::vector<int64_t>& pos, const std::vector<int64_t>& valid,
                      const std::vector<int64_t>& segment, int64_t b, int64_t t, int64_t window) {
  std::vector<float> m(static_cast<size_t>(b * t * t), kNegInf);
  for (int64_t n = 0; n < b; ++n)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j) {
        const int64_t pi = pos[n * t + i], pj = pos[n * t + j];
        if (valid[n * t + j] && segment[n * t + i] == segment[n * t + j] && pj <= pi &&
            (window <= 0 || pi - pj < window))
          m[(n * t + i) * t + j] = 0.0f;
      }
  return Tensor::from_floats(DType::F32, {b, 1, t, t}, m);
}

struct Builder {
  Builder(const Config& config, const Weights& weights, DType activations) : c(config), w(weights), act(activations) {}

  const Config& c;
  const Weights& w;
  Graph g;
  Value rope_cos[2], rope_sin[2], mask[2];  // [0] sliding, [1] global
  DType act = DType::F32;                   // the dtype reduced-precision matmuls read (production: bf16)
  // Generation (Model::extend): the new tokens' keys (after norm and RoPE) and values are collected for the cache,
  // and each layer's cached keys and values [B, KVH, C, hd] (none for an empty cache) go before them.
  bool generating = false;
  std::vector<Value> past_k, past_v, new_k, new_v;

  // Production precision (bf16 weights, dequantized or not): the matmul reads bf16 activations and multiplies
  // exactly in bf16 with f32 sums, as the reference pipeline's bf16 Gemma does; its output returns to the f32
  // residual stream, norms and attention. f32 weights (validation) read f32 and nothing is cast.
  Value matmul_input(Value x, const nn::Linear& l) const {
    return act != DType::F32 && l.weight.dtype() != DType::F32 && x.dtype() != act ? ops::cast(x, act) : x;
  }
  // keep_bf16: leave a bf16 output bf16 (for an elementwise consumer, which reads it as f32 anyway).
  Value linear(const nn::Linear& l, Value x, bool keep_bf16 = false) const {
    if (act == DType::F32 || l.weight.dtype() == DType::F32) return l(x);
    const Value y = l(matmul_input(x, l));
    return keep_bf16 ? y : ops::cast(y, DType::F32);
  }

  Value attention(const LayerWeights& lw, Value x, int kind, int layer, const std::string& name) {
    // x [B, T, hidden]
    const int64_t b = x.dim(0), t = x.dim(1), hd = c.head_dim;
    const auto heads = [&](Value y, int64_t n, const nn::RmsNorm* norm) {
      y = ops::reshape(y, {b, t, n, hd});
      if (norm) y = (*norm)(y);              // QK-norm over head_dim, before RoPE
      return ops::permute(y, {0, 2, 1, 3});  // [B, n, T, hd]
    };
    const Value xin = matmul_input(x, lw.q_proj);  // one cast shared by q, k, v
    Value q = heads(linear(lw.q_proj, xin), c.n_heads, &lw.q_norm);
    Value k = heads(linear(lw.k_proj, xin), c.n_kv_heads, &lw.k_norm);
    const Value v = heads(linear(lw.v_proj, xin), c.n_kv_heads, nullptr);
    q = ops::rope(q, rope_cos[kind], rope_sin[kind], RopeMode::SplitHalf);
    k = ops::rope(k, rope_cos[kind], rope_sin[kind], RopeMode::SplitHalf);
    Value keys = k, values = v;
    if (generating) {
      new_k.push_back(k);
      new_v.push_back(v);
      if (!past_k.empty()) {
        const auto at = static_cast<size_t>(layer);
        keys = ops::concat(std::vector<Value>{past_k[at], k}, 2);
        values = ops::concat(std::vector<Value>{past_v[at], v}, 2);
      }
    }
    const Value a = ops::attention(q, keys, values, mask[kind], c.attention_scale());  // [B, H, T, hd]
    return g.name(linear(lw.o_proj, nn::merge_heads(a)), name + ".self_attn.out");     // [B, T, hidden]
  }

  Value mlp(const LayerWeights& lw, Value x, const std::string& name) {
    // gelu_pytorch_tanh(gate) · up, then down (Gemma3MLP.forward)
    const Value xin = matmul_input(x, lw.gate_proj);
    const Value h = ops::mul(ops::gelu_tanh(linear(lw.gate_proj, xin, true)), linear(lw.up_proj, xin, true));
    return g.name(linear(lw.down_proj, h), name + ".mlp.out");  // [B, T, hidden]
  }

  struct LayerOut {
    Value out, attn, mlp;
  };
  // Gemma3DecoderLayer.forward: pre- and post-norms around both sub-blocks.
  LayerOut layer(int i, Value h) {
    const LayerWeights& lw = w.layers[static_cast<size_t>(i)];
    const std::string name = "layers." + std::to_string(i);
    const int kind = c.layer_types[static_cast<size_t>(i)] == LayerType::Full ? 1 : 0;
    const Value a = attention(lw, lw.input_layernorm(h), kind, i, name);
    h = ops::add(h, lw.post_attention_layernorm(a));
    const Value m = mlp(lw, lw.pre_feedforward_layernorm(h), name);
    h = g.name(ops::add(h, lw.post_feedforward_layernorm(m)), name + ".out");
    return {h, a, m};
  }
};

std::vector<int64_t> ints_of(const Tensor& t, const char* what, const Shape& shape) {
  LTX_CHECK(t.shape() == shape, "gemma3", what, " is ", t.describe(), ", expected shape ", shape.str());
  return t.to_ints();
}

}  // namespace

Model::Model(Config config, Weights weights, DType compute, const Backend& backend)
    : config_(std::move(config)), weights_(std::move(weights)), compute_(compute), plans_(backend) {}

Model Model::from_hf(const std::string& config_json, const std::string& weights_path, DType compute,
                     const Backend& backend) {
  Config c = Config::from_hf_file(config_json);
  const auto src = open_safetensors(weights_path);
  Weights w = Weights::load(c, src, detect_hf_root(*src), compute);
  return Model(std::move(c), std::move(w), compute, backend);
}

Model Model::from_gguf(const std::string& path, DType compute, const Backend& backend, const std::string& cache_dir) {
  Config c = Config::from_gguf(*GGUFFile::open_shared(path));
  Weights w = Weights::load(c, open_gguf_as_hf(path), "model.", compute);
  const DType to = compute == DType::BF16 ? DType::BF16 : DType::F32;
  // With int8 activations the matrices stay encoded: the integer path reads a third of the bytes a decoded bf16
  // copy holds, which is what bounds a decode step (one token against every matrix).
  if (int8_activations()) return Model(std::move(c), std::move(w), compute, backend);
  if (cache_dir.empty())
    dequantize_layer_matrices(w, to, kDequantizeBudgetBytes);
  else
    dequantize_layer_matrices_cached(w, to, kDequantizeBudgetBytes, path, decoded_cache_path(cache_dir, path, to));
  return Model(std::move(c), std::move(w), compute, backend);
}

Model Model::load(const std::string& path, DType compute, const Backend& backend, const std::string& cache_dir) {
  namespace fs = std::filesystem;
  if (fs::path(path).extension() == ".gguf") return from_gguf(path, compute, backend, cache_dir);
  LTX_CHECK(fs::is_directory(path), "gemma3", path, ": expected a .gguf file or a Hugging Face folder");
  return from_hf((fs::path(path) / "config.json").string(), path, compute, backend);
}

Output Model::forward(const Tensor& ids, const Tensor& positions, const Tensor& valid, bool intermediates) {
  LTX_CHECK(ids.rank() == 2, "gemma3", "ids must be [B, T], got ", ids.describe());
  const int64_t b = ids.dim(0), t = ids.dim(1);
  const std::vector<int64_t> id = ints_of(ids, "ids", {b, t});
  const std::vector<int64_t> pos = ints_of(positions, "positions", {b, t});
  const std::vector<int64_t> ok = ints_of(valid, "valid", {b, t});
  std::vector<int64_t> segment(id.size(), 0);  // rows are apart already
  return run(id, pos, ok, segment, b, t, intermediates);
}

Output Model::run(const std::vector<int64_t>& id, const std::vector<int64_t>& pos, const std::vector<int64_t>& ok,
                  const std::vector<int64_t>& segment, int64_t b, int64_t t, bool intermediates) {
  const int64_t d = config_.hidden_size;
  for (int64_t v : id)
    LTX_CHECK(v >= 0 && v < config_.vocab_size, "gemma3", "token id ", v, " outside the vocabulary of ",
              config_.vocab_size);

  Builder bld(config_, weights_, compute_ == DType::BF16 ? DType::BF16 : DType::F32);
  Graph& g = bld.g;
  const Value ids_in = g.input("ids", DType::I64, {b, t});
  const char* kinds[2] = {"sliding", "global"};
  for (int k = 0; k < 2; ++k) {
    bld.rope_cos[k] = g.input(std::string("rope.") + kinds[k] + ".cos", DType::F32, {b, 1, t, config_.head_dim / 2});
    bld.rope_sin[k] = g.input(std::string("rope.") + kinds[k] + ".sin", DType::F32, {b, 1, t, config_.head_dim / 2});
    bld.mask[k] = g.input(std::string("mask.") + kinds[k], DType::F32, {b, 1, t, t});
  }
  // Gemma3TextScaledWordEmbedding: the f32 sqrt(hidden) buffer is cast to the weight dtype before the multiply,
  // so a bf16 model scales by the bf16-rounded value (e.g. 3840 -> 62.0, not 61.9677).
  float embed_scale = static_cast<float>(std::sqrt(static_cast<double>(d)));
  if (compute_ == DType::BF16) embed_scale = bf16_to_f32(f32_to_bf16(embed_scale));
  Value h = ops::gather(g.constant("embed_tokens.weight", weights_.embed_tokens), ids_in);  // [B, T, hidden]
  if (h.dtype() != DType::F32) h = ops::cast(h, DType::F32);
  h = ops::scale(h, embed_scale);
  g.output(h, "hidden_states.0");
  const int64_t n = config_.n_layers;
  for (int i = 0; i < n; ++i) {
    const Builder::LayerOut l = bld.layer(i, h);
    h = l.out;
    // layers.{i}.out for i < n-1 is hidden_states.{i+1}; one node is output under one name.
    if (i + 1 < n) g.output(h, "hidden_states." + std::to_string(i + 1));
    if (intermediates && i == 0) {
      g.output(l.attn, "layers.0.self_attn.out");
      g.output(l.mlp, "layers.0.mlp.out");
    }
  }
  g.output(weights_.norm(h), "hidden_states." + std::to_string(n));
  if (intermediates) g.output(h, "layers." + std::to_string(n - 1) + ".out");

  const Tables local = rope_tables(pos, b, t, config_.head_dim, config_.rope_local_base_freq, 1.0);
  const Tables global = rope_tables(pos, b, t, config_.head_dim, config_.rope_theta, config_.rope_linear_factor);
  const Tensor ids64 = Tensor::from_ints(DType::I64, {b, t}, id);
  Plan& plan = plans_.get(g);
  plan.set_streaming(streaming_);
  const std::span<const Tensor> outs =
      plan.run({ids64, local.cos, local.sin, attention_mask(pos, ok, segment, b, t, config_.sliding_window), global.cos,
                global.sin, attention_mask(pos, ok, segment, b, t, 0)});

  Output result;
  result.hidden_states.resize(static_cast<size_t>(n + 1));
  const auto& names = plan.output_names();
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& nm = names[k];
    if (nm.rfind("hidden_states.", 0) == 0) {
      result.hidden_states[std::stoul(nm.substr(14))] = outs[k].clone();
    } else {
      result.intermediates[nm] = outs[k].clone();
    }
  }
  if (intermediates)
    for (int64_t i = 0; i + 1 < n; ++i)
      result.intermediates["layers." + std::to_string(i) + ".out"] = result.hidden_states[static_cast<size_t>(i + 1)];
  return result;
}

Output Model::forward_padded(const Tensor& ids, const Tensor& mask, bool intermediates) {
  LTX_CHECK(ids.rank() == 2 && mask.shape() == ids.shape(), "gemma3", "ids ", ids.describe(), " and mask ",
            mask.describe(), " must both be [B, T]");
  const int64_t b = ids.dim(0), t = ids.dim(1);
  std::vector<int64_t> pos(static_cast<size_t>(b * t));
  for (int64_t i = 0; i < b * t; ++i) pos[i] = i % t;
  return forward(ids, Tensor::from_ints(DType::I64, {b, t}, pos), mask, intermediates);
}

Output Model::forward_real_tokens(const Tensor& ids, const Tensor& mask, bool intermediates) {
  LTX_CHECK(ids.rank() == 2 && mask.shape() == ids.shape(), "gemma3", "ids ", ids.describe(), " and mask ",
            mask.describe(), " must both be [B, T]");
  const int64_t b = ids.dim(0), t = ids.dim(1);
  const std::vector<int64_t> m = mask.to_ints();
  int64_t keep = 1;
  for (int64_t r = 0; r < b; ++r) {
    int64_t len = 0;
    for (int64_t j = 0; j < t; ++j) len += m[r * t + j] != 0;
    for (int64_t j = 0; j < t - len; ++j)
      LTX_CHECK(m[r * t + j] == 0, "gemma3", "row ", r, " of the mask is not left-padded");
    keep = std::max(keep, len);
  }
  if (intermediates) {  // the intermediates keep the [B, T', ...] layout: run the rows side by side
    std::vector<int64_t> pos(static_cast<size_t>(b * keep));
    for (int64_t i = 0; i < b * keep; ++i) pos[i] = t - keep + i % keep;
    return forward(ids.slice(1, t - keep, t).contiguous(), Tensor::from_ints(DType::I64, {b, keep}, pos),
                   mask.slice(1, t - keep, t).contiguous(), true);
  }
  // Every row's real tokens packed into one row, each prompt its own attention segment, then padded to a multiple
  // of kPackBucket with masked tokens so that nearby lengths share one plan. Matmuls run on real tokens only, and
  // the masks keep each token's attention exactly what the padded batch gives it.
  const std::vector<int64_t> id = ids.to_ints();
  int64_t total = 0;
  std::vector<int64_t> lengths(static_cast<size_t>(b));
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < t; ++j) lengths[static_cast<size_t>(r)] += m[r * t + j] != 0;
    total += lengths[static_cast<size_t>(r)];
  }
  const int64_t packed = std::max<int64_t>(1, (total + kPackBucket - 1) / kPackBucket * kPackBucket);
  std::vector<int64_t> pid(static_cast<size_t>(packed), 0), pos(pid.size(), 0), ok(pid.size(), 0), seg(pid.size(), -1);
  int64_t at = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t j = t - lengths[static_cast<size_t>(r)]; j < t; ++j, ++at) {
      pid[at] = id[r * t + j];
      pos[at] = j;
      ok[at] = 1;
      seg[at] = r;
    }
  const Output flat = run(pid, pos, ok, seg, 1, packed, false);
  // Back to [B, T', hidden], row b's real tokens in its last columns, zeros before them.
  Output out;
  for (const Tensor& h : flat.hidden_states) {
    Tensor rows = Tensor::empty(DType::F32, {b, keep, config_.hidden_size});  // zero-filled
    int64_t from = 0;
    for (int64_t r = 0; r < b; ++r) {
      const int64_t len = lengths[static_cast<size_t>(r)];
      rows.slice(0, r, r + 1).slice(1, keep - len, keep).copy_from(h.slice(1, from, from + len));
      from += len;
    }
    out.hidden_states.push_back(std::move(rows));
  }
  return out;
}

KvCache Model::new_cache(int64_t slots) const {
  KvCache cache;
  const int64_t capacity = round_up(std::max<int64_t>(slots, 1), kCacheBucket);
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    cache.keys.push_back(Tensor::empty(DType::F32, {1, config_.n_kv_heads, capacity, config_.head_dim}));
    cache.values.push_back(Tensor::empty(DType::F32, {1, config_.n_kv_heads, capacity, config_.head_dim}));
  }
  return cache;
}

namespace {

// The additive mask [1, 1, S, C + S] of S new tokens over the cache's C slots and themselves, by slot index as
// transformers' generation masks are (masking_utils.py): query slot q sees key slot k iff k holds a valid token,
// k <= q and, on sliding layers, q - k < window. Positions only turn the RoPE.
// `image` (empty: none): per new token its image's number, -1 for text; two soft tokens of one image see each other
// whatever their order or distance (masking_utils.py or_masks with token_type_ids_mask_function).
Tensor extend_mask(const KvCache& cache, const std::vector<int64_t>& valid, const std::vector<int64_t>& image,
                   int64_t s, int64_t window) {
  const int64_t c = cache.capacity(), n = static_cast<int64_t>(valid.size()), first = cache.length;
  std::vector<float> m(static_cast<size_t>(s * (c + s)), kNegInf);
  const auto sees = [&](int64_t q, int64_t k) { return k <= q && (window <= 0 || q - k < window); };
  const auto same_image = [&](int64_t i, int64_t j) { return !image.empty() && image[i] >= 0 && image[i] == image[j]; };
  for (int64_t i = 0; i < n; ++i) {
    float* row = m.data() + i * (c + s);
    for (int64_t j = 0; j < cache.length; ++j)
      if (cache.valid[static_cast<size_t>(j)] && sees(first + i, j)) row[j] = 0.0f;
    for (int64_t j = 0; j < n; ++j)
      if (valid[j] && (sees(first + i, first + j) || same_image(i, j))) row[c + j] = 0.0f;
  }
  return Tensor::from_floats(DType::F32, {1, 1, s, c + s}, m);
}

// `from`'s first `rows` slots along axis 2 copied into `to` at slot `at` ([1, KVH, *, hd] both).
void copy_slots(const Tensor& from, int64_t rows, const Tensor& to, int64_t at) {
  to.slice(2, at, at + rows).copy_from(from.slice(2, 0, rows));
}

}  // namespace

std::vector<float> Model::extend(KvCache& cache, const std::vector<int64_t>& given_ids,
                                 const std::vector<int64_t>& positions, const std::vector<int64_t>& valid,
                                 const ImageEmbeddings* images) {
  const auto n = static_cast<int64_t>(given_ids.size());
  LTX_CHECK(n > 0 && positions.size() == given_ids.size() && valid.size() == given_ids.size(), "gemma3",
            "extend needs as many positions and flags as tokens, got ", n, ", ", positions.size(), ", ", valid.size());
  // Soft tokens look up row 0 instead of their own id, whose row they replace anyway (a GGUF's table stops at
  // 262144, the soft token's id).
  std::vector<int64_t> ids = given_ids, select;
  int64_t soft = 0;
  if (images) {
    LTX_CHECK(static_cast<int64_t>(images->image.size()) == n, "gemma3", "extend: ", images->image.size(),
              " image flags for ", n, " tokens");
    for (int64_t i = 0; i < n; ++i)
      if (images->image[static_cast<size_t>(i)] >= 0) {
        ids[static_cast<size_t>(i)] = 0;
        ++soft;
      }
    LTX_CHECK(images->features.shape() == Shape({soft, config_.hidden_size}), "gemma3", "extend: ", soft,
              " image soft tokens need features [", soft, ", ", config_.hidden_size, "], got ",
              images->features.describe());
  }
  for (int64_t v : ids)
    LTX_CHECK(v >= 0 && v < config_.vocab_size, "gemma3", "token id ", v, " outside the vocabulary of ",
              config_.vocab_size);
  const int64_t s = n == 1 ? 1 : round_up(n, kPackBucket), c = cache.capacity(), hd = config_.head_dim;
  const int64_t layers = config_.n_layers, kv = config_.n_kv_heads;

  Builder bld(config_, weights_, compute_ == DType::BF16 ? DType::BF16 : DType::F32);
  bld.generating = true;
  Graph& g = bld.g;
  const Value ids_in = g.input("ids", DType::I64, {1, s});
  const Value last_in = g.input("last", DType::I64, {1});
  const char* kinds[2] = {"sliding", "global"};
  for (int k = 0; k < 2; ++k) {
    bld.rope_cos[k] = g.input(std::string("rope.") + kinds[k] + ".cos", DType::F32, {1, 1, s, hd / 2});
    bld.rope_sin[k] = g.input(std::string("rope.") + kinds[k] + ".sin", DType::F32, {1, 1, s, hd / 2});
    bld.mask[k] = g.input(std::string("mask.") + kinds[k], DType::F32, {1, 1, s, c + s});
  }
  if (c > 0)
    for (int64_t i = 0; i < layers; ++i) {
      bld.past_k.push_back(g.input("past.k." + std::to_string(i), DType::F32, {1, kv, c, hd}));
      bld.past_v.push_back(g.input("past.v." + std::to_string(i), DType::F32, {1, kv, c, hd}));
    }
  float embed_scale = static_cast<float>(std::sqrt(static_cast<double>(config_.hidden_size)));
  if (compute_ == DType::BF16) embed_scale = bf16_to_f32(f32_to_bf16(embed_scale));
  Value h = ops::gather(g.constant("embed_tokens.weight", weights_.embed_tokens), ids_in);
  if (h.dtype() != DType::F32) h = ops::cast(h, DType::F32);
  h = ops::scale(h, embed_scale);
  if (images) {
    // Gemma3Model.forward: the soft tokens' rows replaced, in order, by the (unscaled) image features: a gather
    // from the text rows followed by the feature rows.
    const Value features = g.input("image_features", DType::F32, {soft, config_.hidden_size});
    const Value rows = ops::concat(std::vector<Value>{ops::reshape(h, {s, config_.hidden_size}), features}, 0);
    h = ops::gather(rows, g.input("image_rows", DType::I64, {1, s}));
  }
  for (int i = 0; i < layers; ++i) h = bld.layer(i, h).out;
  // The last given token's final hidden state, through the head tied to the embeddings.
  h = ops::gather(ops::reshape(h, {s, config_.hidden_size}), last_in);  // [1, hidden]
  const nn::Linear head{"lm_head", weights_.embed_tokens, {}, 1.0f, {}, compute_};
  g.output(bld.linear(head, weights_.norm(h)), "logits");
  for (int64_t i = 0; i < layers; ++i) {
    g.output(bld.new_k[static_cast<size_t>(i)], "k." + std::to_string(i));
    g.output(bld.new_v[static_cast<size_t>(i)], "v." + std::to_string(i));
  }

  std::vector<int64_t> ids_s(ids), pos_s(positions);
  ids_s.resize(static_cast<size_t>(s), 0);
  pos_s.resize(static_cast<size_t>(s), 0);
  const Tables local = rope_tables(pos_s, 1, s, hd, config_.rope_local_base_freq, 1.0);
  const Tables global = rope_tables(pos_s, 1, s, hd, config_.rope_theta, config_.rope_linear_factor);
  const std::vector<int64_t> last{n - 1};
  const std::vector<int64_t> image = images ? images->image : std::vector<int64_t>{};
  std::vector<Tensor> inputs{Tensor::from_ints(DType::I64, {1, s}, ids_s),
                             Tensor::from_ints(DType::I64, {1}, last),
                             local.cos,
                             local.sin,
                             extend_mask(cache, valid, image, s, config_.sliding_window),
                             global.cos,
                             global.sin,
                             extend_mask(cache, valid, image, s, 0)};
  for (int64_t i = 0; c > 0 && i < layers; ++i) {
    inputs.push_back(cache.keys[static_cast<size_t>(i)]);
    inputs.push_back(cache.values[static_cast<size_t>(i)]);
  }
  if (images) {  // the gather's rows: text tokens their own, soft tokens the features after them
    std::vector<int64_t> rows(static_cast<size_t>(s));
    for (int64_t i = 0, k = 0; i < s; ++i) rows[i] = i < n && image[i] >= 0 ? s + k++ : i;
    inputs.push_back(images->features.contiguous());
    inputs.push_back(Tensor::from_ints(DType::I64, {1, s}, rows));
  }
  Plan& plan = plans_.get(g);
  plan.set_streaming(streaming_);
  const std::span<const Tensor> outs = plan.run(inputs);

  // The new tokens' keys and values into the cache, grown to the next bucket when full.
  const int64_t need = round_up(cache.length + n, kCacheBucket);
  if (need > c) {
    for (std::vector<Tensor>* part : {&cache.keys, &cache.values}) {
      part->resize(static_cast<size_t>(layers));
      for (Tensor& t : *part) {
        Tensor grown = Tensor::empty(DType::F32, {1, kv, need, hd});
        if (c > 0) copy_slots(t, cache.length, grown, 0);
        t = std::move(grown);
      }
    }
  }
  const auto& names = plan.output_names();
  std::vector<float> logits;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& nm = names[k];
    if (nm == "logits") {
      logits = outs[k].to_floats();
    } else {
      const auto layer = static_cast<size_t>(std::stoul(nm.substr(2)));
      copy_slots(outs[k], n, (nm[0] == 'k' ? cache.keys : cache.values)[layer], cache.length);
    }
  }
  cache.valid.insert(cache.valid.end(), valid.begin(), valid.end());
  cache.length += n;
  return logits;
}

}  // namespace ltx::gemma3
