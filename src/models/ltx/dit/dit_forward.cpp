// The DiT call: host-side argument preparation (ltx_core transformer_args.py: TransformerArgsPreprocessor,
// MultiModalTransformerArgsPreprocessor), the blocks (transformer.py:BasicAVTransformerBlock.forward), the output
// heads (model.py:_process_output) and velocity -> x0 (model.py:X0Model, utils.py:to_denoised).
#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <functional>
#include <map>

#include "core/error.h"
#include "models/ltx/dit/dit.h"
#include "nn/rope_ltx.h"

namespace ltx::ltxm {
namespace {

// Precision: in production the blocks' projections read bf16 activations (nn/precision.h) and return bf16; the
// residual stream x, the norms, the modulation values, the RoPE tables and the outputs stay f32 (ltx-core's bf16
// model keeps x in bf16; f32 costs little here and rounds less). Gates multiply as gate·y with the f32 gate first,
// so the product is f32 and joins the residual add in one fused pass.

// Graph-side arguments of one stream (ltx_core TransformerArgs).
struct StreamArgs {
  std::string p;       // key prefix: "" (video) or "audio_"
  std::string stream;  // "video" | "audio"
  Value latent, timesteps, x, mod, emb, context;
  std::optional<Value> prompt_mod, self_bias, cross_cos, cross_sin, av_ss, av_gate;
  Value pe_cos, pe_sin;
};

// The call's inputs. The DiT's plans hold their inputs in their arena (CompileOptions::inputs_in_arena), so each
// input here is a graph input plus how to write its value into the plan's slot once the plan for this shape is
// known: the RoPE tables and attention bias are computed straight into the arena, latents and contexts copied
// there, and nothing the call prepares outlives that write. Plan::peak_bytes() then counts every byte of the call.
struct CallInputs {
  size_t count = 0;
  std::vector<std::function<void(const Plan&)>> writes;
  // Values to return as intermediates (collect_intermediates): (name, input index), copied out before the run.
  std::vector<std::pair<std::string, size_t>> taps;

  // A graph input whose value a later `writes` entry fills; returns it and its index.
  std::pair<Value, size_t> declare(Graph& g, const std::string& name, DType dtype, const Shape& shape) {
    return {g.input(name, dtype, shape), count++};
  }
  // A graph input copied from `t` (the caller's tensor, or a small host-made one kept until the write).
  Value add(Graph& g, const std::string& name, const Tensor& t) {
    const auto [v, i] = declare(g, name, t.dtype(), t.shape());
    writes.push_back([i = i, t](const Plan& plan) {  // init-captures: clang < 16 cannot capture a binding
      Tensor dst = plan.input(i);
      dst.copy_from(t);
    });
    return v;
  }
  void write(const Plan& plan) const {
    for (const auto& w : writes) w(plan);
  }
};

std::vector<float> scaled(const Tensor& t, float mult) {
  std::vector<float> v = t.to_floats();
  for (float& x : v) x *= mult;  // timestep · timestep_scale_multiplier in f32, as torch
  return v;
}

// σ·mult per item, then ·then: in double rounded once from sigma_f64 when the caller gave it, else in f32 from the
// f32 σ with a rounding per product (torch's arithmetic on a float32 0-d σ).
std::vector<float> scaled_sigma(const DitStreamInput& in, float mult, double then = 1.0) {
  if (in.sigma_f64.empty()) {
    std::vector<float> v = scaled(in.sigma, mult);
    if (then != 1.0)
      for (float& x : v) x *= static_cast<float>(then);
    return v;
  }
  LTX_CHECK(static_cast<int64_t>(in.sigma_f64.size()) == in.sigma.numel(), "ltx.dit", "sigma_f64 holds ",
            in.sigma_f64.size(), " values for ", in.sigma.numel(), " items");
  std::vector<float> v;
  for (const double s : in.sigma_f64) v.push_back(static_cast<float>(s * mult * then));
  return v;
}

Value rms(Value x, float eps) { return ops::rms_norm(x, std::nullopt, eps, NormWeight::None); }

// True when every batch item's rows of `values` ([B·T'] row-major) hold one value (bit pattern): the usual call,
// where all tokens share the item's sigma.
bool uniform_per_item(const std::vector<float>& values, int64_t b) {
  const size_t t = values.size() / static_cast<size_t>(b);
  for (size_t i = 0; i < values.size(); ++i)
    if (std::bit_cast<uint32_t>(values[i]) != std::bit_cast<uint32_t>(values[i - i % t])) return false;
  return true;
}

// adaln(sinusoid(values)) tapped as <name>.out.{modulation,embedded_timestep}; modulation viewed [B, T', coef, D].
// The MLPs run once per distinct timestep (a few per call, against thousands of tokens) and are gathered to rows.
// When each batch item has a single timestep and no intermediates are collected, T' = 1: the rows broadcast over
// the tokens instead of being copied to each (the gathered [B·T, coef·D] table is 226 MB at 1536 video tokens of
// LTX-2.3); values are identical either way.
std::pair<Value, Value> run_adaln(Graph& g, CallInputs& feed, Taps& taps, const nn::AdaLayerNormSingle& a,
                                  std::vector<float> values, int64_t b) {
  LTX_CHECK(static_cast<int64_t>(values.size()) % b == 0, "ltx.dit", a.name, ": ", values.size(),
            " timesteps for batch ", b);
  if (!taps.collect && uniform_per_item(values, b)) {
    const size_t t = values.size() / static_cast<size_t>(b);
    std::vector<float> per_item;
    for (int64_t i = 0; i < b; ++i) per_item.push_back(values[static_cast<size_t>(i) * t]);
    values = std::move(per_item);
  }
  const auto rows = static_cast<int64_t>(values.size());
  const nn::DistinctRows distinct = nn::distinct_rows(values);
  const Value s = feed.add(g, a.name + ".sinusoid", nn::timestep_sinusoid(distinct.values, nn::kTimestepSinusoidDim));
  const Value ids = feed.add(g, a.name + ".timestep_ids", Tensor::from_ints(DType::I32, {rows}, distinct.ids));
  const auto out = a(s, ids);  // [rows, coef·D], [rows, D]
  taps(out.modulation, a.name + ".out.modulation");
  taps(out.embedded_timestep, a.name + ".out.embedded_timestep");
  return {ops::reshape(out.modulation, {b, rows / b, a.coef, a.dim}),
          ops::reshape(out.embedded_timestep, {b, rows / b, a.dim})};
}

// Additive log-space bias from a [B, T, T] mask in [0, 1] (transformer_args.py:_prepare_self_attention_mask):
// m > 0 -> log(max(m, tiny)), m <= 0 -> finfo(float32).min; written into `bias` [B, 1, T, T] (contiguous f32).
void self_attention_bias_into(const Tensor& mask, const Tensor& bias) {
  const Tensor m = mask.dtype() == DType::F32 ? mask.contiguous() : mask.to(DType::F32);
  const float* in = m.data<float>();
  float* out = bias.data<float>();
  for (int64_t i = 0; i < m.numel(); ++i) out[i] = in[i] > 0.0f ? std::log(std::max(in[i], FLT_MIN)) : -FLT_MAX;
}

bool perturbed(const SamplePerturbations& s, Perturbation kind, int64_t block) {
  return std::any_of(s.begin(), s.end(), [&](const PerturbationSpec& p) {
    return p.kind == kind && (!p.blocks || std::find(p.blocks->begin(), p.blocks->end(), block) != p.blocks->end());
  });
}

enum class Mix { None, Some, All };

struct Perturbations {
  const std::vector<SamplePerturbations>* samples;
  int64_t b;
  Mix mix(Perturbation kind, int64_t block) const {
    if (samples->empty()) return Mix::None;
    int64_t n = 0;
    for (const auto& s : *samples) n += perturbed(s, kind, block) ? 1 : 0;
    return n == 0 ? Mix::None : (n == b ? Mix::All : Mix::Some);
  }
  // A residual the samples perturbed by `kind` do not get: nullopt when none of them does (skip computing it),
  // else `r` itself or r · keep_mask (exact for the kept samples: r · 1 = r).
  template <typename MakeResidual>
  std::optional<Value> residual(Graph& g, CallInputs& feed, Perturbation kind, int64_t block, MakeResidual make) const {
    const Mix m = mix(kind, block);
    if (m == Mix::All) return std::nullopt;
    const Value r = make();
    return m == Mix::Some ? ops::mul(r, keep_mask(g, feed, kind, block)) : r;
  }
  // [B, 1, 1]: 1 keeps the sample's result, 0 marks it perturbed (perturbations.py:mask_like); one graph input per
  // kind and block, however many residuals it masks.
  Value keep_mask(Graph& g, CallInputs& feed, Perturbation kind, int64_t block) const {
    const auto key = std::pair{static_cast<int>(kind), block};
    if (const auto it = masks.find(key); it != masks.end()) return it->second;
    std::vector<float> m;
    for (const auto& s : *samples) m.push_back(perturbed(s, kind, block) ? 0.0f : 1.0f);
    const Value v = feed.add(g, "perturbation." + std::to_string(key.first) + "." + std::to_string(block),
                             Tensor::from_floats(DType::F32, {b, 1, 1}, m));
    masks.emplace(key, v);
    return v;
  }
  mutable std::map<std::pair<int, int64_t>, Value> masks;
};

struct Builder {
  Graph& g;
  CallInputs& feed;
  Taps& taps;
  const DitConfig& c;
  const DitWeights& w;
  const Perturbations& pert;

  // RoPE tables for `positions`, computed into the plan's two input slots; tapped as rope.<name>.{cos,sin}.
  std::pair<Value, Value> rope_inputs(const std::string& name, const std::string& input_name,
                                      const nn::LtxRopeSpec& spec, const Tensor& positions) {
    const Shape shape = nn::ltx_rope_table_shape(spec, positions);
    const auto [cos, i_cos] = feed.declare(g, input_name + ".cos", DType::F32, shape);
    const auto [sin, i_sin] = feed.declare(g, input_name + ".sin", DType::F32, shape);
    feed.writes.push_back([spec, positions, i_cos = i_cos, i_sin = i_sin](const Plan& plan) {
      nn::ltx_rope_tables_into(spec, positions, plan.input(i_cos), plan.input(i_sin));
    });
    feed.taps.emplace_back("rope." + name + ".cos", i_cos);
    feed.taps.emplace_back("rope." + name + ".sin", i_sin);
    return {cos, sin};
  }

  StreamArgs prepare(const DitStreamWeights& sw, const DitStreamInput& in, const DitStreamInput* other, bool audio) {
    StreamArgs s;
    s.p = audio ? "audio_" : "";
    s.stream = audio ? "audio" : "video";
    const int64_t b = in.latent.dim(0), t = in.latent.dim(1);
    const int64_t d = audio ? c.audio_inner() : c.inner();
    const int64_t heads = audio ? c.audio_n_heads : c.n_heads;
    LTX_CHECK(in.latent.rank() == 3 && in.timesteps.numel() == b * t && in.sigma.numel() == b, "ltx.dit", s.stream,
              ": latent ", in.latent.shape().str(), ", timesteps ", in.timesteps.shape().str(), ", sigma ",
              in.sigma.shape().str(), " do not agree");
    s.latent = feed.add(g, s.stream + ".latent", in.latent);
    s.timesteps = feed.add(g, s.stream + ".timesteps", in.timesteps.contiguous().reshape({b, t, 1}));
    s.x = taps(sw.patchify(s.latent), s.p + "patchify_proj.out");  // [B, T, D]

    const float tsm = c.timestep_scale_multiplier;
    const std::vector<float> own_t = scaled(in.timesteps, tsm);
    std::tie(s.mod, s.emb) = run_adaln(g, feed, taps, sw.adaln, own_t, b);  // [B, T, coef, D], [B, T, D]
    if (sw.prompt_adaln) s.prompt_mod = run_adaln(g, feed, taps, *sw.prompt_adaln, scaled_sigma(in, tsm), b).first;

    s.context = feed.add(g, s.stream + ".context", in.context);
    if (sw.caption_1) {
      const Value h = ops::gelu_tanh((*sw.caption_1)(s.context));
      s.context = taps((*sw.caption_2)(h), s.p + "caption_projection.out");
    }
    LTX_CHECK(s.context.dim(2) == d, "ltx.dit", s.stream, " context width ", s.context.dim(2), " != ", d);

    nn::LtxRopeSpec spec{d, heads, c.theta, audio ? c.audio_max_pos : c.max_pos, true, c.rope_mode, c.float64_grid};
    std::tie(s.pe_cos, s.pe_sin) = rope_inputs(s.stream, s.stream + ".pe", spec, in.positions);
    if (in.attention_mask.defined()) {
      const Tensor& mask = in.attention_mask;
      LTX_CHECK(mask.rank() == 3 && mask.dim(1) == mask.dim(2), "ltx.dit", "attention_mask must be [B, T, T], got ",
                mask.shape().str());
      const auto [bias, i] =
          feed.declare(g, s.stream + ".self_attention_bias", DType::F32, {mask.dim(0), 1, mask.dim(1), mask.dim(2)});
      feed.writes.push_back([mask, i = i](const Plan& plan) { self_attention_bias_into(mask, plan.input(i)); });
      feed.taps.emplace_back("self_attention_bias." + s.stream, i);
      s.self_bias = bias;
    }
    if (other != nullptr) {
      // Cross-modal tables: the time axis only, midpoint, max_pos = max of both streams' time max_pos.
      nn::LtxRopeSpec cs{c.audio_cross_attention_dim,
                         heads,
                         c.theta,
                         {std::max(c.max_pos[0], c.audio_max_pos[0])},
                         true,
                         c.rope_mode,
                         c.float64_grid};
      std::tie(s.cross_cos, s.cross_sin) =
          rope_inputs(s.stream + "_cross", s.stream + ".cross_pe", cs, in.positions.slice(1, 0, 1));
      // A<->V modulation timesteps (dit_config.h: AvTimestepSemantics).
      const std::vector<float> other_sigma = scaled_sigma(*other, tsm);
      const double factor = static_cast<double>(c.av_ca_timestep_scale_multiplier) / tsm;
      const bool own_ss = c.av_semantics != AvTimestepSemantics::OtherSigma;
      std::vector<float> gate = own_t;  // σ·tsm·factor, as the scale-shift timesteps are rounded then
      if (c.av_semantics == AvTimestepSemantics::OwnTokens)
        for (float& x : gate) x *= static_cast<float>(factor);
      else
        gate = scaled_sigma(*other, tsm, factor);
      s.av_ss = run_adaln(g, feed, taps, *sw.av_scale_shift, own_ss ? own_t : other_sigma, b).first;
      s.av_gate = run_adaln(g, feed, taps, *sw.av_gate, gate, b).first;
    }
    return s;
  }

  // Self-attention and text cross-attention of one stream; nothing for the samples where `off` disables it.
  void self_and_text(StreamArgs& s, const DitBlockStream& bw, int64_t i, Perturbation kind, Perturbation off) {
    const std::string bp = "transformer_blocks." + std::to_string(i) + ".";
    const std::string tn = bp + s.p + "scale_shift_table";
    const auto add = [&](const std::function<Value()>& make) {
      if (const auto r = pert.residual(g, feed, off, i, make)) s.x = ops::add(s.x, *r);
    };
    add([&] {
      const auto msa = nn::ada_values(bw.table, tn, s.mod, 0, 3);  // shift, scale, gate
      nn::AttentionCall call;
      call.pe_cos = s.pe_cos;
      call.pe_sin = s.pe_sin;
      call.rope_mode = c.rope_mode;
      call.mask = s.self_bias;
      const Mix m = pert.mix(kind, i);
      call.all_perturbed = m == Mix::All;
      if (m == Mix::Some) call.perturbation_mask = pert.keep_mask(g, feed, kind, i);
      const Value a = taps(bw.attn1(ops::modulate(rms(s.x, c.norm_eps), msa[1], msa[0]), call), bp + s.p + "attn1.out");
      return ops::mul(msa[2], a);
    });
    add([&] {
      nn::AttentionCall text;
      if (!c.cross_attention_adaln) {
        text.context = s.context;
        return taps(bw.attn2(rms(s.x, c.norm_eps), text), bp + s.p + "attn2.out");
      }
      // transformer.py:apply_cross_attention_adaln: rows 6..8 modulate the query, the prompt table the context.
      const auto q = nn::ada_values(bw.table, tn, s.mod, 6, 3);  // shift_q, scale_q, gate
      const auto kv = nn::ada_values(bw.prompt_table, bp + s.p + "prompt_scale_shift_table", *s.prompt_mod, 0, 2);
      text.context = ops::modulate(s.context, kv[1], kv[0]);
      const Value o = taps(bw.attn2(ops::modulate(rms(s.x, c.norm_eps), q[1], q[0]), text), bp + s.p + "attn2.out");
      return ops::mul(q[2], o);
    });
  }

  void feed_forward(StreamArgs& s, const DitBlockStream& bw, int64_t i, Perturbation off) {
    const std::string bp = "transformer_blocks." + std::to_string(i) + ".";
    const auto r = pert.residual(g, feed, off, i, [&] {
      const auto mlp = nn::ada_values(bw.table, bp + s.p + "scale_shift_table", s.mod, 3, 3);  // shift, scale, gate
      const Value f = taps(bw.ff(ops::modulate(rms(s.x, c.norm_eps), mlp[1], mlp[0])), bp + s.p + "ff.out");
      return ops::mul(mlp[2], f);
    });
    if (r) s.x = ops::add(s.x, *r);
  }

  // One direction of A<->V attention: rows r, r+1 of both tables (scale, shift), row 4 of the query's table plus
  // its gate AdaLN. Both streams read the snapshots qn/kn taken before either update.
  Value av_attention(const StreamArgs& q, const StreamArgs& k, Value qn, Value kn, const DitBlockStream& qw,
                     const DitBlockStream& kw, const nn::AttentionBlock& attn, int64_t r, int64_t i,
                     const std::string& name) {
    const std::string bp = "transformer_blocks." + std::to_string(i) + ".";
    const std::string qt = bp + "scale_shift_table_a2v_ca_" + q.stream;
    const std::string kt = bp + "scale_shift_table_a2v_ca_" + k.stream;
    const auto qss = nn::ada_values(qw.av_table.slice(0, 0, 4), qt, *q.av_ss, r, 2);  // scale, shift
    const auto kss = nn::ada_values(kw.av_table.slice(0, 0, 4), kt, *k.av_ss, r, 2);
    const auto gate = nn::ada_values(qw.av_table.slice(0, 4, 5), qt + ".gate", *q.av_gate, 0, 1);
    nn::AttentionCall call;
    call.context = ops::modulate(kn, kss[0], kss[1]);
    call.pe_cos = q.cross_cos;
    call.pe_sin = q.cross_sin;
    call.k_pe_cos = k.cross_cos;
    call.k_pe_sin = k.cross_sin;
    call.rope_mode = c.rope_mode;
    const Value o = taps(attn(ops::modulate(qn, qss[0], qss[1]), call), bp + name + ".out");
    return ops::mul(gate[0], o);
  }

  void block(int64_t i, StreamArgs* v, StreamArgs* a) {
    const DitBlockWeights& bw = w.blocks[static_cast<size_t>(i)];
    if (v) self_and_text(*v, *bw.video, i, Perturbation::SkipVideoSelfAttn, Perturbation::DisableVideo);
    if (a) self_and_text(*a, *bw.audio, i, Perturbation::SkipAudioSelfAttn, Perturbation::DisableAudio);
    if (v && a) {
      const Value vn = rms(v->x, c.norm_eps), an = rms(a->x, c.norm_eps);
      // Into a stream: nothing where its A<->V perturbation is set or the stream is disabled; both masks apply.
      const auto into = [&](StreamArgs& x, Perturbation skip, Perturbation off, const std::function<Value()>& make) {
        if (pert.mix(skip, i) == Mix::All) return;
        const auto r = pert.residual(g, feed, off, i, [&] { return *pert.residual(g, feed, skip, i, make); });
        if (r) x.x = ops::add(x.x, *r);
      };
      into(*v, Perturbation::SkipA2V, Perturbation::DisableVideo, [&] {
        return av_attention(*v, *a, vn, an, *bw.video, *bw.audio, *bw.audio_to_video, 0, i, "audio_to_video_attn");
      });
      into(*a, Perturbation::SkipV2A, Perturbation::DisableAudio, [&] {
        return av_attention(*a, *v, an, vn, *bw.audio, *bw.video, *bw.video_to_audio, 2, i, "video_to_audio_attn");
      });
    }
    if (v) feed_forward(*v, *bw.video, i, Perturbation::DisableVideo);
    if (a) feed_forward(*a, *bw.audio, i, Perturbation::DisableAudio);
    const std::string bp = "transformer_blocks." + std::to_string(i) + ".out.";
    if (v) v->x = taps(v->x, bp + "video");
    if (a) a->x = taps(a->x, bp + "audio");
  }

  // model.py:_process_output: LayerNorm (no affine) · (1 + scale) + shift with (shift, scale) = table + emb; then
  // proj_out; x0 = latent − velocity·t per token in f32.
  std::pair<Value, Value> head(const StreamArgs& s, const DitStreamWeights& sw) {
    const int64_t d = sw.out_table.dim(1);
    const auto row = [&](int64_t r) {
      const std::string name = s.p + "scale_shift_table[" + std::to_string(r) + "]";
      return ops::add(s.emb, g.constant(name, sw.out_table.slice(0, r, r + 1).reshape({d})));
    };
    const Value shift = row(0), scale = row(1);
    const Value x = ops::modulate(ops::layer_norm(s.x, std::nullopt, std::nullopt, c.norm_eps), scale, shift);
    const Value velocity = sw.proj_out(x);
    return {velocity, ops::sub(s.latent, ops::mul(velocity, s.timesteps))};
  }
};

}  // namespace

DitOutput Dit::run(const DitCall& call, bool collect_intermediates) {
  const DitConfig& c = config_;
  LTX_CHECK(call.video.has_value(), "ltx.dit", "a call needs video inputs (audio-only DiTs are not supported)");
  LTX_CHECK(!call.audio || c.has_audio(), "ltx.dit", "audio inputs given to a video-only DiT");
  const int64_t b = call.video->latent.dim(0);
  LTX_CHECK(!call.audio || call.audio->latent.dim(0) == b, "ltx.dit", "video and audio batch sizes differ");
  LTX_CHECK(call.perturbations.empty() || static_cast<int64_t>(call.perturbations.size()) == b, "ltx.dit",
            call.perturbations.size(), " perturbation configs for batch ", b);

  Graph g;
  CallInputs feed;
  Taps taps{.collect = collect_intermediates};
  DitOutput out;
  const Perturbations pert{&call.perturbations, b};
  Builder bld{g, feed, taps, c, weights_, pert};
  const DitStreamInput* vin = &*call.video;
  const DitStreamInput* ain = call.audio ? &*call.audio : nullptr;
  // Empty streams are skipped, as transformer.py's run_vx/run_ax (numel() > 0).
  const bool run_v = vin->latent.numel() > 0, run_a = ain && ain->latent.numel() > 0;
  std::optional<StreamArgs> v, a;
  if (run_v) v = bld.prepare(*weights_.video, *vin, run_a ? ain : nullptr, false);
  if (run_a) a = bld.prepare(*weights_.audio, *ain, run_v ? vin : nullptr, true);
  for (int64_t i = 0; i < c.n_layers; ++i) bld.block(i, v ? &*v : nullptr, a ? &*a : nullptr);
  if (v) {
    const auto [vel, x0] = bld.head(*v, *weights_.video);
    g.output(vel, "video.velocity");
    g.output(x0, "video.denoised");
  }
  if (a) {
    const auto [vel, x0] = bld.head(*a, *weights_.audio);
    g.output(vel, "audio.velocity");
    g.output(x0, "audio.denoised");
  }
  taps.declare_outputs(g);

  CompileOptions options = CompileOptions::from_env();
  options.inputs_in_arena = true;
  Plan& plan = plans_.get(g, options);
  last_plan_stats_ = plan.stats();
  plan.set_streaming(streaming_);
  last_streamer_ = plan.streamer();
  feed.write(plan);
  if (collect_intermediates)  // before the run: an input's slot is reused after its last reader
    for (const auto& [name, i] : feed.taps) out.intermediates[name] = plan.input(i).clone();
  const auto results = plan.run();
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = plan.output_names()[i];
    Tensor t = results[i].clone();
    if (name == "video.velocity")
      out.video_velocity = t;
    else if (name == "video.denoised")
      out.video_denoised = t;
    else if (name == "audio.velocity")
      out.audio_velocity = t;
    else if (name == "audio.denoised")
      out.audio_denoised = t;
    else
      out.intermediates[name] = t;
  }
  if (!collect_intermediates) out.intermediates.clear();
  return out;
}

}  // namespace ltx::ltxm
