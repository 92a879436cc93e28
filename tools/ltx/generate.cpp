// `ltx generate [--checkpoint FILE (--text-encoder PATH | --text-embeddings FILE)] --prompt TEXT --output OUT.mp4
// [options]`: text to video with synchronized audio, written as an MP4 (H.264 + AAC), and on request a WAV, PNG
// frames and a JSON sidecar. With no model named it runs the embedded default model. The public API only
// (ltx/ltx.hpp): one ltx::Engine, `--repeat N` generate calls on it.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "generate_options.h"
#include "ltx/ltx.hpp"
#include "model_options.h"
#include "progress_printers.h"

namespace ltx::cli {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Process CPU time, all threads (steadier than wall time on a shared machine; bench/first_generation.sh).
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Where progress goes: JSON lines on stdout for programs (the summary then is a last JSON line too), else a line
// on stderr rewritten in place on a terminal; nothing with --quiet.
struct Progress {
  std::unique_ptr<TextProgressPrinter> text;
  std::unique_ptr<JsonProgressPrinter> json;
  ProgressCallback callback;

  explicit Progress(const GenerateOptions& o) {
    if (o.quiet) return;
    if (o.progress == "json") {
      json = std::make_unique<JsonProgressPrinter>(stdout);
      callback = json->callback();
    } else {
      text = std::make_unique<TextProgressPrinter>(stderr, isatty(fileno(stderr)) != 0);
      callback = text->callback();
    }
  }
  void event(ProgressEvent::Kind kind, std::string_view stage, double elapsed, std::string_view message = {}) {
    if (!callback) return;
    ProgressEvent e;
    e.kind = kind;
    e.stage = stage;
    e.elapsed = elapsed;
    e.message = message;
    callback(e);
  }
  void note(const std::string& message) { event(ProgressEvent::Kind::Note, "", 0, message); }
};

// One run's figures: its wall and CPU time, the stages the engine timed and the writing the command timed.
struct RunCost {
  double seconds = 0, cpu_seconds = 0;
  std::vector<StageTime> stages;
};

void print_json_summary(const GenerateResult& result, const std::vector<std::string>& written, int64_t run,
                        const RunCost& cost, double setup_s, double setup_cpu_s) {
  Json stages = Json::object(), stages_cpu = Json::object();
  for (const StageTime& s : cost.stages) {
    stages[s.stage] = s.seconds;
    stages_cpu[s.stage] = s.cpu_seconds;
  }
  const Video& v = result.videos.front();
  std::printf("%s\n", Json{{"event", "done"},
                           {"run", run + 1},
                           {"outputs", written},
                           {"frames", v.frames},
                           {"width", v.width},
                           {"height", v.height},
                           {"audio_samples", v.audio_samples()},
                           {"audio_sample_rate", v.sample_rate},
                           {"seconds", cost.seconds},
                           {"setup_seconds", setup_s},
                           {"stage_seconds", stages},
                           {"cpu_seconds", cost.cpu_seconds},  // process CPU time, all threads
                           {"setup_cpu_seconds", setup_cpu_s},
                           {"stage_cpu_seconds", stages_cpu}}
                          .dump()
                          .c_str());
}

void print_text_summary(const GenerateResult& result, const std::vector<std::string>& written, int64_t run,
                        int64_t repeat, const RunCost& cost) {
  const Video& v = result.videos.front();
  std::printf("wrote %s: %lld frames %lldx%lld at %g fps, audio %lld samples at %lld Hz\n", written[0].c_str(),
              static_cast<long long>(v.frames), static_cast<long long>(v.width), static_cast<long long>(v.height),
              v.fps, static_cast<long long>(v.audio_samples()), static_cast<long long>(v.sample_rate));
  for (size_t i = 1; i < written.size(); ++i) std::printf("wrote %s\n", written[i].c_str());
  std::printf("video decode: %s\n", result.decode_strategy.c_str());
  if (repeat > 1) std::printf("run %lld: %.3f s\n", static_cast<long long>(run + 1), cost.seconds);
  for (const StageTime& s : cost.stages) std::printf("  %-14s %.2f s\n", s.stage.c_str(), s.seconds);
}

}  // namespace

int generate(Args args) {
  const GenerateOptions o = parse_generate_options(args);
  if (o.help) {
    std::printf("%s\n", kGenerateUsage);
    return 0;
  }
  // The request's and outputs' own mistakes first: nothing is made or loaded for a request that fails.
  check_request(o.request);
  check_outputs(o.files);
  Progress progress(o);

  const auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  EngineOptions engine_options = o.engine;
  if (o.default_model)
    engine_options = with_default_model(engine_options, [&](const std::string& line) { progress.note(line); });
  const double setup_s = seconds_since(t0);
  const double setup_cpu_s = cpu_seconds() - cpu0;

  // The first run's time includes the load, as its stages do ("load models" comes with the first result).
  auto t_run = Clock::now();
  double cpu_run = cpu_seconds();
  Engine engine(engine_options, progress.callback);
  for (int64_t run = 0; run < o.repeat; ++run) {
    if (run > 0) {
      t_run = Clock::now();
      cpu_run = cpu_seconds();
    }
    const GenerateResult result = engine.generate(o.request, progress.callback);
    RunCost cost;
    cost.stages = result.stages;
    progress.event(ProgressEvent::Kind::Begin, "write", 0);
    const auto t_write = Clock::now();
    const double cpu_write = cpu_seconds();
    const std::vector<std::string> written = save(result, o.files);
    cost.stages.push_back({"write", seconds_since(t_write), cpu_seconds() - cpu_write});
    progress.event(ProgressEvent::Kind::End, "write", cost.stages.back().seconds);
    cost.seconds = seconds_since(t_run);
    cost.cpu_seconds = cpu_seconds() - cpu_run;
    if (o.quiet) continue;
    if (o.progress == "json")
      print_json_summary(result, written, run, cost, setup_s, setup_cpu_s);
    else
      print_text_summary(result, written, run, o.repeat, cost);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace ltx::cli
