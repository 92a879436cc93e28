// One generation request for an ltx::Engine: prompts, size, sampling settings, images, mode. Fields left at their
// defaults take the official pipelines' values for the loaded model (steps, guidance, negative prompt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ltx {

// An image the video is conditioned on (ltx_pipelines/utils/args.py ImageConditioningInput): frame 0 replaces the
// first latent frame, any other frame is a keyframe; strength in [0, 1]; crf in [0, 51] (0: no H.264 round trip).
struct ImageCondition {
  std::string path;
  int64_t frame = 0;
  double strength = 1.0;
  int crf = 33;
};

// Guidance settings of one stream; unset fields keep the model's defaults.
struct Guidance {
  std::optional<float> cfg, stg, rescale, modality;
  std::optional<std::vector<int64_t>> stg_blocks;
  // N > 0: the stream's guider reuses its previous x0 on steps where step % (N + 1) != 0 (video and audio apart).
  std::optional<int> skip_step;
};

// Audio-to-video (ltx_pipelines a2vid_two_stage.py): the file's audio (any format FFmpeg reads, a video's audio
// too), from `start` seconds, at most `max_duration` seconds, is encoded and held fixed while the video is generated;
// the result carries that clip. It must cover the video's duration.
struct AudioInput {
  std::string path;
  double start = 0.0;  // seconds, >= 0
  // Seconds, > 0, at least the video's duration; unset: the video's duration (frames / fps), as the official
  // command line defaults it, so the output's audio is as long as its video. A result reports the value used.
  std::optional<double> max_duration;
};

// Retake (ltx_pipelines retake.py): the file's video (and audio, if it has any) encoded, [start, end) seconds of it
// regenerated from noise under the prompt and the rest kept, in one stage at the file's own size, frame count and
// rate (8k+1 frames, sides multiples of 32), which replace the request's. keep_video / keep_audio regenerate nothing
// of that stream.
struct RetakeInput {
  std::string path;
  double start = 0.0, end = 0.0;  // seconds, 0 <= start < end, start inside the clip
  bool keep_video = false, keep_audio = false;
};

// IC-LoRA (ltx_pipelines ic_lora.py): a reference ("control") video, such as the depth, pose or edge video an
// IC-LoRA given in EngineOptions::loras was trained to follow. Its first `frames` frames are read at the stage-1 size
// divided by the LoRAs' reference_downscale_factor (their file metadata; 1 when absent), encoded and appended to
// stage 1 as reference tokens. strength in [0, 1]: 1 keeps the reference clean, lower lets it be denoised too.
struct ReferenceVideo {
  std::string path;
  double strength = 1.0;
};

enum class Mode {
  OneStage,  // the whole size in one denoising loop
  TwoStage,  // half size, x2 latent upsampler, refine at full size (needs EngineOptions::upsampler)
};

// The denoising loop of every stage.
enum class Sampler {
  Euler,  // first order, one x0 per step (every official pipeline but the HQ one)
  Res2s,  // res_2s (ti2vid_two_stages_hq.py): second order with SDE noise, two x0 per step
};

struct GenerateRequest {
  // One generation per prompt, each `batch` times (item p·batch + s is sample s of prompt p), all through the DiT
  // together. Needs a text encoder; without one, `text_embeddings` gives one prompt's contexts.
  std::vector<std::string> prompts;
  std::optional<std::string> negative_prompt;  // default: the official one
  std::string text_embeddings;        // safetensors: context.{video,audio}.{positive,negative} or `ltx encode` output
  int64_t batch = 1;                  // >= 1
  int64_t frames = 121;               // 8k + 1
  int64_t height = 512, width = 768;  // multiples of 32 (64 for two stages)
  double fps = 24.0;                  // > 0
  int steps = 0;                      // >= 1; 0: the model's default (fixed by the sigma lists when distilled)
  uint64_t seed = 10;
  Guidance video_guidance, audio_guidance;  // finite values; not with `distilled`
  // Each prompt rewritten by the text encoder before it is encoded (the official --enhance-prompt; `ltx enhance`):
  // Video::prompt is then the enhanced one, Video::original_prompt the given one. Needs a text encoder; seeded by
  // `seed`. enhance_system_prompt: the instructions given to Gemma (empty: the built-in ones).
  bool enhance_prompt = false;
  std::string enhance_system_prompt;
  int64_t enhance_max_new_tokens = 512;  // in [1, 8192]
  std::vector<ImageCondition> images;
  // Keyframe interpolation (ltx_pipelines keyframe_interpolation.py): every image, frame 0's too, is added as
  // guiding keyframe tokens instead of frame 0 replacing the first latent frame. Needs images.
  bool keyframe_interpolation = false;
  // IC-LoRA: reference videos (needs EngineOptions::loras with the IC-LoRA); stage 2 then runs without the LoRAs.
  // Not with audio, retake, keyframe_interpolation or the Res2s sampler.
  std::vector<ReferenceVideo> reference_videos;
  // How strongly the reference tokens and the generated ones attend to each other, in [0, 1]
  // (conditioning_attention_strength); scaled per region and frame by `conditioning_mask` when given: a grey video
  // (white: full strength) read at the stage-1 size and pooled to each reference's latent. Need reference_videos.
  double conditioning_strength = 1.0;
  std::string conditioning_mask;
  std::optional<AudioInput> audio;    // audio-to-video; not with audio_guidance (the audio is not denoised)
  std::optional<RetakeInput> retake;  // not with images, audio or two stages; negative prompt default ""
  Mode mode = Mode::OneStage;
  Sampler sampler = Sampler::Euler;
  bool distilled = false;  // a distilled checkpoint: its fixed sigma lists, one positive pass per step
  // Parity tools: replay every noise tensor from a recording (`ltx generate --record-noise`), or record them
  // into GenerateResult::noise_recording.
  std::string replay_noise;
  bool record_noise = false;
};

// Engine::enhance: how a prompt is rewritten (`ltx enhance`): the reply sampled at temperature 0.7 and top-k 50 from
// `seed`, or greedy; at most max_new_tokens new tokens; system_prompt: the instructions (empty: the built-in ones).
struct EnhanceRequest {
  uint64_t seed = 10;
  bool greedy = false;
  int64_t max_new_tokens = 512;  // in [1, 8192]
  std::string system_prompt;
  // An image file (PNG, JPEG, ...): the video's first frame, shown to Gemma through its vision tower (the official
  // enhance_i2v). Needs a text encoder with one (a Hugging Face folder's, or EngineOptions::text_encoder_mmproj).
  std::string image;
};

// The request the embedded default model runs at unless told otherwise: 17 frames at 192x128, 8 steps.
GenerateRequest embedded_default_request();

// The checks Engine::check makes that need no engine: every field in its range, fields that exclude each other,
// the request's own files readable. Throws one ltx::Error (InvalidRequest) naming each problem, its value and the
// valid range. A program can run it before it loads or makes any model.
void check_request(const GenerateRequest& request);

// "FILE", "FILE:FRAME", "FILE:FRAME:STRENGTH" or "FILE:FRAME:STRENGTH:CRF" (`ltx generate --image`): trailing
// fields are taken only when they are numbers, so a path may hold colons. Throws ltx::Error (InvalidRequest) on a
// malformed number; ranges are check_request's.
ImageCondition parse_image_condition(std::string_view text);

// "FILE" or "FILE:STRENGTH" (`ltx generate --video`): the trailing field is taken only when it is a number, so a
// path may hold colons; `default_strength` without one. Ranges are check_request's.
ReferenceVideo parse_reference_video(std::string_view text, double default_strength = 1.0);

}  // namespace ltx
