// `ltx bench --dit-slice DIR [--reps N] [--backend NAME]`: our side of the issue-5 DiT slice benchmark. DIR holds
// weights.safetensors and inputs.safetensors written by tools/reference/bench_dit_slice.py (two LTX-2.3 blocks at the
// official widths, seeded bf16 weights, 1536 video + 26 audio tokens, 1024-token contexts). Reads the call's inputs
// (the caller's data, resident before the DiT exists), loads the DiT in production precision (bf16), runs one warm-up
// call and N timed calls, and prints `key=value` lines that bench/dit_slice.sh puts beside PyTorch's: time_s (median
// wall seconds per call), cpu_s (median process CPU seconds per call), baseline_rss_kb (VmRSS before loading the DiT:
// code, libraries and the caller's inputs), caller_input_bytes (those inputs' tensors), peak_rss_kb (VmHWM at the
// end), weights_bytes (the file's tensors), plan_peak_bytes (Plan::peak_bytes() of the call's plan: its arena, which
// holds the call's inputs too), plan_input_bytes (those inputs' share of it), heap_load_bytes / heap_bytes (malloc'd
// bytes in use after loading / after the last call while its outputs are alive, glibc's mallinfo2: what the calls
// add is the returned outputs, graph and plan structures and the small kernels' grow-only per-thread buffers),
// rss_file_kb / rss_anon_kb (resident file pages / anonymous memory at the end), threads.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "models/ltx/dit/dit.h"
#include "nn/weight_loader.h"
#include "nn/weight_source.h"

namespace ltx::cli {
namespace {

long proc_status_kb(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::atol(line.c_str() + key.size() + 1);
  fail("bench", "no " + key + " in /proc/self/status");
}

ltxm::DitStreamInput stream_input(const SafetensorsFile& in, const std::string& stream) {
  ltxm::DitStreamInput s;
  s.latent = in.get(stream + ".latent");
  s.sigma = in.get(stream + ".sigma");
  s.timesteps = in.get(stream + ".timesteps");
  s.positions = in.get(stream + ".positions");
  s.context = in.get(stream + ".context");
  return s;
}

// User + system CPU seconds of the whole process so far: on a shared machine, unlike the wall clock, it does not
// count the time other processes held our cores.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

// Bytes malloc has handed out and not taken back (small chunks and mmap-ed blocks).
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int bench_dit_slice(Args args) {
  std::string dir, backend_name = "cpu";
  int reps = 3;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--reps" && i + 1 < args.size())
      reps = std::max(1, std::atoi(args[++i]));
    else if (a == "--backend" && i + 1 < args.size())
      backend_name = args[++i];
    else if (dir.empty() && !a.starts_with("--"))
      dir = a;
    else
      fail("bench",
           "unknown argument '" + std::string(a) + "'; usage: ltx bench --dit-slice DIR [--reps N] [--backend NAME]");
  }
  LTX_CHECK(!dir.empty(), "bench", "usage: ltx bench --dit-slice DIR [--reps N] (DIR from bench/dit_slice.sh)");
  // The caller's data first, touched, so that RSS before the DiT counts it (the call copies it into its arena).
  const SafetensorsFile in = SafetensorsFile::open(dir + "/inputs.safetensors");
  ltxm::DitCall call;
  call.video = stream_input(in, "video");
  call.audio = stream_input(in, "audio");
  double checksum = 0;
  size_t caller_input_bytes = 0;
  for (const auto& info : in.tensors()) {
    const Tensor t = in.get(info.name);
    for (float v : t.to_floats()) checksum += v;
    caller_input_bytes += t.nbytes();
  }
  const long baseline_kb = proc_status_kb("VmRSS");

  auto source = open_safetensors(dir + "/weights.safetensors");
  const auto it = source->metadata().find("config");
  LTX_CHECK(it != source->metadata().end(), "bench", source->describe(), ": no `config` metadata");
  const nlohmann::json cfg = nlohmann::json::parse(it->second);
  const ltxm::DitConfig config = ltxm::DitConfig::from_metadata(cfg.at("transformer"), ltxm::DitModelType::AudioVideo);
  size_t weights_bytes = 0;
  for (const std::string& name : source->names()) weights_bytes += source->get(name).nbytes();
  ltxm::Dit dit =
      ltxm::Dit::load(WeightLoader(source, "model.diffusion_model."), config, DType::BF16, backend_named(backend_name));
  std::fprintf(stderr, "# after load: RssFile %ld kB, RssAnon %ld kB\n", proc_status_kb("RssFile"),
               proc_status_kb("RssAnon"));
  const size_t heap_load_bytes = heap_in_use();

  // The first call compiles (its seconds are reported apart: a whole-graph backend compiles the program then).
  std::vector<double> times, cpu_times;
  size_t heap_bytes = 0;
  double first_call_s = 0;
  for (int r = 0; r <= reps; ++r) {
    const double c0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const ltxm::DitOutput out = dit.run(call);
    heap_bytes = heap_in_use();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - c0;
    LTX_CHECK(out.video_velocity.defined() && out.audio_velocity.defined(), "bench", "the DiT returned no velocity");
    std::fprintf(stderr, "# call %d: %.3f s wall, %.3f s CPU; RssFile %ld kB, RssAnon %ld kB, VmHWM %ld kB\n", r, s,
                 cpu, proc_status_kb("RssFile"), proc_status_kb("RssAnon"), proc_status_kb("VmHWM"));
    if (r == 0) first_call_s = s;
    if (r > 0) {
      times.push_back(s);
      cpu_times.push_back(cpu);
    }
  }
  std::printf("first_call_s=%.4f\n", first_call_s);
  std::printf("time_s=%.4f\n", median(times));
  std::printf("cpu_s=%.4f\n", median(cpu_times));
  std::printf("baseline_rss_kb=%ld\n", baseline_kb);
  std::printf("caller_input_bytes=%zu\n", caller_input_bytes);
  std::printf("inputs_checksum=%.6g\n", checksum);
  std::printf("peak_rss_kb=%ld\n", proc_status_kb("VmHWM"));
  // Where the resident memory is at the end: file pages (mapped weights, code) and anonymous (arena, heap).
  std::printf("rss_file_kb=%ld\n", proc_status_kb("RssFile"));
  std::printf("rss_anon_kb=%ld\n", proc_status_kb("RssAnon"));
  std::printf("weights_bytes=%zu\n", weights_bytes);
  std::printf("plan_peak_bytes=%zu\n", dit.plans().max_peak_bytes());
  std::printf("plan_input_bytes=%zu\n", dit.last_plan_stats().input_bytes);
  std::printf("heap_load_bytes=%zu\n", heap_load_bytes);
  std::printf("heap_bytes=%zu\n", heap_bytes);
  std::printf("plans=%zu\n", dit.plans().size());
  std::printf("threads=%d\n", thread_count());
  return 0;
}

}  // namespace ltx::cli
