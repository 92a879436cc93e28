// Golden-case runners for whole pipelines (components "pipeline_one_stage", "pipeline_two_stage", "pipeline_i2v",
// "pipeline_distilled", "pipeline_two_stage_lora", "pipeline_keyframes", "pipeline_a2v", "pipeline_hq",
// "pipeline_iclora" and "pipeline_retake"; tests/golden/pipeline/, made by
// tools/reference/make_{pipeline,a2v,keyframe,hq,iclora,retake}_goldens.py): the recorded noise is replayed in draw
// order, and every observed latent, x0, position and sigma is returned under the case's names, so each step is
// compared. The one-stage, image-to-video and distilled-LoRA cases also decode video (frames) and audio (mel,
// waveform).
#include "core/error.h"
#include "io/safetensors.h"
#include "nn/weight_loader.h"
#include "nn/weight_source.h"
#include "stages/audio_input.h"
#include "stages/av_models.h"
#include "stages/ic_lora_input.h"
#include "stages/image_conditioning.h"
#include "stages/lora_weights.h"
#include "stages/media.h"
#include "stages/pipelines.h"
#include "stages/retake_input.h"
#include "verify/components.h"
#include "verify/ltx_runner_util.h"

namespace ltx {
namespace {

using namespace stages;

GuiderParams guider_from_json(const nlohmann::json& j) {
  GuiderParams g;
  g.cfg_scale = j.at("cfg_scale").get<float>();
  g.stg_scale = j.at("stg_scale").get<float>();
  g.stg_blocks = j.at("stg_blocks").get<std::vector<int64_t>>();
  g.rescale_scale = j.at("rescale_scale").get<float>();
  g.modality_scale = j.at("modality_scale").get<float>();
  g.skip_step = j.at("skip_step").get<int>();
  return g;
}

AvGuidance guidance_from_json(const nlohmann::json& j) {
  return {guider_from_json(j.at("video")), guider_from_json(j.at("audio"))};
}

// An input a case may leave out (a key absent or null), as the official call may: nullptr then. A runner reads every
// optional input through this, so that a case can say "absent" and the engine's path without it is checked.
const nlohmann::json* optional_param(const nlohmann::json& params, const char* key) {
  const auto it = params.find(key);
  return it == params.end() || it->is_null() ? nullptr : &*it;
}

// The weights file of the case that params.shared_weights names (a case run on another case's models).
std::string shared_weights_file(const GoldenCase& c) {
  return c.dir + "/../" + c.params().at("shared_weights").get<std::string>() + "/weights.safetensors";
}

TextContexts contexts(const SafetensorsFile& in) {
  return {in.get("context.video.positive"), in.get("context.audio.positive"), in.get("context.video.negative"),
          in.get("context.audio.negative")};
}

// The case's noise.NNNN tensors, in draw order.
NoiseReplayer recorded_noise(const SafetensorsFile& in) {
  std::vector<std::pair<std::string, Tensor>> entries;
  for (const TensorInfo& t : in.tensors())
    if (t.name.rfind("noise.", 0) == 0) entries.emplace_back(t.name, in.get(t.name));
  return NoiseReplayer(entries);
}

// The frame count, size and rate every pipeline case records.
GenerationSpec video_shape_from_params(const nlohmann::json& p) {
  GenerationSpec s;
  s.frames = p.at("num_frames").get<int64_t>();
  s.height = p.at("height").get<int64_t>();
  s.width = p.at("width").get<int64_t>();
  s.fps = p.at("fps").get<double>();
  return s;
}

GenerationSpec spec_from_params(const nlohmann::json& p) {
  GenerationSpec s = video_shape_from_params(p);
  s.steps = p.at("num_inference_steps").get<int>();
  return s;
}

// The distilled flow's spec: its sigma lists fix the steps, so the case records none.
GenerationSpec distilled_spec_from_params(const nlohmann::json& p) {
  GenerationSpec s = video_shape_from_params(p);
  s.distilled = true;
  return s;
}

Observer collect_into(std::map<std::string, Tensor>& out) {
  return [&out](const std::string& name, const Tensor& t) { out[name] = t.clone(); };
}

void check_replayed_all(const NoiseReplayer& noise) {
  LTX_CHECK(noise.remaining() == 0, "verify", noise.remaining(), " recorded noise tensors were not drawn");
}

// The final latents decoded as a pipeline case records them (video.decoded, audio.mel, audio.waveform [2, N]);
// every recorded noise tensor must have been drawn by then.
void decode_into(const AvModels& models, const AvLatents& latents, NoiseReplayer& noise,
                 std::map<std::string, Tensor>& out) {
  out["video.decoded"] = decode_video(golden_backend(), *models.video_decoder, latents.video, &noise);
  const Tensor mel = decode_audio_mel(golden_backend(), *models.audio_decoder, latents.audio);
  out["audio.mel"] = mel;
  const Tensor wave = models.vocoder->run(golden_backend(), mel);  // [1, 2, N]
  out["audio.waveform"] = wave.reshape({wave.dim(1), wave.dim(2)});
  check_replayed_all(noise);
}

std::map<std::string, Tensor> run_one_stage_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  AvModels models = load_av_models(open_safetensors(c.weights_path()), compute_dtype(p), golden_backend());
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance"));
  std::map<std::string, Tensor> out;
  const AvLatents latents = run_one_stage(*models.dit, spec, contexts(in), noise, collect_into(out));
  decode_into(models, latents, noise, out);
  return out;
}

std::map<std::string, Tensor> run_two_stage_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto source = open_safetensors(c.weights_path());
  AvModels models =
      load_av_models(source, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  // The case stores the upsampler file's tensors under a prefix, its config under `upsampler_config`.
  const auto up = load_upsampler(source, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance").at("stage_1"));
  std::map<std::string, Tensor> out;
  run_two_stage({*models.dit, *models.dit, up, models.video_stats}, spec, contexts(in), noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// Distilled (ltx_pipelines/distilled.py): the two-stage case's weights, both stages without guidance on the
// distilled sigma lists (GenerationSpec::distilled).
std::map<std::string, Tensor> run_distilled_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto source = open_safetensors(shared_weights_file(c));
  AvModels models =
      load_av_models(source, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  const auto up = load_upsampler(source, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  const GenerationSpec spec = distilled_spec_from_params(params);
  const TextContexts text{in.get("context.video.positive"), in.get("context.audio.positive"), {}, {}};
  std::map<std::string, Tensor> out;
  run_two_stage({*models.dit, *models.dit, up, models.video_stats}, spec, text, noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// A checkpoint's float32 tensors as the bf16 file the reference wrote from them (each rounded to nearest even, as
// torch's .to(torch.bfloat16)); other dtypes as stored.
class Bf16Checkpoint final : public WeightSource {
 public:
  explicit Bf16Checkpoint(std::shared_ptr<const WeightSource> file) : file_(std::move(file)) {}
  std::vector<std::string> names() const override { return file_->names(); }
  bool contains(std::string_view name) const override { return file_->contains(name); }
  DType dtype(std::string_view name) const override {
    const DType d = file_->dtype(name);
    return d == DType::F32 ? DType::BF16 : d;
  }
  Shape shape(std::string_view name) const override { return file_->shape(name); }
  Tensor get(std::string_view name) const override {
    const Tensor t = file_->get(name);
    return t.dtype() == DType::F32 ? t.to(DType::BF16) : t;
  }
  const std::map<std::string, std::string>& metadata() const override { return file_->metadata(); }
  std::string describe() const override { return file_->describe() + " (rounded to bf16)"; }

 private:
  std::shared_ptr<const WeightSource> file_;
};

// Two stages with the distilled LoRA as its own file, through the code path `ltx generate --two-stage
// --distilled-lora FILE:STRENGTH` takes (stages/generate.cpp): the LoRA file is read against the checkpoint's
// layer list (read_loras), LoraWeights holds the one resident DiT on the stage-1 set (the bare checkpoint), and
// run_two_stage's before_stage2 hook switches it to the stage-2 set (base + the distilled LoRA), as
// ti2vid_two_stages.py builds its stage-2 transformer from the stage-1 ledger with_additional_loras.
//
// The checkpoint is bf16, as a real one and as the reference's (ltx-core fuses LoRAs into bf16 or fp8 stored
// weights only): the shared case's float32 file rounded to bf16 (Bf16Checkpoint), for every model. In validation
// every weight is those bf16 values widened and the LoRA is fused in f32 (W_bf16 + strength·B·A, DitLoraFuser),
// as ltx-core's float32 ledger fuses over a bf16 checkpoint (the golden); in production the DiT is bf16-resident
// and the fused matrices are rounded to bf16 once, as the official bf16 pipeline does (its run set the
// production tolerances). The case's LoRA values and strength are dyadic, so strength·B·A is exact in any dtype
// and our fused weights equal ltx-core's bit for bit in both precisions, though ltx-core rounds the product to the
// LoRA's bf16 first; so unlike dit/lora_official (bf16-resident in both precisions, compared at the production
// tolerance) validation here keeps the all-f32 path and the case's validation tolerance. The DiT and decoders are
// the shared one-stage case's, the upsampler the two-stage case's (its own float32 file).
// The LoRA two-stage flow of the cases below: `request`'s LoRA files read against the bf16 checkpoint's layers, the
// one resident DiT on the stage-1 set and switched to the stage-2 set by before_stage2; decoded when `decode`.
std::map<std::string, Tensor> run_lora_two_stage(const GoldenCase& c, Precision p, const LoraRequest& request,
                                                 const GenerationSpec& spec, bool decode) {
  const nlohmann::json& params = c.params();
  const std::string root = c.dir + "/../";
  const auto checkpoint = std::make_shared<const Bf16Checkpoint>(
      open_safetensors(root + params.at("shared_weights").get<std::string>() + "/weights.safetensors"));
  const auto up_source =
      open_safetensors(root + params.at("upsampler_weights").get<std::string>() + "/weights.safetensors");
  const std::string prefix = params.at("weights_prefix").get<std::string>();
  std::vector<ltxm::LoraAdapter> adapters = read_loras(request, checkpoint_lora_targets(*checkpoint, prefix));
  AvModels models = load_av_models(checkpoint, compute_dtype(p), golden_backend(),
                                   {.video_decoder = decode, .audio_decoder = decode});
  LoraWeights lora(*models.dit, checkpoint, compute_dtype(p), request, {}, prefix, std::move(adapters));
  const auto up = load_upsampler(up_source, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  std::map<std::string, Tensor> out;
  const AvLatents latents =
      run_two_stage({*models.dit, *models.dit, up, models.video_stats, [&lora] { lora.use_stage2(); }}, spec,
                    contexts(in), noise, collect_into(out));
  if (decode)
    decode_into(models, latents, noise, out);
  else
    check_replayed_all(noise);
  return out;
}

std::map<std::string, Tensor> run_two_stage_lora_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const LoraRequest request{.distilled_lora =
                                ltxm::LoraSpec{c.dir + "/" + params.at("distilled_lora_file").get<std::string>(),
                                               params.at("distilled_lora_strength").get<float>()}};
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance").at("stage_1"));
  return run_lora_two_stage(c, p, request, spec, /*decode=*/true);
}

// The HQ pipeline (ltx_pipelines/ti2vid_two_stages_hq.py, tools/reference/make_hq_goldens.py): the distilled-LoRA
// case's flow and files with the LoRA in stage 1 too (at its stage-1 strength) and the res_2s sampler in both
// stages, whose SDE noise the engine draws itself; every evaluation of every step is compared.
std::map<std::string, Tensor> run_hq_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const LoraRequest request{
      .distilled_lora = ltxm::LoraSpec{c.dir + "/" + params.at("distilled_lora_file").get<std::string>(),
                                       params.at("distilled_lora_strength_stage_2").get<float>()},
      .distilled_stage1_strength = params.at("distilled_lora_strength_stage_1").get<float>()};
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance").at("stage_1"));
  spec.sampler = Sampler::Res2s;
  return run_lora_two_stage(c, p, request, spec, /*decode=*/false);
}

// Conditioned tokens (an image's, a frozen audio's) have timesteps below σ, where the A<->V modulation semantics
// differ: such cases are ltx-core 1.0.0's (dit_config.h AvTimestepSemantics::OtherSigma), not the loader's default.
void use_reference_av_semantics(AvModels& models, const std::shared_ptr<const WeightSource>& source, Precision p) {
  ltxm::DitConfig dit_config = models.dit->config();
  dit_config.av_semantics = ltxm::AvTimestepSemantics::OtherSigma;
  models.dit = std::make_unique<ltxm::Dit>(
      ltxm::Dit::load(WeightLoader(source, "model.diffusion_model."), dit_config, compute_dtype(p), golden_backend()));
}

// Image-to-video: the encoder is the case's own file; the DiT and decoders are the shared case's. The recorded
// preprocessed pixels (image.N.pixels) feed the encoder, so the chain is compared exactly from there; the H.264
// round trip and the resize are tested apart (tests/pipeline/image_conditioning_test.cpp).
std::map<std::string, Tensor> run_i2v_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto source = open_safetensors(shared_weights_file(c));
  AvModels models = load_av_models(source, compute_dtype(p), golden_backend());
  use_reference_av_semantics(models, source, p);
  auto encoder = std::make_shared<const video_vae::VideoEncoder>(
      load_video_encoder(open_safetensors(c.weights_path()), compute_dtype(p)));
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  std::vector<ImageConditionInput> images;
  for (const auto& im : params.at("images"))
    images.push_back({"", im.at("frame").get<int64_t>(), im.at("strength").get<double>(), im.at("crf").get<int>()});
  std::map<std::string, Tensor> out;
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance"));
  spec.video_conditions = [&](int64_t height, int64_t width) {
    std::vector<VideoCondition> conditions;
    for (size_t i = 0; i < images.size(); ++i) {
      const Tensor pixels = in.get("image." + std::to_string(i) + ".pixels");
      LTX_CHECK(pixels.dim(3) == height && pixels.dim(4) == width, "verify", "recorded pixels ", pixels.shape().str(),
                " are not ", height, "x", width);
      const Tensor latent = encode_pixels(golden_backend(), *encoder, pixels);
      out["image." + std::to_string(i) + ".latent"] = latent;
      conditions.push_back({latent, images[i].frame, images[i].strength});
    }
    return conditions;
  };
  NoiseReplayer noise = recorded_noise(in);
  const AvLatents latents = run_one_stage(*models.dit, spec, contexts(in), noise, collect_into(out));
  decode_into(models, latents, noise, out);
  return out;
}

// Keyframe interpolation (ltx_pipelines/keyframe_interpolation.py, tools/reference/make_keyframe_goldens.py): the
// shared two-stage case's DiT and upsampler, this case's video encoder, the recorded preprocessed pixels at each
// stage's size through the engine's image_conditioner with every image as keyframe tokens.
std::map<std::string, Tensor> run_keyframes_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto shared = open_safetensors(shared_weights_file(c));
  AvModels models =
      load_av_models(shared, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  use_reference_av_semantics(models, shared, p);
  const auto up = load_upsampler(shared, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  auto encoder = std::make_shared<const video_vae::VideoEncoder>(
      load_video_encoder(open_safetensors(c.weights_path()), compute_dtype(p)));
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  std::vector<ImageConditionInput> images;
  for (const auto& im : params.at("images"))
    images.push_back({"", im.at("frame").get<int64_t>(), im.at("strength").get<double>(), im.at("crf").get<int>()});
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance").at("stage_1"));
  const auto recorded = [&in](size_t i, int64_t height, int64_t width) {
    return in.get("image." + std::to_string(i) + ".pixels." + std::to_string(height) + "x" + std::to_string(width));
  };
  spec.video_conditions = image_conditioner(golden_backend(), images, encoder, recorded, /*all_keyframes=*/true);
  NoiseReplayer noise = recorded_noise(in);
  std::map<std::string, Tensor> out;
  run_two_stage({*models.dit, *models.dit, up, models.video_stats}, spec, contexts(in), noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// IC-LoRA (ltx_pipelines/ic_lora.py, tools/reference/make_iclora_goldens.py): the case's LoRA file read against the
// bf16 checkpoint (the two-stage case's file rounded, as the reference's) and fused into stage 1 only, its
// reference_downscale_factor read from the file's metadata, control.mov and mask.mov read and pooled as the engine's
// generate does, the images from their recorded pixels; stage 1 on the distilled sigmas, stage 2 on the bare DiT.
// Without a mask video (ic_lora_no_mask) the case's conditioning_attention_strength weighs the reference alone.
std::map<std::string, Tensor> run_iclora_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const nlohmann::json& shared = params.at("shared_weights");
  const auto file = [&](const char* what) {
    return std::make_shared<const Bf16Checkpoint>(
        open_safetensors(c.dir + "/../" + shared.at(what).get<std::string>() + "/weights.safetensors"));
  };
  const auto checkpoint = file("dit");
  const nlohmann::json& ic = params.at("ic_lora");
  const std::string lora_path = c.dir + "/" + ic.at("file").get<std::string>();
  const LoraRequest request{.loras = {ltxm::LoraSpec{lora_path, ic.at("strength").get<float>()}}};
  std::vector<ltxm::LoraAdapter> adapters =
      read_loras(request, checkpoint_lora_targets(*checkpoint, "model.diffusion_model."));
  AvModels models =
      load_av_models(checkpoint, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  use_reference_av_semantics(models, checkpoint, p);
  LoraWeights lora(*models.dit, checkpoint, compute_dtype(p), request, {}, "model.diffusion_model.",
                   std::move(adapters));
  const auto up = load_upsampler(checkpoint, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  auto encoder =
      std::make_shared<const video_vae::VideoEncoder>(load_video_encoder(file("video_encoder"), compute_dtype(p)));
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  GenerationSpec spec = distilled_spec_from_params(params);
  std::vector<ImageConditionInput> images;
  for (const auto& im : params.at("images"))
    images.push_back({"", im.at("frame").get<int64_t>(), im.at("strength").get<double>(), im.at("crf").get<int>()});
  spec.video_conditions =
      image_conditioner(golden_backend(), images, encoder, [&in](size_t i, int64_t height, int64_t width) {
        return in.get("image." + std::to_string(i) + ".pixels." + std::to_string(height) + "x" + std::to_string(width));
      });
  std::map<std::string, Tensor> out;
  const nlohmann::json& reference = params.at("reference_video");
  const nlohmann::json* mask_input = optional_param(params, "attention_mask_video");
  const double attention_strength = mask_input ? mask_input->at("strength").get<double>()
                                               : params.at("conditioning_attention_strength").get<double>();
  const ReferenceRequest refs{
      {{c.dir + "/" + reference.at("file").get<std::string>(), reference.at("strength").get<double>()}},
      attention_strength,
      mask_input ? c.dir + "/" + mask_input->at("file").get<std::string>() : "",
      spec.height / 2,
      spec.width / 2,
      spec.frames,
      read_ic_lora_metadata({lora_path}).downscale_factor,
      compute_dtype(p)};
  spec.references = reference_conditions(golden_backend(), *encoder, refs);
  const Tensor& latent = spec.references.at(0).latent;
  out["reference.0.latent." + std::to_string(refs.height / refs.downscale_factor) + "x" +
      std::to_string(refs.width / refs.downscale_factor)] = latent;
  if (mask_input) {  // the mask at two points of its chain: as read, and pooled to the reference latent
    const Tensor mask = load_attention_mask_pixels(refs.mask, refs.height, refs.width, refs.frames);
    out["mask.pixels"] = mask;
    out["mask.latent"] =
        Tensor::from_floats(DType::F32, {1, latent.dim(2) * latent.dim(3) * latent.dim(4)},
                            attention_mask_weights(mask, latent.dim(2), latent.dim(3), latent.dim(4), 1.0));
  }
  NoiseReplayer noise = recorded_noise(in);
  const TextContexts text{in.get("context.video.positive"), in.get("context.audio.positive"), {}, {}};
  run_two_stage({*models.dit, *models.dit, up, models.video_stats, [&lora] { lora.use_stage2(false); }}, spec, text,
                noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// Audio-to-video (ltx_pipelines/a2vid_two_stage.py, tools/reference/make_a2v_goldens.py): the case's input.wav
// read and encoded as the engine's generate does (no max_duration: the engine's default, which the case made by the
// official command line pins), then the two-stage flow with that audio held fixed; outputs the clip (the
// pipeline's returned audio), its encoded latent and the final latents.
std::map<std::string, Tensor> run_a2v_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto source =
      open_safetensors(optional_param(params, "shared_weights") ? shared_weights_file(c) : c.weights_path());
  AvModels models =
      load_av_models(source, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  use_reference_av_semantics(models, source, p);
  const auto up = load_upsampler(source, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  GenerationSpec spec = spec_from_params(params);
  spec.guidance.video = guider_from_json(params.at("guidance").at("stage_1").at("video"));
  const nlohmann::json& audio = params.at("audio_input");
  const nlohmann::json* max_duration = optional_param(audio, "max_duration");
  const AudioClip clip =
      read_audio_clip(c.dir + "/" + audio.at("file").get<std::string>(), audio.at("start").get<double>(),
                      a2v_audio_max_duration(max_duration ? std::optional(max_duration->get<double>()) : std::nullopt,
                                             spec.frames, spec.fps));
  const Tensor encoded = encode_audio_clip(golden_backend(), source, compute_dtype(p), clip);
  spec.audio_latent = held_audio_latent(encoded, audio_latent_shape(models.dit->config(), 1, spec.frames, spec.fps),
                                        clip, static_cast<double>(spec.frames) / spec.fps);
  std::map<std::string, Tensor> out;
  out["audio.clip"] = Tensor::from_floats(DType::F32, {clip.channels, clip.length()}, clip.samples);
  out["audio.encoded"] = spec.audio_latent;
  run_two_stage({*models.dit, *models.dit, up, models.video_stats}, spec, contexts(in), noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// Retake (ltx_pipelines/retake.py, tools/reference/make_retake_goldens.py): the case's input.mov read and encoded as
// the engine's generate does (read_retake_source; the video encoder of the keyframe case, the audio encoder of the
// A2V case, the DiT of the two-stage case), then one stage from the encoded latents with the region masks.
std::map<std::string, Tensor> run_retake_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const nlohmann::json& shared = params.at("shared_weights");
  const auto file = [&](const char* what) {
    return open_safetensors(c.dir + "/../" + shared.at(what).get<std::string>() + "/weights.safetensors");
  };
  const auto dit_source = file("dit");
  AvModels models =
      load_av_models(dit_source, compute_dtype(p), golden_backend(), {.video_decoder = false, .audio_decoder = false});
  use_reference_av_semantics(models, dit_source, p);
  const nlohmann::json& retake = params.at("retake");
  const RetakeSource source = read_retake_source(c.dir + "/" + retake.at("file").get<std::string>());
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance"));
  std::map<std::string, Tensor> out;
  GenerationSpec::Retake r;
  r.video_latent =
      encode_pixels(golden_backend(), load_video_encoder(file("video_encoder"), compute_dtype(p)), source.pixels);
  out["video.encoded"] = r.video_latent;
  if (source.audio) {  // a source without audio (retake_silent): the whole audio generated, as retake.py does
    out["audio.clip"] =
        Tensor::from_floats(DType::F32, {source.audio->channels, source.audio->length()}, source.audio->samples);
    const int64_t audio_frames = audio_latent_shape(models.dit->config(), 1, spec.frames, spec.fps).frames;
    r.audio_latent = fit_audio_latent(
        encode_audio_clip(golden_backend(), file("audio_encoder"), compute_dtype(p), *source.audio), audio_frames, 1);
    out["audio.encoded"] = r.audio_latent;
  }
  r.start = retake.at("start").get<double>();
  r.end = retake.at("end").get<double>();
  r.keep_video = retake.at("keep_video").get<bool>();
  r.keep_audio = retake.at("keep_audio").get<bool>();
  spec.retake = r;
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  run_one_stage(*models.dit, spec, contexts(in), noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

// retake.py TemporalRegionMask over the case's windows (make_retake_goldens.py MASK_WINDOWS): the masks the engine
// sets from each stream's token time spans, compared exactly (ties on token boundaries included).
std::map<std::string, Tensor> run_retake_masks_case(const GoldenCase& c, Precision) {
  const nlohmann::json& params = c.params();
  const int64_t height = params.at("height").get<int64_t>(), width = params.at("width").get<int64_t>();
  std::map<std::string, Tensor> out;
  size_t i = 0;
  for (const nlohmann::json& w : params.at("windows")) {
    const double fps = w.at("fps").get<double>(), start = w.at("start").get<double>(), end = w.at("end").get<double>();
    const int64_t frames = w.at("frames").get<int64_t>();
    const std::string name = "mask." + std::to_string(i++);
    const VideoLatentShape video = VideoLatentShape::from_pixels(1, 1, frames, height, width);
    const AudioLatentShape audio = AudioLatentShape::from_video(1, 1, 16, frames, fps);
    out[name + ".video"] = temporal_region_mask(video_positions(video, fps), start, end);
    out[name + ".audio"] = temporal_region_mask(audio_positions(audio), start, end);
  }
  return out;
}

}  // namespace

void register_pipeline_runners(ComponentRegistry& registry) {
  registry.add("pipeline_a2v", run_a2v_case);
  registry.add("pipeline_keyframes", run_keyframes_case);
  registry.add("pipeline_one_stage", run_one_stage_case);
  registry.add("pipeline_two_stage", run_two_stage_case);
  registry.add("pipeline_i2v", run_i2v_case);
  registry.add("pipeline_distilled", run_distilled_case);
  registry.add("pipeline_two_stage_lora", run_two_stage_lora_case);
  registry.add("pipeline_hq", run_hq_case);
  registry.add("pipeline_iclora", run_iclora_case);
  registry.add("pipeline_retake", run_retake_case);
  registry.add("retake_masks", run_retake_masks_case);
}

}  // namespace ltx
