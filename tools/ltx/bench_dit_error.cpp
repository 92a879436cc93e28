// `ltx bench --int8-error DIT [--video-tokens F,H,W] [--audio-tokens N] [--context-tokens N]`: what the
// int8-activation option (core/int8_activations.h) changes in one transformer call. Loads the DiT from DIT (an
// official file, a GGUF or a stand-in from `ltx synth`; its GGUF-quantized Linears are the ones the option changes),
// runs one call on seeded inputs (a latent grid of F×H×W video tokens, N audio tokens, bf16 text contexts of RMS 1 as
// the connectors give them in production, at σ = 0.9) with the weights decoded to bf16 and once more with int8
// activations, and prints per block the relative L2 difference of each stream's hidden state
// (transformer_blocks.i.out), then of the velocities, and the seconds of each call (after a first, untimed call that
// compiles the plan and reads the weights).
// `ltx bench --backend-error DIT --backend NAME [same options]`: the same call on the CPU backend and on NAME (xla),
// each on its own loaded DiT, the same table of NAME against the CPU, and the seconds of each backend's first call
// (compiling) and of a second.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/int8_activations.h"
#include "core/tensor.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/dit/dit_checkpoint.h"
#include "option_values.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage =
    "usage: ltx bench --int8-error DIT [--video-tokens F,H,W] [--audio-tokens N] [--context-tokens N]\n"
    "       ltx bench --backend-error DIT --backend NAME [--video-tokens F,H,W] [--audio-tokens N] "
    "[--context-tokens N]\n"
    "(defaults: 2,8,12 (384x256, 9 frames), 9 audio tokens, 1024 context tokens)";

// Seeded values uniform with RMS 1 (splitmix64 of the index).
std::vector<float> seeded(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v[i] = static_cast<float>((2.0 * static_cast<double>(z >> 11) * 0x1.0p-53 - 1.0) * std::sqrt(3.0));
  }
  return v;
}

Tensor filled(Shape shape, float value) {
  return Tensor::from_floats(DType::F32, shape, std::vector<float>(static_cast<size_t>(shape.numel()), value));
}

// Video tokens on an F×H×W latent grid: positions [1, 3, T, 2] as (start, end) seconds for time (8 frames per
// latent frame at 25 fps) and pixels for height and width (32 per latent cell).
ltxm::DitStreamInput video_input(const ltxm::DitConfig& c, int64_t f, int64_t h, int64_t w, int64_t context) {
  const int64_t t = f * h * w;
  std::vector<float> pos(static_cast<size_t>(3 * t * 2));
  for (int64_t i = 0; i < t; ++i) {
    const int64_t fi = i / (h * w), hi = i / w % h, wi = i % w;
    const float start[3] = {static_cast<float>(fi * 8) / 25.0f, static_cast<float>(hi * 32),
                            static_cast<float>(wi * 32)};
    const float size[3] = {8.0f / 25.0f, 32.0f, 32.0f};
    for (int a = 0; a < 3; ++a) {
      pos[static_cast<size_t>((a * t + i) * 2)] = start[a];
      pos[static_cast<size_t>((a * t + i) * 2 + 1)] = start[a] + size[a];
    }
  }
  ltxm::DitStreamInput s;
  s.latent = Tensor::from_floats(DType::F32, {1, t, c.in_channels}, seeded(static_cast<size_t>(t * c.in_channels), 1));
  s.sigma = filled({1}, 0.9f);
  s.timesteps = filled({1, t}, 0.9f);
  s.positions = Tensor::from_floats(DType::F32, {1, 3, t, 2}, pos);
  s.context = Tensor::from_floats(DType::BF16, {1, context, c.cross_attention_dim},
                                  seeded(static_cast<size_t>(context * c.cross_attention_dim), 2));
  return s;
}

ltxm::DitStreamInput audio_input(const ltxm::DitConfig& c, int64_t t, int64_t context) {
  std::vector<float> pos(static_cast<size_t>(t * 2));
  for (int64_t i = 0; i < t; ++i) {
    pos[static_cast<size_t>(2 * i)] = static_cast<float>(i) * 0.04f;
    pos[static_cast<size_t>(2 * i + 1)] = static_cast<float>(i + 1) * 0.04f;
  }
  ltxm::DitStreamInput s;
  s.latent = Tensor::from_floats(DType::F32, {1, t, c.audio_in_channels},
                                 seeded(static_cast<size_t>(t * c.audio_in_channels), 3));
  s.sigma = filled({1}, 0.9f);
  s.timesteps = filled({1, t}, 0.9f);
  s.positions = Tensor::from_floats(DType::F32, {1, 1, t, 2}, pos);
  s.context = Tensor::from_floats(DType::BF16, {1, context, c.audio_cross_attention_dim},
                                  seeded(static_cast<size_t>(context * c.audio_cross_attention_dim), 4));
  return s;
}

double rel_l2(const Tensor& ref, const Tensor& got) {
  const std::vector<float> a = ref.to_floats(), b = got.to_floats();
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(b[i]) - a[i]) * (static_cast<double>(b[i]) - a[i]);
    norm += static_cast<double>(a[i]) * a[i];
  }
  return std::sqrt(diff / norm);
}

// Per block, the relative L2 of `got`'s hidden states against `ref`'s, then of the velocities.
void print_block_errors(const ltxm::DitConfig& c, const ltxm::DitOutput& ref, const ltxm::DitOutput& got) {
  std::printf("| block | video | audio |\n|---:|---:|---:|\n");
  for (int64_t b = 0; b < c.n_layers; ++b) {
    const std::string p = "transformer_blocks." + std::to_string(b) + ".out.";
    const double v = rel_l2(ref.intermediates.at(p + "video"), got.intermediates.at(p + "video"));
    const double a = c.has_audio() ? rel_l2(ref.intermediates.at(p + "audio"), got.intermediates.at(p + "audio")) : 0.0;
    std::printf("| %lld | %.3g | %.3g |\n", static_cast<long long>(b), v, a);
  }
  std::printf("| velocity | %.3g | %.3g |\n", rel_l2(ref.video_velocity, got.video_velocity),
              c.has_audio() ? rel_l2(ref.audio_velocity, got.audio_velocity) : 0.0);
}

struct Request {
  std::string path, backend;
  int64_t f = 2, h = 8, w = 12, audio = 9, context = 1024;
};

Request parse(Args args, bool wants_backend) {
  Request r;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (!a.starts_with("--") && r.path.empty()) {
      r.path = a;
      continue;
    }
    LTX_CHECK(i + 1 < args.size(), "bench", a, " needs a value; ", kUsage);
    const std::string v = args[++i];
    if (a == "--video-tokens") {
      LTX_CHECK(std::sscanf(v.c_str(), "%ld,%ld,%ld", &r.f, &r.h, &r.w) == 3 && r.f > 0 && r.h > 0 && r.w > 0, "bench",
                "--video-tokens is F,H,W (three positive counts), got ", v);
    } else if (a == "--audio-tokens") {
      r.audio = whole_number("bench", a, v, 1, 100000);
    } else if (a == "--context-tokens") {
      r.context = whole_number("bench", a, v, 1, 100000);
    } else if (a == "--backend" && wants_backend) {
      r.backend = v;
    } else {
      fail("bench", "unknown argument " + a + "; " + kUsage);
    }
  }
  LTX_CHECK(!r.path.empty() && (!wants_backend || !r.backend.empty()), "bench", kUsage);
  return r;
}

ltxm::DitCall call_for(const ltxm::DitConfig& c, const Request& r) {
  ltxm::DitCall call;
  call.video = video_input(c, r.f, r.h, r.w, r.context);
  if (c.has_audio()) call.audio = audio_input(c, r.audio, r.context);
  return call;
}

double seconds_of(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void print_header(const Request& r, const ltxm::DitConfig& c, const std::string& what) {
  std::printf("# %s: %lld video tokens, %lld audio tokens, %lld context tokens; relative L2 of %s\n", r.path.c_str(),
              static_cast<long long>(r.f * r.h * r.w), static_cast<long long>(c.has_audio() ? r.audio : 0),
              static_cast<long long>(r.context), what.c_str());
}

}  // namespace

int bench_int8_error(Args args) {
  const Request r = parse(args, /*wants_backend=*/false);
  const ltxm::DitCheckpoint checkpoint = ltxm::open_dit_checkpoint(r.path);
  ltxm::Dit dit = ltxm::Dit::load(checkpoint.loader(), checkpoint.config, DType::BF16, cpu_backend());
  const ltxm::DitConfig& c = dit.config();
  const ltxm::DitCall call = call_for(c, r);
  dit.run(call, /*collect_intermediates=*/true);  // compiles the plan and reads the weights: the timed calls compare
                                                  // compute
  ltxm::DitOutput outputs[2];
  double seconds[2];
  for (int int8 = 0; int8 < 2; ++int8) {
    set_int8_activations(int8 == 1);
    seconds[int8] = seconds_of([&] { outputs[int8] = dit.run(call, /*collect_intermediates=*/true); });
  }
  set_int8_activations(false);
  print_header(r, c, "int8 activations against the weights decoded to bf16");
  print_block_errors(c, outputs[0], outputs[1]);
  std::printf("seconds_decoded=%.2f\nseconds_int8=%.2f\n", seconds[0], seconds[1]);
  return 0;
}

int bench_backend_error(Args args) {
  const Request r = parse(args, /*wants_backend=*/true);
  const ltxm::DitCheckpoint checkpoint = ltxm::open_dit_checkpoint(r.path);
  const Backend* backends[2] = {&cpu_backend(), &backend_named(r.backend)};
  ltxm::DitOutput outputs[2];
  double first[2], second[2];
  size_t peaks[2];
  std::optional<ltxm::DitCall> call;
  for (int i = 0; i < 2; ++i) {
    ltxm::Dit dit = ltxm::Dit::load(checkpoint.loader(), checkpoint.config, DType::BF16, *backends[i]);
    if (!call) call = call_for(dit.config(), r);
    first[i] = seconds_of([&] { dit.run(*call, /*collect_intermediates=*/true); });
    second[i] = seconds_of([&] { outputs[i] = dit.run(*call, /*collect_intermediates=*/true); });
    peaks[i] = dit.plans().max_peak_bytes();
  }
  const ltxm::DitConfig c = checkpoint.config;
  print_header(r, c, r.backend + " against cpu");
  print_block_errors(c, outputs[0], outputs[1]);
  std::printf("cpu_first_s=%.2f\ncpu_second_s=%.2f\ncpu_plan_peak_bytes=%zu\n", first[0], second[0], peaks[0]);
  std::printf("%s_first_s=%.2f\n%s_second_s=%.2f\n%s_plan_peak_bytes=%zu\n", r.backend.c_str(), first[1],
              r.backend.c_str(), second[1], r.backend.c_str(), peaks[1]);
  return 0;
}

}  // namespace ltx::cli
