// `ltx bench --matmul [--m LIST] [--types LIST] [--shapes video|audio|all] [--repeat N] [--threads N]`: y = x·Wᵀ at
// the LTX-2.3 22B transformer's Linear shapes (layout: src/synth/layouts/ltx-2.3-22b.json; video width 32 heads ×
// 128 = 4096, feed-forward 4x, text context 4096 wide; audio 32 × 64 = 2048, its context 2048 wide) for each weight
// type the engine keeps resident. Each row is one nn::Linear (no bias) applied to bf16 activations [1, M, K], built
// into a graph and compiled into a plan as the DiT builds its own, so the timing is the plan's step: bf16 weights
// converted at load; f8_e4m3 with a per-tensor weight_scale, which Linear applies as the matmul's epilogue; q8_0 and
// q4_k decoded inside the matmul. Weights are seeded uniform values, quantized by quantize_row (fp8: rounded to the
// nearest e4m3 value after scaling amax to 448, as scaled-fp8 checkpoints store them).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/float8.h"
#include "core/int8_activations.h"
#include "core/quant.h"
#include "core/thread_pool.h"
#include "graph/compile.h"
#include "nn/layers.h"

namespace ltx::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: ltx bench --matmul [--m LIST] [--types LIST] [--shapes video|audio|all] [--repeat N] [--threads N] "
    "[--int8] (defaults: --m 192,1536 --types bf16,f8_e4m3,q8_0,q4_k --shapes video --repeat 3; --int8 adds a row "
    "per GGUF type with int8 activations, and its error against the same weights decoded to bf16)";

// One Linear of a DiT block: W [out, in]. fixed_m > 0: the rows are the text context's tokens, not the --m list.
struct LinearShape {
  std::string_view name;
  int64_t in = 0, out = 0;
  int64_t fixed_m = 0;
};

// Text contexts are padded to 1024 tokens (the Gemma prompt length).
constexpr int64_t kContextTokens = 1024;

constexpr std::array<LinearShape, 4> kVideoShapes = {{
    {"video attn1.to_q/k/v/out", 4096, 4096, 0},
    {"video ff.net.0.proj", 4096, 16384, 0},
    {"video ff.net.2", 16384, 4096, 0},
    {"video attn2.to_k/v (text)", 4096, 4096, kContextTokens},
}};
constexpr std::array<LinearShape, 4> kAudioShapes = {{
    {"audio attn1.to_q/k/v/out", 2048, 2048, 0},
    {"audio ff.net.0.proj", 2048, 8192, 0},
    {"audio ff.net.2", 8192, 2048, 0},
    {"audio attn2.to_k/v (text)", 2048, 2048, kContextTokens},
}};

struct Options {
  // 192 tokens: 384x256, 9 frames (2 latent frames of 8 x 12); 1536: 768x512, 25 frames (4 of 16 x 24).
  std::vector<int64_t> ms = {192, 1536};
  std::vector<DType> types = {DType::BF16, DType::F8_E4M3, DType::Q8_0, DType::Q4_K};
  std::vector<LinearShape> shapes{kVideoShapes.begin(), kVideoShapes.end()};
  int repeat = 3;
  int threads = 0;  // 0: the pool's default (LTX_THREADS, else every core)
  bool int8 = false;
  bool help = false;
};

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> items;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    items.emplace_back(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  }
  return items;
}

int64_t parse_positive(const std::string& s, std::string_view what) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  LTX_CHECK(!s.empty() && *end == '\0' && v > 0, "bench", what, " must be a positive integer, got '", s, "'");
  return v;
}

DType parse_type(const std::string& name) {
  const std::optional<DType> t = dtype_from_name(name);
  LTX_CHECK(t && (*t == DType::BF16 || *t == DType::F8_E4M3 || *t == DType::Q8_0 || *t == DType::Q4_K), "bench",
            "--types: '", name, "' is not one of bf16, f8_e4m3, q8_0, q4_k");
  return *t;
}

Options parse_options(Args args) {
  Options o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (a == "--int8") {
      o.int8 = true;
      continue;
    }
    LTX_CHECK(i + 1 < args.size(), "bench", "'", a, "' needs a value; ", kUsage);
    const std::string v = args[++i];
    if (a == "--m") {
      o.ms.clear();
      for (const std::string& m : split_list(v)) o.ms.push_back(parse_positive(m, "--m"));
    } else if (a == "--types") {
      o.types.clear();
      for (const std::string& t : split_list(v)) o.types.push_back(parse_type(t));
    } else if (a == "--shapes") {
      LTX_CHECK(v == "video" || v == "audio" || v == "all", "bench", "--shapes must be video, audio or all");
      o.shapes.clear();
      if (v != "audio") o.shapes.insert(o.shapes.end(), kVideoShapes.begin(), kVideoShapes.end());
      if (v != "video") o.shapes.insert(o.shapes.end(), kAudioShapes.begin(), kAudioShapes.end());
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(parse_positive(v, "--repeat"));
    } else if (a == "--threads") {
      o.threads = static_cast<int>(parse_positive(v, "--threads"));
    } else {
      fail("bench", "unknown argument '" + std::string(a) + "'; " + std::string(kUsage));
    }
  }
  LTX_CHECK(!o.ms.empty() && !o.types.empty(), "bench", "--m and --types need at least one value");
  return o;
}

// Seeded values uniform in [-bound, bound) (splitmix64 of the element index), the same for every thread count.
float seeded_uniform(uint64_t index, float bound) {
  uint64_t z = index + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
  return static_cast<float>((2.0 * unit - 1.0) * bound);
}

// A weight W [n, k] of `dtype` made from the seeded values; `scale` gets the per-tensor weight_scale (1 except fp8).
Tensor make_weight(DType dtype, int64_t n, int64_t k, float& scale) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(k));  // nn.Linear's default init range
  scale = dtype == DType::F8_E4M3 ? bound / 448.0f : 1.0f;
  Tensor w = Tensor::empty(dtype, {n, k});
  const auto row_bytes = static_cast<int64_t>(dtype_bytes_for(dtype, k));
  parallel_for(n, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(k));
    for (int64_t r = begin; r < end; ++r) {
      for (int64_t j = 0; j < k; ++j)
        row[static_cast<size_t>(j)] = seeded_uniform(static_cast<uint64_t>(r * k + j), bound);
      std::byte* dst = w.raw() + r * row_bytes;
      if (dtype == DType::F8_E4M3) {
        for (float& v : row) v /= scale;
        quantize_f8_e4m3(row.data(), reinterpret_cast<uint8_t*>(dst), k);
      } else {
        quantize_row(dtype, row.data(), dst, k);
      }
    }
  });
  return w;
}

// Activations x [1, m, k] in bf16, production precision.
Tensor make_activations(int64_t m, int64_t k) {
  std::vector<float> v(static_cast<size_t>(m * k));
  for (size_t i = 0; i < v.size(); ++i) v[i] = seeded_uniform(0x5EED0000ull + i, 1.0f);
  return Tensor::from_floats(DType::BF16, {1, m, k}, v);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Row {
  DType type = DType::BF16;
  bool int8 = false;
  double rel_l2 = -1;  // int8 rows: ||y - y_decoded|| / ||y_decoded||
  double ms = 0;       // median wall milliseconds per run
  double gflops = 0;
  size_t weight_bytes = 0;
  int steps = 0;      // the plan's kernels
  int fused_ops = 0;  // elementwise ops folded into them (fp8's weight_scale)
};

// linear(x) built as the DiT builds its layers, compiled into a plan.
std::unique_ptr<Plan> compile_linear(const nn::Linear& linear, const Tensor& x) {
  Graph g;
  g.output(linear(g.input("x", x.dtype(), x.shape())), "y");
  return compile(g, cpu_backend());
}

// Median milliseconds per plan: one warm-up run each, then `repeat` rounds that run every plan once in turn, so
// that a change in the machine's load during the rounds reaches every weight type alike.
std::vector<double> time_plans(const std::vector<std::unique_ptr<Plan>>& plans, const Tensor& x, int repeat) {
  for (const auto& plan : plans) plan->run({x});
  std::vector<std::vector<double>> ms(plans.size());
  for (int r = 0; r < repeat; ++r)
    for (size_t i = 0; i < plans.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      plans[i]->run({x});
      ms[i].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  std::vector<double> medians;
  for (const auto& m : ms) medians.push_back(median(m));
  return medians;
}

void print_row(const LinearShape& s, int64_t m, const Row& r, double bf16_gflops) {
  char ratio[16] = "-";
  if (bf16_gflops > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.gflops / bf16_gflops);
  std::string plan = std::to_string(r.steps) + (r.steps == 1 ? " step" : " steps");
  if (r.fused_ops > 0) plan += " +" + std::to_string(r.fused_ops) + " fused";
  if (r.int8) plan += ", int8 activations: rel_l2 " + std::to_string(r.rel_l2) + " vs decoded";
  const std::string type = std::string(dtype_name(r.type)) + (r.int8 ? " int8" : "");
  std::printf("| %s | %lld | %lld | %lld | %s | %.2f | %.1f | %s | %zu | %s |\n", std::string(s.name).c_str(),
              static_cast<long long>(m), static_cast<long long>(s.out), static_cast<long long>(s.in), type.c_str(),
              r.ms, r.gflops, ratio, r.weight_bytes, plan.c_str());
  std::fflush(stdout);
}

// Every (M, type) row of one shape; the weights are made once and shared by the M values.
void bench_shape(const LinearShape& s, const Options& o) {
  std::vector<nn::Linear> linears;
  for (DType t : o.types) {
    nn::Linear l;
    l.name = "bench." + std::string(dtype_name(t));
    l.compute = DType::BF16;
    l.weight = make_weight(t, s.out, s.in, l.weight_scale);
    linears.push_back(std::move(l));
  }
  const std::vector<int64_t> ms = s.fixed_m > 0 ? std::vector<int64_t>{s.fixed_m} : o.ms;
  for (int64_t m : ms) {
    const Tensor x = make_activations(m, s.in);
    const double flop = 2.0 * static_cast<double>(m) * static_cast<double>(s.out) * static_cast<double>(s.in);
    std::vector<std::unique_ptr<Plan>> plans;
    for (const nn::Linear& l : linears) plans.push_back(compile_linear(l, x));
    const std::vector<double> ms_median = time_plans(plans, x, o.repeat);
    std::vector<Row> rows;
    double bf16_gflops = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
      Row r;
      r.type = o.types[i];
      r.ms = ms_median[i];
      r.gflops = flop / (r.ms * 1e6);
      r.weight_bytes = linears[i].weight.nbytes();
      r.steps = plans[i]->stats().n_steps;
      r.fused_ops = plans[i]->stats().n_fused_ops;
      if (r.type == DType::BF16) bf16_gflops = r.gflops;
      rows.push_back(r);
    }
    if (o.int8) {  // the GGUF types again, compiled and timed with int8 activations, checked against their rows
      std::vector<size_t> gguf;
      for (size_t i = 0; i < o.types.size(); ++i)
        if (o.types[i] == DType::Q8_0 || o.types[i] == DType::Q4_K) gguf.push_back(i);
      std::vector<std::vector<float>> decoded;
      for (size_t i : gguf) decoded.push_back(plans[i]->run({x})[0].to_floats());
      set_int8_activations(true);
      std::vector<std::unique_ptr<Plan>> int8_plans;
      for (size_t i : gguf) int8_plans.push_back(compile_linear(linears[i], x));
      const std::vector<double> int8_ms = time_plans(int8_plans, x, o.repeat);
      for (size_t j = 0; j < gguf.size(); ++j) {
        Row r = rows[gguf[j]];
        r.int8 = true;
        r.ms = int8_ms[j];
        r.gflops = flop / (r.ms * 1e6);
        r.steps = int8_plans[j]->stats().n_steps;
        const std::vector<float> y = int8_plans[j]->run({x})[0].to_floats();
        double diff = 0, norm = 0;
        for (size_t e = 0; e < y.size(); ++e) {
          diff += (double(y[e]) - decoded[j][e]) * (double(y[e]) - decoded[j][e]);
          norm += double(decoded[j][e]) * decoded[j][e];
        }
        r.rel_l2 = std::sqrt(diff / norm);
        rows.push_back(r);
      }
      set_int8_activations(false);
    }
    for (const Row& r : rows) print_row(s, m, r, bf16_gflops);
  }
}

}  // namespace

int bench_matmul(Args args) {
  const Options o = parse_options(args);
  if (o.help) {
    std::printf("%.*s\n", static_cast<int>(kUsage.size()), kUsage.data());
    return 0;
  }
  if (o.threads > 0) set_thread_count(o.threads);
  if (!cpu_features().avx512)
    std::fprintf(stderr, "# this CPU has no AVX-512: the matmuls run on the reference kernel (very slow)\n");
  else if (!cpu_features().avx512_bf16)
    std::fprintf(stderr, "# this CPU has no AVX-512 BF16: bf16 products run on its AVX-512F emulation\n");
  std::printf(
      "# x [1, M, K] bf16 · W [N, K]ᵀ through nn::Linear and a compiled plan, %d threads; ms: median of %d "
      "rounds that run every type once, after one warm-up; vs bf16: GFLOP/s over bf16's at the same shape and M\n",
      thread_count(), o.repeat);
  std::printf("| shape | M | N | K | weights | ms | GFLOP/s | vs bf16 | weight bytes | plan |\n");
  std::printf("|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
  for (const LinearShape& s : o.shapes) bench_shape(s, o);
  return 0;
}

}  // namespace ltx::cli
