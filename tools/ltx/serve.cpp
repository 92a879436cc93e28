// `ltx serve [options]`: the engine behind an HTTP API (src/server/): the models load once at start, jobs run one
// at a time from a bounded queue, results and the job index live in --results-dir and survive a restart. Ctrl-C
// or SIGTERM stops it: the running job is cancelled and the waiting ones are marked failed.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "commands.h"
#include "ltx/ltx.hpp"
#include "model_options.h"
#include "option_values.h"
#include "progress_printers.h"
#include "server/http_server.h"

namespace ltx::cli {
namespace {

constexpr std::string_view kCommand = "serve";

const std::string kServeUsage = std::string(
                                    "usage: ltx serve [--host ADDR (127.0.0.1)] [--port N (8080; 0: any free port)]\n"
                                    "                 [--results-dir DIR (ltx-results)] [--queue-size N (16)]\n"
                                    "                 [--api-key-file FILE] [--model-id NAME] [--max-body SIZE (32M)]\n"
                                    "                 [--max-frames N (257)] [--max-width N (1920)] [--max-height N "
                                    "(1920)] [--max-steps N (100)]\n"
                                    "                 [--max-batch N (4)] [--quiet] [--help]\n"
                                    "model options (as ltx generate; none: the embedded default model):\n") +
                                kModelOptionsUsage;

struct ServeOptions {
  EngineOptions engine;
  server::ServeSettings settings;
  std::string api_key_file;
  bool quiet = false, help = false;
};

// The key is the file's first line; a key file that is missing or empty is refused rather than serving openly.
std::string read_api_key(const std::string& path) {
  std::ifstream in(path);
  std::string key;
  if (!in || !std::getline(in, key))
    throw Error("serve", "--api-key-file " + path + " cannot be read", ErrorCategory::Io);
  while (!key.empty() && (key.back() == '\r' || key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.empty())
    throw Error("serve", "--api-key-file " + path + " holds no key on its first line", ErrorCategory::Io);
  return key;
}

ServeOptions parse_serve_options(Args args) {
  ServeOptions o;
  server::ServeSettings& s = o.settings;
  server::RequestLimits& l = s.limits;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      continue;
    }
    if (a == "--quiet") {
      o.quiet = true;
      continue;
    }
    if (take_model_flag(o.engine, a)) continue;
    static const std::set<std::string> own = {"--host",         "--port",       "--results-dir", "--queue-size",
                                              "--api-key-file", "--model-id",   "--max-body",    "--max-frames",
                                              "--max-width",    "--max-height", "--max-steps",   "--max-batch"};
    if (!own.count(a) && !is_model_option_with_value(a))
      usage_error(kCommand, "unknown option " + a + "\n" + kServeUsage);
    if (i + 1 >= args.size()) usage_error(kCommand, a + " needs a value\n" + kServeUsage);
    const std::string v = args[++i];
    if (a == "--host")
      s.host = v;
    else if (a == "--port")
      s.port = static_cast<int>(whole_number(kCommand, a, v, 0, 65535));
    else if (a == "--results-dir")
      s.results_dir = v;
    else if (a == "--queue-size")
      s.queue_size = static_cast<size_t>(whole_number(kCommand, a, v, 1, 100000));
    else if (a == "--api-key-file")
      o.api_key_file = v;
    else if (a == "--model-id")
      s.model_id = v;
    else if (a == "--max-body")
      s.max_body_bytes = static_cast<size_t>(parse_size(v, "--max-body"));
    else if (a == "--max-frames") {
      l.max_frames = whole_number(kCommand, a, v, 9);
      if ((l.max_frames - 1) % 8 != 0) usage_error(kCommand, "--max-frames must be 8k+1 (9, 17, ..., 257), got " + v);
    } else if (a == "--max-width")
      l.max_width = whole_number(kCommand, a, v, 32);
    else if (a == "--max-height")
      l.max_height = whole_number(kCommand, a, v, 32);
    else if (a == "--max-steps")
      l.max_steps = static_cast<int>(whole_number(kCommand, a, v, 1, 100000));
    else if (a == "--max-batch")
      l.max_batch = whole_number(kCommand, a, v, 1, 1024);
    else
      take_model_option(kCommand, o.engine, a, v);
  }
  return o;
}

// The id clients name the model by: --model-id, else the DiT's or checkpoint's file name without its extension.
std::string default_model_id(const EngineOptions& e, bool embedded) {
  if (embedded) return "ltx-embedded-default";
  return std::filesystem::path(e.dit.empty() ? e.checkpoint : e.dit).stem().string();
}

// Signals go to one thread that stops the server (or, before it exists, the process: nothing is written yet).
class SignalWatcher {
 public:
  SignalWatcher() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);  // before any other thread exists, so all inherit it
    signal(SIGPIPE, SIG_IGN);
    thread_ = std::thread([this] {
      int sig = 0;
      sigwait(&set_, &sig);
      if (quitting_) return;
      server::Server* server = server_.load();
      if (server == nullptr) std::_Exit(128 + sig);
      std::fprintf(stderr, "ltx serve: stopping (signal %d)\n", sig);
      server->stop();
    });
  }
  ~SignalWatcher() {
    quitting_ = true;
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }
  void watch(server::Server* server) { server_ = server; }

 private:
  sigset_t set_;
  std::atomic<server::Server*> server_{nullptr};
  std::atomic<bool> quitting_{false};
  std::thread thread_;
};

}  // namespace

int serve(Args args) {
  ServeOptions o = parse_serve_options(args);
  if (o.help) {
    std::printf("%s\n", kServeUsage.c_str());
    return 0;
  }
  if (!o.api_key_file.empty()) o.settings.api_key = read_api_key(o.api_key_file);
  SignalWatcher signals;

  const bool embedded = names_no_model(o.engine);
  TextProgressPrinter printer(stderr, false);
  const ProgressCallback progress = o.quiet ? ProgressCallback() : printer.callback();
  if (embedded) {
    o.engine = with_default_model(o.engine, [&](const std::string& line) {
      if (!o.quiet) std::fprintf(stderr, "%s\n", line.c_str());
    });
    const GenerateRequest d = embedded_default_request();
    o.settings.defaults = {d.frames, d.height, d.width, d.steps, d.fps};
  }
  if (o.settings.model_id.empty()) o.settings.model_id = default_model_id(o.engine, embedded);

  Engine engine(o.engine, progress);
  server::Server server(engine, o.settings);
  const int port = server.bind();
  signals.watch(&server);
  std::printf("ltx serve: %s (%s) listening on http://%s:%d, results in %s\n", o.settings.model_id.c_str(),
              engine.model_version().c_str(), o.settings.host.c_str(), port, o.settings.results_dir.c_str());
  std::fflush(stdout);
  server.run();
  signals.watch(nullptr);
  std::printf("ltx serve: stopped\n");
  return 0;
}

}  // namespace ltx::cli
