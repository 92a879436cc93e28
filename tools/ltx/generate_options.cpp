#include "generate_options.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

#include "model_options.h"
#include "option_values.h"

namespace ltx::cli {

const char* const kGenerateUsage =
    "usage: ltx generate [--checkpoint FILE (--text-encoder PATH | --text-embeddings FILE)] --prompt TEXT...\n"
    "                    --output OUT.mp4 [--negative-prompt TEXT] [--frames N] [--width W] [--height H]\n"
    "                    [--fps F] [--steps N] [--seed S] [--cfg X] [--audio-cfg X] [--stg X] [--audio-stg X]\n"
    "                    [--stg-blocks I,J] [--rescale X] [--audio-rescale X] [--modality X] [--audio-modality X]\n"
    "                    [--video-skip-step N] [--audio-skip-step N] [--sampler euler|res2s]\n"
    "                    [--audio FILE [--audio-start S] [--audio-max-duration S]] [--keyframe-interpolation]\n"
    "                    [--retake FILE --start S --end E [--retake-keep-video] [--retake-keep-audio]]\n"
    "                    [--image FILE[:FRAME[:STRENGTH[:CRF]]]]... [--prompts-file FILE] [--batch N]\n"
    "                    [--enhance-prompt [--enhance-system-prompt FILE] [--enhance-max-new-tokens N]]\n"
    "                    [--video FILE[:STRENGTH]]... [--video-strength S] [--conditioning-mask FILE]\n"
    "                    [--conditioning-strength S] (IC-LoRA: reference videos for the --lora IC-LoRA)\n"
    "                    [--two-stage --upsampler FILE] [--record-noise FILE | --replay-noise FILE]\n"
    "                    [--dit FILE|DIR [--dit-config FILE]] [--lora FILE[:STRENGTH]]... [--lora-allow-partial]\n"
    "                    [--distilled-lora FILE[:STRENGTH] [--distilled-lora-stage1 STRENGTH]] [--distilled]\n"
    "                    [--precision validation|production] [--wav FILE] [--frames-dir DIR]\n"
    "                    [--sidecar FILE.json | --json] [--progress text|json] [--quiet] [--repeat N]\n"
    "                    [--memory-budget SIZE (the whole run; default: MemAvailable)] [--int8-activations] [--help]\n"
    "With no --checkpoint, --text-encoder or --text-embeddings: the embedded tiny default model (trained on a world\n"
    "of colored shapes on plain backgrounds, moving with a tone) with the Gemma 3 270M text encoder installed by\n"
    "scripts/setup.\n"
    "Several prompts (--prompt repeated, --prompts-file with one per line) and --batch N (N samples of each prompt,\n"
    "one seed, one noise draw for the whole batch) run through the DiT together; with more than one item the\n"
    "outputs are OUT_0.mp4, OUT_1.mp4, ... (prompt-major), likewise --wav, --frames-dir and the sidecar.";

namespace {

constexpr std::string_view kCommand = "generate";

[[noreturn]] void usage_error(const std::string& message) { cli::usage_error(kCommand, message); }

double finite_number(const std::string& option, std::string_view value) {
  return cli::finite_number(kCommand, option, value);
}

int64_t at_least(const std::string& option, std::string_view value, int64_t min) {
  return whole_number(kCommand, option, value, min);
}

std::vector<int64_t> block_list(const std::string& option, const std::string& value) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const size_t end = comma == std::string::npos ? value.size() : comma;
    out.push_back(at_least(option, std::string_view(value).substr(start, end - start), 0));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// A whole text file given to `option` (--prompts-file, --enhance-system-prompt).
std::string read_text_file(const std::string& option, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error("generate", option + " " + path + " cannot be read", ErrorCategory::Io);
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

// One prompt per line; blank lines are skipped, a trailing CR is dropped.
std::vector<std::string> read_prompts_file(const std::string& path) {
  const std::string text = read_text_file("--prompts-file", path);
  std::vector<std::string> prompts;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") != std::string::npos) prompts.push_back(line);
    start = end + 1;
  }
  if (prompts.empty()) usage_error("--prompts-file " + path + " holds no prompt");
  return prompts;
}

// The options that take a value, and what each sets.
struct Parser {
  GenerateOptions& o;
  bool& json_sidecar;
  bool& two_stage;
  std::vector<std::string> videos;  // --video arguments, read once --video-strength (their default) is known
  double video_strength = 1.0;

  // `a` is one of takes_value's options.
  void take(const std::string& a, const std::string& v) {
    EngineOptions& e = o.engine;
    GenerateRequest& r = o.request;
    const auto guidance = [&]() -> std::optional<float> { return static_cast<float>(finite_number(a, v)); };
    const auto audio = [&]() -> AudioInput& {
      if (!r.audio) r.audio = AudioInput{};
      return *r.audio;
    };
    const auto retake = [&]() -> RetakeInput& {
      if (!r.retake) r.retake = RetakeInput{};
      return *r.retake;
    };
    if (is_model_option_with_value(a))
      take_model_option(kCommand, e, a, v);
    else if (a == "--text-embeddings")
      r.text_embeddings = v;
    else if (a == "--prompt")
      r.prompts.push_back(v);
    else if (a == "--prompts-file")
      for (std::string& p : read_prompts_file(v)) r.prompts.push_back(std::move(p));
    else if (a == "--batch")
      r.batch = at_least(a, v, 1);
    else if (a == "--negative-prompt")
      r.negative_prompt = v;
    else if (a == "--output" || a == "-o")
      o.files.mp4 = v;
    else if (a == "--frames")
      r.frames = at_least(a, v, 1);
    else if (a == "--width")
      r.width = at_least(a, v, 1);
    else if (a == "--height")
      r.height = at_least(a, v, 1);
    else if (a == "--fps") {
      r.fps = finite_number(a, v);
      if (!(r.fps > 0)) usage_error("--fps must be > 0, got " + v);
    } else if (a == "--steps") {
      const int64_t steps = at_least(a, v, 1);
      if (steps > 100000) usage_error("--steps must be at most 100000, got " + v);
      r.steps = static_cast<int>(steps);
    } else if (a == "--seed")
      r.seed = unsigned_number(kCommand, a, v);
    else if (a == "--cfg")
      r.video_guidance.cfg = guidance();
    else if (a == "--audio-cfg")
      r.audio_guidance.cfg = guidance();
    else if (a == "--stg")
      r.video_guidance.stg = guidance();
    else if (a == "--audio-stg")
      r.audio_guidance.stg = guidance();
    else if (a == "--stg-blocks")
      r.video_guidance.stg_blocks = r.audio_guidance.stg_blocks = block_list(a, v);
    else if (a == "--rescale")
      r.video_guidance.rescale = guidance();
    else if (a == "--audio-rescale")
      r.audio_guidance.rescale = guidance();
    else if (a == "--modality")
      r.video_guidance.modality = guidance();
    else if (a == "--audio-modality")
      r.audio_guidance.modality = guidance();
    else if (a == "--video-skip-step")
      r.video_guidance.skip_step = static_cast<int>(whole_number(kCommand, a, v, 0, 1000000));
    else if (a == "--sampler") {
      if (v != "euler" && v != "res2s") usage_error("--sampler is euler or res2s, got " + v);
      o.request.sampler = v == "res2s" ? Sampler::Res2s : Sampler::Euler;
    } else if (a == "--audio-skip-step")
      r.audio_guidance.skip_step = static_cast<int>(whole_number(kCommand, a, v, 0, 1000000));
    else if (a == "--image")
      r.images.push_back(parse_image_condition(v));
    else if (a == "--video")
      videos.push_back(v);
    else if (a == "--video-strength")
      video_strength = finite_number(a, v);
    else if (a == "--enhance-system-prompt")
      r.enhance_system_prompt = read_text_file(a, v);
    else if (a == "--enhance-max-new-tokens")
      r.enhance_max_new_tokens = at_least(a, v, 1);
    else if (a == "--conditioning-mask")
      r.conditioning_mask = v;
    else if (a == "--conditioning-strength")
      r.conditioning_strength = finite_number(a, v);
    else if (a == "--audio")
      audio().path = v;
    else if (a == "--audio-start")
      audio().start = finite_number(a, v);
    else if (a == "--audio-max-duration")
      audio().max_duration = finite_number(a, v);
    else if (a == "--retake")
      retake().path = v;
    else if (a == "--start")
      retake().start = finite_number(a, v);
    else if (a == "--end")
      retake().end = finite_number(a, v);
    else if (a == "--record-noise") {
      o.files.noise_recording = v;
      r.record_noise = true;
    } else if (a == "--replay-noise")
      r.replay_noise = v;
    else if (a == "--wav")
      o.files.wav = v;
    else if (a == "--frames-dir")
      o.files.frames_dir = v;
    else if (a == "--sidecar")
      o.files.sidecar = v;
    else if (a == "--progress") {
      if (v != "text" && v != "json") usage_error("--progress is text or json, got " + v);
      o.progress = v;
    } else if (a == "--repeat")
      o.repeat = at_least(a, v, 1);
  }

  // Returns false for a flag it does not know.
  bool flag(const std::string& a) {
    if (take_model_flag(o.engine, a)) return true;
    if (a == "--distilled")
      o.request.distilled = true;
    else if (a == "--two-stage")
      two_stage = true;
    else if (a == "--keyframe-interpolation")
      o.request.keyframe_interpolation = true;
    else if (a == "--enhance-prompt")
      o.request.enhance_prompt = true;
    else if (a == "--retake-keep-video" || a == "--retake-keep-audio") {
      if (!o.request.retake) o.request.retake = RetakeInput{};
      (a == "--retake-keep-video" ? o.request.retake->keep_video : o.request.retake->keep_audio) = true;
    } else if (a == "--quiet")
      o.quiet = true;
    else if (a == "--json")
      json_sidecar = true;
    else if (a == "--help" || a == "-h")
      o.help = true;
    else
      return false;
    return true;
  }
};

bool takes_value(const std::string& a) {
  // clang-format off
  static const std::set<std::string> with_value = {
      "--text-embeddings", "--prompt", "--prompts-file", "--batch", "--negative-prompt", "--output", "-o",
      "--frames", "--width", "--height", "--fps", "--steps", "--seed", "--cfg", "--audio-cfg", "--stg", "--audio-stg",
      "--stg-blocks", "--rescale", "--audio-rescale", "--modality", "--audio-modality", "--video-skip-step",
      "--audio-skip-step", "--sampler", "--image", "--video", "--video-strength", "--conditioning-mask",
      "--conditioning-strength", "--enhance-system-prompt", "--enhance-max-new-tokens", "--audio", "--audio-start",
      "--audio-max-duration", "--retake", "--start", "--end", "--record-noise", "--replay-noise", "--wav", "--frames-dir", "--sidecar",
      "--progress", "--repeat"};
  // clang-format on
  return with_value.count(a) != 0 || is_model_option_with_value(a);
}

// The command's own rules, checked before any model is made or loaded.
void check_usage(const GenerateOptions& o, bool json_sidecar, bool two_stage, const std::set<std::string>& given) {
  const EngineOptions& e = o.engine;
  const GenerateRequest& r = o.request;
  std::vector<std::string> problems;
  if (o.files.mp4.empty()) problems.push_back("--output is required");
  if (r.prompts.empty() && r.text_embeddings.empty()) problems.push_back("--prompt is required");
  if (json_sidecar && !o.files.sidecar.empty()) problems.push_back("--json and --sidecar exclude each other");
  if (!o.default_model && e.text_encoder.empty() == r.text_embeddings.empty())
    problems.push_back("give exactly one of --text-encoder and --text-embeddings");
  if (two_stage && e.upsampler.empty()) problems.push_back("--two-stage needs --upsampler");
  if (r.audio && r.audio->path.empty()) problems.push_back("--audio-start and --audio-max-duration need --audio FILE");
  for (const char* option : {"--enhance-system-prompt", "--enhance-max-new-tokens"})
    if (given.count(option) && !r.enhance_prompt) problems.push_back(std::string(option) + " needs --enhance-prompt");
  if (given.count("--video-strength") && r.reference_videos.empty())
    problems.push_back("--video-strength needs --video FILE (the IC-LoRA's reference video)");
  if (r.retake && r.retake->path.empty()) problems.push_back("--start, --end and --retake-keep-* need --retake FILE");
  if (r.retake && !r.retake->path.empty() && (!given.count("--start") || !given.count("--end")))
    problems.push_back("--retake needs --start S and --end S (seconds of the clip to regenerate)");
  for (const char* size : {"--frames", "--width", "--height", "--fps"})
    if (r.retake && given.count(size))
      problems.push_back(std::string(size) + " does not apply with --retake (the clip's own is used)");
  if (e.distilled_lora && !two_stage)
    problems.push_back("--distilled-lora is for the stage-2 refine: it needs --two-stage");
  if (e.distilled_lora && r.distilled)
    problems.push_back(
        "--distilled runs a distilled checkpoint on both stages; --distilled-lora is for the base model's "
        "two-stage refine: give one of them");
  if (problems.empty()) return;
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  usage_error(joined);
}

}  // namespace

GenerateOptions parse_generate_options(Args args) {
  GenerateOptions o;
  std::set<std::string> given;  // options on the command line
  bool json_sidecar = false, two_stage = false;
  Parser parser{o, json_sidecar, two_stage};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    given.insert(a);
    if (takes_value(a)) {
      if (i + 1 >= args.size()) usage_error(a + " needs a value\n" + kGenerateUsage);
      parser.take(a, args[++i]);
    } else if (!parser.flag(a)) {
      usage_error("unknown option " + a + "\n" + kGenerateUsage);
    }
  }
  if (o.help) return o;
  for (const std::string& v : parser.videos)
    o.request.reference_videos.push_back(parse_reference_video(v, parser.video_strength));
  o.request.mode = two_stage ? Mode::TwoStage : Mode::OneStage;
  if (!two_stage) o.engine.upsampler.clear();  // loaded for two-stage runs only
  o.default_model = names_no_model(o.engine) && o.request.text_embeddings.empty();
  check_usage(o, json_sidecar, two_stage, given);
  if (json_sidecar) o.files.sidecar = std::filesystem::path(o.files.mp4).replace_extension(".json").string();
  if (o.default_model) {
    const GenerateRequest d = embedded_default_request();
    if (!given.count("--frames")) o.request.frames = d.frames;
    if (!given.count("--height")) o.request.height = d.height;
    if (!given.count("--width")) o.request.width = d.width;
    if (!given.count("--steps")) o.request.steps = d.steps;
  }
  return o;
}

}  // namespace ltx::cli
