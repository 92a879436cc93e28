// `ltx generate [--checkpoint FILE (--text-encoder PATH | --text-embeddings FILE)] --prompt TEXT --output OUT.mp4
// [options]`: text to video with synchronized audio, written as an MP4 (H.264 + AAC), and on request a WAV, PNG
// frames and a JSON sidecar. With no model named it runs the embedded default model (stages/default_model.h).
#include "stages/generate.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "core/cpu_time.h"
#include "core/error.h"
#include "io/json.h"
#include "models/ltx/decode_memory_budget.h"
#include "stages/default_model.h"
#include "stages/progress.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage =
    "usage: ltx generate [--checkpoint FILE (--text-encoder PATH | --text-embeddings FILE)] --prompt TEXT...\n"
    "                    --output OUT.mp4 [--negative-prompt TEXT] [--frames N] [--width W] [--height H]\n"
    "                    [--fps F] [--steps N] [--seed S] [--cfg X] [--audio-cfg X] [--stg X] [--audio-stg X]\n"
    "                    [--stg-blocks I,J] [--rescale X] [--audio-rescale X] [--modality X] [--audio-modality X]\n"
    "                    [--image FILE[:FRAME[:STRENGTH[:CRF]]]]... [--prompts-file FILE] [--batch N]\n"
    "                    [--two-stage --upsampler FILE] [--record-noise FILE | --replay-noise FILE]\n"
    "                    [--dit FILE|DIR [--dit-config FILE]] [--lora FILE[:STRENGTH]]... [--lora-allow-partial]\n"
    "                    [--distilled-lora FILE[:STRENGTH]] [--distilled]\n"
    "                    [--precision validation|production] [--wav FILE] [--frames-dir DIR]\n"
    "                    [--sidecar FILE.json | --json] [--progress text|json] [--quiet] [--repeat N]\n"
    "                    [--memory-budget SIZE (video decode; default: MemAvailable)]\n"
    "With no --checkpoint, --text-encoder or --text-embeddings: the embedded tiny default model (untrained) with the\n"
    "Gemma 3 270M text encoder installed by scripts/setup.\n"
    "Several prompts (--prompt repeated, --prompts-file with one per line) and --batch N (N samples of each prompt,\n"
    "one seed, one noise draw for the whole batch) run through the DiT together; with more than one item the\n"
    "outputs are OUT_0.mp4, OUT_1.mp4, ... (prompt-major), likewise --wav, --frames-dir and the sidecar.";

double number(const std::string& option, const std::string& value) {
  try {
    size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  fail("generate", option + " needs a number, got '" + value + "'");
}

int64_t integer(const std::string& option, const std::string& value) {
  const double v = number(option, value);
  LTX_CHECK(v == static_cast<double>(static_cast<int64_t>(v)), "generate", option, " needs an integer, got '", value,
            "'");
  return static_cast<int64_t>(v);
}

std::vector<int64_t> integer_list(const std::string& option, const std::string& value) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= value.size()) {
    const size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    out.push_back(integer(option, item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// One prompt per line; blank lines are skipped, a trailing CR is dropped.
std::vector<std::string> read_prompts_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  LTX_CHECK(f != nullptr, "generate", "--prompts-file ", path, " cannot be read");
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
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
  LTX_CHECK(!prompts.empty(), "generate", "--prompts-file ", path, " holds no prompt");
  return prompts;
}

}  // namespace

int generate(Args args) {
  stages::GenerateRequest r;
  bool quiet = false, json_sidecar = false;
  std::string progress_format = "text";
  int64_t repeat = 1;
  std::set<std::string> given;       // options on the command line
  std::vector<std::string> prompts;  // --prompt (repeatable), then --prompts-file's lines
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    given.insert(a);
    auto value = [&]() -> std::string {
      LTX_CHECK(i + 1 < args.size(), "generate", a, " needs a value\n", kUsage);
      return args[++i];
    };
    auto f = [&]() { return static_cast<float>(number(a, value())); };
    if (a == "--checkpoint")
      r.checkpoint = value();
    else if (a == "--dit")
      r.dit = value();
    else if (a == "--dit-config")
      r.dit_config = value();
    else if (a == "--lora")
      r.loras.push_back(ltxm::parse_lora_spec(value()));
    else if (a == "--distilled-lora") {
      LTX_CHECK(!r.distilled_lora, "generate", "--distilled-lora is given once");
      r.distilled_lora = ltxm::parse_lora_spec(value());
    } else if (a == "--lora-allow-partial")
      r.lora_allow_partial = true;
    else if (a == "--distilled")
      r.distilled = true;
    else if (a == "--text-encoder")
      r.text_encoder = value();
    else if (a == "--text-embeddings")
      r.text_embeddings = value();
    else if (a == "--upsampler")
      r.upsampler = value();
    else if (a == "--prompt")
      prompts.push_back(value());
    else if (a == "--prompts-file")
      for (std::string& p : read_prompts_file(value())) prompts.push_back(std::move(p));
    else if (a == "--batch")
      r.batch = integer(a, value());
    else if (a == "--negative-prompt")
      r.negative_prompt = value();
    else if (a == "--output" || a == "-o")
      r.output = value();
    else if (a == "--two-stage")
      r.two_stage = true;
    else if (a == "--frames")
      r.frames = integer(a, value());
    else if (a == "--width")
      r.width = integer(a, value());
    else if (a == "--height")
      r.height = integer(a, value());
    else if (a == "--fps")
      r.fps = number(a, value());
    else if (a == "--steps")
      r.steps = static_cast<int>(integer(a, value()));
    else if (a == "--memory-budget")
      r.memory_budget = value(), parse_memory_budget(*r.memory_budget);  // a bad size fails before any work
    else if (a == "--seed")
      r.seed = static_cast<uint64_t>(integer(a, value()));
    else if (a == "--cfg")
      r.video_guidance.cfg = f();
    else if (a == "--audio-cfg")
      r.audio_guidance.cfg = f();
    else if (a == "--stg")
      r.video_guidance.stg = f();
    else if (a == "--audio-stg")
      r.audio_guidance.stg = f();
    else if (a == "--stg-blocks")
      r.video_guidance.stg_blocks = r.audio_guidance.stg_blocks = integer_list(a, value());
    else if (a == "--rescale")
      r.video_guidance.rescale = f();
    else if (a == "--audio-rescale")
      r.audio_guidance.rescale = f();
    else if (a == "--modality")
      r.video_guidance.modality = f();
    else if (a == "--audio-modality")
      r.audio_guidance.modality = f();
    else if (a == "--image")
      r.images.push_back(stages::parse_image_argument(value()));
    else if (a == "--record-noise")
      r.record_noise = value();
    else if (a == "--replay-noise")
      r.replay_noise = value();
    else if (a == "--precision") {
      const std::string p = value();
      LTX_CHECK(p == "validation" || p == "production", "generate", "--precision is validation or production");
      r.compute = p == "validation" ? DType::F32 : DType::BF16;
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--wav") {
      r.wav = value();
    } else if (a == "--frames-dir") {
      r.frames_dir = value();
    } else if (a == "--sidecar") {
      r.sidecar = value();
    } else if (a == "--json") {
      json_sidecar = true;
    } else if (a == "--progress") {
      progress_format = value();
      LTX_CHECK(progress_format == "text" || progress_format == "json", "generate", "--progress is text or json");
    } else if (a == "--repeat") {
      repeat = integer(a, value());
      LTX_CHECK(repeat >= 1, "generate", "--repeat needs a count of at least 1");
    } else
      fail("generate", "unknown option " + a + "\n" + kUsage);
  }
  if (prompts.size() == 1)
    r.prompt = prompts[0];
  else
    r.prompts = prompts;
  LTX_CHECK(r.batch >= 1, "generate", "--batch needs a count of at least 1");
  LTX_CHECK(!(json_sidecar && !r.sidecar.empty()), "generate", "--json and --sidecar exclude each other");
  if (json_sidecar && !r.output.empty())
    r.sidecar = std::filesystem::path(r.output).replace_extension(".json").string();

  // Progress: JSON lines on stdout for programs (the summary then is a last JSON line too), else a line on stderr
  // rewritten in place on a terminal.
  const bool json = progress_format == "json";
  std::unique_ptr<stages::ProgressReporter> progress;
  if (quiet)
    progress = std::make_unique<stages::SilentProgress>();
  else if (json)
    progress = std::make_unique<stages::JsonProgress>(stdout);
  else
    progress = std::make_unique<stages::TextProgress>(stderr, isatty(fileno(stderr)) != 0);

  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  stages::DefaultModelFile model_file;
  if (stages::use_default_model_when_unnamed(r, given, &model_file)) {
    progress->note(model_file.made ? "made the embedded default model " + model_file.path
                                   : "embedded default model " + model_file.path);
    progress->note("(tiny and untrained: the output is noise-like; it shows the whole pipeline running)");
  }
  const double setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double setup_cpu_s = process_cpu_seconds() - cpu0;

  stages::ModelCache cache;
  for (int64_t run = 0; run < repeat; ++run) {
    const auto t_run = std::chrono::steady_clock::now();
    const double cpu_run = process_cpu_seconds();
    const stages::GenerateReport rep = stages::generate(r, progress.get(), &cache);
    const double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
    const double run_cpu_s = process_cpu_seconds() - cpu_run;
    if (quiet) continue;
    if (json) {
      Json stages = Json::object();
      for (const auto& [stage, s] : rep.stage_seconds) stages[stage] = s;
      Json stages_cpu = Json::object();
      for (const auto& [stage, s] : rep.stage_cpu_seconds) stages_cpu[stage] = s;
      std::printf("%s\n", Json{{"event", "done"},
                               {"run", run + 1},
                               {"outputs", rep.written},
                               {"frames", rep.frames},
                               {"width", rep.width},
                               {"height", rep.height},
                               {"audio_samples", rep.audio_samples},
                               {"audio_sample_rate", rep.audio_sample_rate},
                               {"seconds", run_s},
                               {"setup_seconds", setup_s},
                               {"stage_seconds", stages},
                               {"cpu_seconds", run_cpu_s},  // process CPU time, all threads
                               {"setup_cpu_seconds", setup_cpu_s},
                               {"stage_cpu_seconds", stages_cpu}}
                              .dump()
                              .c_str());
      continue;
    }
    std::printf("wrote %s: %lld frames %lldx%lld at %g fps, audio %lld samples at %lld Hz\n", rep.written[0].c_str(),
                static_cast<long long>(rep.frames), static_cast<long long>(rep.width),
                static_cast<long long>(rep.height), r.fps, static_cast<long long>(rep.audio_samples),
                static_cast<long long>(rep.audio_sample_rate));
    for (size_t i = 1; i < rep.written.size(); ++i) std::printf("wrote %s\n", rep.written[i].c_str());
    std::printf("video decode: %s\n", rep.decode_strategy.c_str());
    if (repeat > 1) std::printf("run %lld: %.3f s\n", static_cast<long long>(run + 1), run_s);
    for (const auto& [stage, s] : rep.stage_seconds) std::printf("  %-14s %.2f s\n", stage.c_str(), s);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace ltx::cli
