#include "models/ltx/dit/lora_fuse.h"

#include <chrono>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/half.h"
#include "graph/builder.h"

namespace ltx::ltxm {
namespace {

// Every Linear of the DiT: attention q/k/v/out/gate (self, cross, A<->V), feed-forwards, AdaLN and timestep
// embedders, patchify / proj_out, caption projections.
void collect(nn::Linear& l, std::vector<nn::Linear*>& out) { out.push_back(&l); }
void collect(std::optional<nn::Linear>& l, std::vector<nn::Linear*>& out) {
  if (l) out.push_back(&*l);
}
void collect(nn::AdaLayerNormSingle& a, std::vector<nn::Linear*>& out) {
  collect(a.emb.linear_1, out);
  collect(a.emb.linear_2, out);
  collect(a.linear, out);
}
void collect(std::optional<nn::AdaLayerNormSingle>& a, std::vector<nn::Linear*>& out) {
  if (a) collect(*a, out);
}
void collect(nn::AttentionBlock& a, std::vector<nn::Linear*>& out) {
  for (nn::Linear* l : {&a.to_q, &a.to_k, &a.to_v, &a.to_out}) collect(*l, out);
  collect(a.to_gate_logits, out);
}
void collect(std::optional<nn::AttentionBlock>& a, std::vector<nn::Linear*>& out) {
  if (a) collect(*a, out);
}

std::vector<nn::Linear*> dit_linears(DitWeights& w) {
  std::vector<nn::Linear*> out;
  for (auto* s : {&w.video, &w.audio}) {
    if (!*s) continue;
    DitStreamWeights& sw = **s;
    collect(sw.patchify, out);
    collect(sw.adaln, out);
    collect(sw.prompt_adaln, out);
    collect(sw.caption_1, out);
    collect(sw.caption_2, out);
    collect(sw.proj_out, out);
    collect(sw.av_scale_shift, out);
    collect(sw.av_gate, out);
  }
  for (DitBlockWeights& b : w.blocks) {
    for (auto* s : {&b.video, &b.audio}) {
      if (!*s) continue;
      collect((*s)->attn1, out);
      collect((*s)->attn2, out);
      collect((*s)->ff.proj_in, out);
      collect((*s)->ff.proj_out, out);
    }
    collect(b.audio_to_video, out);
    collect(b.video_to_audio, out);
  }
  return out;
}

// Host-side f32 copy of a tensor (any stored dtype, quantized ones dequantized), contiguous.
Tensor as_f32(const Tensor& t) { return t.dtype() == DType::F32 ? t.contiguous() : t.to(DType::F32); }

}  // namespace

DitLoraFuser::DitLoraFuser(Dit& dit, std::shared_ptr<const WeightSource> source, DType compute, std::string prefix)
    : dit_(dit),
      source_(std::move(source)),
      compute_(compute),
      prefix_(std::move(prefix)),
      plans_(dit.plans().backend()) {
  // Pointers into the weight structs: their layout is fixed once loaded, only tensors are replaced.
  for (nn::Linear* l : dit_linears(dit_.weights_for_update())) {
    LTX_CHECK(l->name.rfind(prefix_, 0) == 0, "lora", "DiT layer ", l->name, " is not under ", prefix_);
    const std::string module = l->name.substr(prefix_.size());
    linears_[module] = l;
    targets_.modules.push_back(module);
  }
  targets_.shape = [this](const std::string& module) {
    const Tensor& w = linears_.at(module)->weight;
    return std::pair<int64_t, int64_t>{w.dim(0), w.dim(1)};
  };
}

Tensor DitLoraFuser::stored(const std::string& module) const {
  const std::string key = prefix_ + module + ".weight";
  LTX_CHECK(source_->contains(key), "lora", source_->describe(), " no longer has ", key);
  return source_->get(key);
}

float DitLoraFuser::stored_scale(const std::string& module) const {
  const std::string key = prefix_ + module + ".weight_scale";
  return source_->contains(key) ? source_->get(key).to_floats().at(0) : 1.0f;
}

void DitLoraFuser::set_application(LoraApplication a) {
  LTX_CHECK(current_.empty(), "lora", "the LoRA application mode is set before any LoRA is applied");
  application_ = a;
}

LoraFuseReport DitLoraFuser::apply(std::span<const WeightedLora> loras) {
  const auto t0 = std::chrono::steady_clock::now();
  LoraFuseReport report;
  std::vector<std::pair<const LoraAdapter*, float>> wanted;
  for (const WeightedLora& l : loras)
    if (l.strength != 0.0f) wanted.emplace_back(l.adapter, l.strength);
  if (wanted == current_) return report;

  // Updates per module, in target order: U = [s_1·B_1 | s_2·B_2 | ...] [out, R], D = [A_1; A_2; ...] [R, in].
  std::map<std::string, std::vector<std::pair<const LoraLayer*, float>>> updates;
  for (const auto& [adapter, strength] : wanted)
    for (const LoraLayer& layer : adapter->layers) {
      LTX_CHECK(linears_.count(layer.target), "lora", adapter->path, ": ", layer.target, " is not a layer of this DiT");
      updates[layer.target].emplace_back(&layer, strength * layer.scale);
    }

  dit_.weights_for_update();  // drops the DiT's plans: they bind the weights being replaced
  std::vector<std::string> now_fused;
  if (application_ == LoraApplication::Unfused) {
    for (const std::string& module : fused_)
      if (!updates.count(module)) {
        linears_.at(module)->low_rank.clear();
        ++report.layers_restored;
      }
    for (const auto& [module, list] : updates) {
      nn::Linear& linear = *linears_.at(module);
      linear.low_rank.clear();
      for (const auto& [layer, s] : list)
        linear.low_rank.push_back(
            {nn::prepare_matrix(layer->down, compute_), nn::prepare_matrix(layer->up, compute_), s});
      now_fused.push_back(module);
      ++report.layers_fused;
    }
    fused_ = std::move(now_fused);
    current_ = std::move(wanted);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return report;
  }
  for (const auto& [module, list] : updates) {
    nn::Linear& linear = *linears_.at(module);
    const Tensor base = stored(module);
    const int64_t n_out = base.dim(0), n_in = base.dim(1);
    const DType resident = dtype_is_quantized(base.dtype()) ? compute_ : linear.weight.dtype();
    // ltx_core/loader/fuse_loras.py (_prepare_deltas, _fuse_delta_with_bfloat16) rounds a bf16 model's update in
    // steps: per LoRA bf16(B·strength) when the file stores B in bf16, its delta B·A rounded to bf16, the deltas' sum
    // rounded to bf16, then W + sum rounded to bf16. Any other resident dtype gets W + Σ s·B·A rounded once.
    const bool bf16_steps = resident == DType::BF16;
    Graph g;
    const Value w = g.input("w", DType::F32, {n_out, n_in});
    const auto to_bf16_and_back = [](Value v) { return ops::cast(ops::cast(v, DType::BF16), DType::F32); };
    std::optional<Value> sum;
    std::vector<Tensor> inputs;
    for (const auto& [layer, s] : list) {
      const int64_t r = layer->down.dim(0);
      Tensor up = as_f32(layer->up).clone();
      for (float& v : std::span<float>(up.data<float>(), static_cast<size_t>(up.numel()))) {
        v *= s;
        if (bf16_steps && layer->up.dtype() == DType::BF16) v = bf16_to_f32(f32_to_bf16(v));
      }
      const std::string i = std::to_string(inputs.size() / 2);
      const Value u = g.input("up" + i, DType::F32, {n_out, r});  // inputs in the order plan.run takes them
      const Value d = g.input("down" + i, DType::F32, {r, n_in});
      Value delta = ops::matmul(u, d);
      if (bf16_steps) delta = to_bf16_and_back(delta);
      sum = sum ? ops::add(*sum, delta) : delta;
      inputs.push_back(std::move(up));
      inputs.push_back(as_f32(layer->down));
    }
    if (bf16_steps && list.size() > 1) sum = to_bf16_and_back(*sum);
    g.output(ops::cast(ops::add(w, *sum), resident), "fused");
    Plan& plan = plans_.get(g);
    // An fp8 weight with a per-tensor weight_scale fuses into its dequantized value W8·scale, and the result (no
    // longer on the fp8 grid) carries scale 1. ltx_core/loader/fuse_loras.py _fuse_delta_with_scaled_fp8 adds the
    // delta to the same W8·scale in f32 but re-quantizes to fp8 with a new per-tensor scale; keeping the compute
    // dtype is closer to W + delta and costs one more byte per element of the touched matrices.
    Tensor base_f32 = as_f32(base);
    const float base_scale = stored_scale(module);
    if (base_scale != 1.0f) {
      base_f32 = base_f32.clone();
      for (float& v : std::span<float>(base_f32.data<float>(), static_cast<size_t>(base_f32.numel()))) v *= base_scale;
    }
    inputs.insert(inputs.begin(), base_f32);
    const Tensor fused = plan.run(inputs)[0].clone();
    if (dtype_is_quantized(linear.weight.dtype()))
      report.dequantized_bytes += static_cast<int64_t>(fused.nbytes() - linear.weight.nbytes());
    linear.weight = fused;
    linear.weight_scale = 1.0f;
    now_fused.push_back(module);
    ++report.layers_fused;
  }
  for (const std::string& module : fused_) {
    if (updates.count(module)) continue;
    nn::Linear& linear = *linears_.at(module);
    linear.weight = nn::prepare_matrix(stored(module), compute_);
    linear.weight_scale = stored_scale(module);
    ++report.layers_restored;
  }
  fused_ = std::move(now_fused);
  current_ = std::move(wanted);
  plans_.clear();  // their arenas are sized for the largest matrix: not worth keeping resident
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace ltx::ltxm
