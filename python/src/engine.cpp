// ltx.Engine: ltx::Engine loaded once, generating many times (ltx/engine.hpp).
#include "engine.h"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "arguments.h"
#include "ltx/engine.hpp"
#include "ltx/error.hpp"
#include "progress.h"
#include "released.h"
#include "video.h"

namespace nb = nanobind;

namespace ltx::python {
namespace {

struct PyEngine {
  std::unique_ptr<Engine> engine;
  bool default_model = false;  // the embedded default: requests take its default size and steps
};

void init(PyEngine* self, EngineArgs args, nb::object progress_callable) {
  EngineOptions options = to_engine_options(args);
  const bool default_model = names_no_model(options);
  PythonProgress progress(std::move(progress_callable));
  auto engine = run_released(progress, [&] {
    if (default_model) {  // as `ltx generate` with no model named: the other options stay
      bool made = false;
      const EngineOptions model = embedded_default_model(&made);
      options.checkpoint = model.checkpoint;
      options.text_encoder = model.text_encoder;
      progress.note((made ? "made the embedded default model " : "embedded default model ") + model.checkpoint);
    }
    return std::make_unique<Engine>(options, progress.callback());
  });
  new (self) PyEngine{std::move(engine), default_model};
}

std::vector<PyVideo> generate(PyEngine& self, std::vector<std::string> prompts, int64_t batch, const RequestArgs& args,
                              nb::object progress_callable) {
  const GenerateRequest request = to_request(std::move(prompts), batch, args, self.default_model);
  PythonProgress progress(std::move(progress_callable));
  return to_videos(generate_interruptible(*self.engine, request, progress));
}

// The keyword options generate() and generate_batch() share, in RequestArgs' order, then `progress`.
auto request_options() {
  return std::make_tuple(
      nb::arg("negative_prompt") = nb::none(), nb::arg("width") = nb::none(), nb::arg("height") = nb::none(),
      nb::arg("frames") = nb::none(), nb::arg("fps") = nb::none(), nb::arg("steps") = nb::none(),
      nb::arg("seed") = nb::none(), nb::arg("images") = nb::none(), nb::arg("two_stage") = false,
      nb::arg("distilled") = false, nb::arg("cfg") = nb::none(), nb::arg("stg") = nb::none(),
      nb::arg("rescale") = nb::none(), nb::arg("modality") = nb::none(), nb::arg("stg_blocks") = nb::none(),
      nb::arg("audio_cfg") = nb::none(), nb::arg("audio_stg") = nb::none(), nb::arg("audio_rescale") = nb::none(),
      nb::arg("audio_modality") = nb::none(), nb::arg("video_skip_step") = nb::none(),
      nb::arg("audio_skip_step") = nb::none(), nb::arg("sampler") = "euler", nb::arg("keyframe_interpolation") = false,
      nb::arg("audio") = nb::none(), nb::arg("audio_start") = 0.0, nb::arg("audio_max_duration") = nb::none(),
      nb::arg("retake") = nb::none(), nb::arg("reference_videos") = nb::none(), nb::arg("conditioning_strength") = 1.0,
      nb::arg("conditioning_mask") = nb::none(), nb::arg("enhance_prompt") = false, nb::arg("progress") = nb::none());
}

using OptInt = std::optional<int64_t>;
using OptFloat = std::optional<float>;
using OptBlocks = std::optional<std::vector<int64_t>>;

// A function for nanobind taking (self, head..., the options of request_options()) that calls
// finish(self, head..., RequestArgs, progress): the typed option parameters are written once for both methods.
template <class... Head, class Finish>
auto with_request_options(Finish finish) {
  return
      [finish](PyEngine& self, Head... head, std::optional<std::string> negative_prompt, OptInt width, OptInt height,
               OptInt frames, std::optional<double> fps, std::optional<int> steps, std::optional<uint64_t> seed,
               nb::object images, bool two_stage, bool distilled, OptFloat cfg, OptFloat stg, OptFloat rescale,
               OptFloat modality, OptBlocks stg_blocks, OptFloat audio_cfg, OptFloat audio_stg, OptFloat audio_rescale,
               OptFloat audio_modality, std::optional<int> video_skip_step, std::optional<int> audio_skip_step,
               std::string sampler, bool keyframe_interpolation, std::optional<std::string> audio, double audio_start,
               std::optional<double> audio_max_duration, nb::object retake, nb::object reference_videos,
               double conditioning_strength, Path conditioning_mask, bool enhance_prompt, nb::object progress) {
        const RequestArgs args{.negative_prompt = std::move(negative_prompt),
                               .width = width,
                               .height = height,
                               .frames = frames,
                               .fps = fps,
                               .steps = steps,
                               .seed = seed,
                               .images = std::move(images),
                               .two_stage = two_stage,
                               .distilled = distilled,
                               .cfg = cfg,
                               .stg = stg,
                               .rescale = rescale,
                               .modality = modality,
                               .stg_blocks = std::move(stg_blocks),
                               .audio_cfg = audio_cfg,
                               .audio_stg = audio_stg,
                               .audio_rescale = audio_rescale,
                               .audio_modality = audio_modality,
                               .video_skip_step = video_skip_step,
                               .audio_skip_step = audio_skip_step,
                               .sampler = std::move(sampler),
                               .keyframe_interpolation = keyframe_interpolation,
                               .audio = std::move(audio),
                               .audio_start = audio_start,
                               .audio_max_duration = audio_max_duration,
                               .retake = std::move(retake),
                               .reference_videos = std::move(reference_videos),
                               .conditioning_strength = conditioning_strength,
                               .conditioning_mask = std::move(conditioning_mask),
                               .enhance_prompt = enhance_prompt};
        return finish(self, std::move(head)..., args, std::move(progress));
      };
}

constexpr const char* kGenerateDoc =
    "Generates one video with audio for `prompt` and returns it as an ltx.Video. Options left None keep the "
    "model's defaults (with the embedded default model: 17 frames of 192x128, 30 steps). `images`: a list of paths, "
    "(path, frame, strength, crf) tuples (the last three optional) or dicts of those keys. `stg_blocks` applies to "
    "both streams. `sampler`: \"euler\" or \"res2s\" (the HQ pipeline's). `keyframe_interpolation`: every image "
    "as a guiding keyframe. `audio`: an audio file to generate the video to (audio_start, audio_max_duration in "
    "seconds; audio_max_duration None: the video's duration). `retake`: {\"path\", \"start\", \"end\"[, "
    "\"keep_video\", \"keep_audio\"]} regenerates that window of a video file and keeps the rest. `reference_videos`: "
    "IC-LoRA control videos (paths or (path, strength) "
    "tuples) for the engine's IC-LoRA, `conditioning_strength` and `conditioning_mask` (a grey video) weighing "
    "their attention. `enhance_prompt`: each prompt first rewritten by the text encoder (Gemma sees the first image "
    "when there are images), as `ltx generate --enhance-prompt`; Video.prompt is then the rewritten one. "
    "`progress`: a callable given an ltx.Progress for each stage begin, "
    "step, end and note, called on "
    "the engine's thread; an exception it raises ends the call and reaches the caller. Ctrl-C cancels the call "
    "(KeyboardInterrupt); the engine stays usable. Other Python threads run meanwhile.";

constexpr const char* kGenerateBatchDoc =
    "Generates `batch` samples of each prompt, all through the model together, and returns them prompt-major "
    "(item p * batch + s is sample s of prompt p). The options are generate()'s.";

}  // namespace

void bind_engine(nb::module_& m) {
  nb::class_<PyEngine> cls(
      m, "Engine",
      "Loads a model set once (the GIL released), then generates many times. With no checkpoint, "
      "dit or text_encoder: the embedded tiny default model (trained on a world of colored shapes that move "
      "with a tone) "
      "with the Gemma 3 270M GGUF that scripts/setup installs.");
  cls.def(
      "__init__",
      [](PyEngine* self, Path checkpoint, Path text_encoder, Path mmproj, Path dit, Path dit_config, Path upsampler,
         nb::object loras, nb::object distilled_lora, std::optional<float> distilled_lora_stage1,
         bool lora_allow_partial, std::string precision, int threads, nb::object memory_budget, std::string backend,
         std::string xla_plugin, nb::object progress) {
        init(self,
             EngineArgs{.checkpoint = std::move(checkpoint),
                        .text_encoder = std::move(text_encoder),
                        .mmproj = std::move(mmproj),
                        .dit = std::move(dit),
                        .dit_config = std::move(dit_config),
                        .upsampler = std::move(upsampler),
                        .loras = std::move(loras),
                        .distilled_lora = std::move(distilled_lora),
                        .distilled_lora_stage1 = distilled_lora_stage1,
                        .lora_allow_partial = lora_allow_partial,
                        .precision = std::move(precision),
                        .threads = threads,
                        .memory_budget = std::move(memory_budget),
                        .backend = std::move(backend),
                        .xla_plugin = std::move(xla_plugin)},
             std::move(progress));
      },
      nb::arg("checkpoint") = nb::none(), nb::arg("text_encoder") = nb::none(), nb::arg("mmproj") = nb::none(),
      nb::arg("dit") = nb::none(), nb::arg("dit_config") = nb::none(), nb::arg("upsampler") = nb::none(),
      nb::arg("loras") = nb::none(), nb::arg("distilled_lora") = nb::none(),
      nb::arg("distilled_lora_stage1") = nb::none(), nb::arg("lora_allow_partial") = false,
      nb::arg("precision") = "production", nb::arg("threads") = 0, nb::arg("memory_budget") = nb::none(),
      nb::arg("backend") = "cpu", nb::arg("xla_plugin") = "", nb::arg("progress") = nb::none(),
      "mmproj: a GGUF text encoder's vision tower (llama.cpp mmproj file), for enhance() with an image; "
      "loras: a list of paths or (path, strength) tuples; distilled_lora: a path or a (path, strength) tuple; "
      "distilled_lora_stage1: its strength in stage 1 too (the HQ pipeline's 0.25); "
      "precision: 'production' (bf16) or 'validation' (f32); threads: 0 for $LTX_THREADS or every core; "
      "memory_budget: bytes or a size like '8G' (None: what the machine has available); backend: what the "
      "plans run on ('cpu' or 'xla'; ltx.available_backends()); xla_plugin: the PJRT plugin of backend='xla' "
      "('': $LTX_XLA_PLUGIN or the CPU plugin scripts/setup installs); progress: a callable "
      "given an ltx.Progress for the load's stage and notes.");
  cls.def(
      "enhance",
      [](PyEngine& self, const std::string& prompt, Path image, uint64_t seed, bool greedy, int64_t max_new_tokens,
         std::string system_prompt) {
        EnhanceRequest r;
        r.image = image ? image->string() : "";
        r.seed = seed;
        r.greedy = greedy;
        r.max_new_tokens = max_new_tokens;
        r.system_prompt = std::move(system_prompt);
        nb::gil_scoped_release released;
        return self.engine->enhance(prompt, r);
      },
      nb::arg("prompt"), nb::kw_only(), nb::arg("image") = nb::none(), nb::arg("seed") = 10, nb::arg("greedy") = false,
      nb::arg("max_new_tokens") = 512, nb::arg("system_prompt") = "",
      "The prompt rewritten by the text encoder as `ltx enhance` rewrites it (the official --enhance-prompt): "
      "sampled at temperature 0.7 and top-k 50 from `seed`, or greedy; `image`: the video's first frame, shown to "
      "Gemma through its vision tower (a Hugging Face folder's, or the engine's mmproj).");
  cls.def_prop_ro(
      "model_version", [](const PyEngine& e) { return e.engine->model_version(); }, "'2.3', '2.0'");
  cls.def_prop_ro(
      "load_seconds", [](const PyEngine& e) { return e.engine->load_seconds(); }, "wall time the load took");
  cls.def_prop_ro(
      "default_model", [](const PyEngine& e) { return e.default_model; }, "whether this is the embedded default model");
  cls.def("__repr__", [](const PyEngine& e) {
    return "<ltx.Engine " + e.engine->options().checkpoint + " (LTX-" + e.engine->model_version() + ")>";
  });

  const auto generate_one = with_request_options<std::string>(
      [](PyEngine& self, std::string prompt, const RequestArgs& args, nb::object progress) {
        std::vector<PyVideo> videos = generate(self, {std::move(prompt)}, 1, args, std::move(progress));
        if (videos.size() != 1)
          throw Error("python", "the engine returned " + std::to_string(videos.size()) + " videos for one prompt",
                      ErrorCategory::Internal);
        return std::move(videos.front());
      });
  const auto generate_batch = with_request_options<std::vector<std::string>, int64_t>(
      [](PyEngine& self, std::vector<std::string> prompts, int64_t batch, const RequestArgs& args,
         nb::object progress) { return generate(self, std::move(prompts), batch, args, std::move(progress)); });
  std::apply(
      [&](auto&&... options) {
        cls.def("generate", generate_one, nb::arg("prompt"), nb::kw_only(), options..., kGenerateDoc);
        cls.def("generate_batch", generate_batch, nb::arg("prompts"), nb::kw_only(), nb::arg("batch") = 1, options...,
                kGenerateBatchDoc);
      },
      request_options());
}

}  // namespace ltx::python
