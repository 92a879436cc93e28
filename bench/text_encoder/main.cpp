// Our side of bench/text_encoder.sh (issue 4): the Gemma-3 text encoder as the engine's PromptEncoder runs it
// (stages/text_encoder.cpp encode_ids: the tokenizer's left-padded 1024-token batch, then
// gemma3::Model::forward_real_tokens, every hidden state of the real tokens), timed from prompt text to hidden
// states for (a) the first prompt of PROMPTS alone and (b) the remaining prompts as one batch.
//
//   bench_text_encoder GGUF PROMPTS [--reps N] [--precision validation|production]
//
// Prints key=value lines: load_tokenizer_s, load_model_s, first_single_s / first_batch_s (the first call of each
// shape: plan compile and warm-up included), single_s / batch_s (median of N further calls, single and batch
// alternating), cpu_single_s / cpu_batch_s (median process CPU seconds per call, all threads), tokens_single,
// tokens_batch (real tokens), threads, precision, vs_f32_rel (production only: the worst over hidden states of max|ours
// - f32| / max|f32| on the batch, against validation precision; else 0); per-call times go to stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/thread_pool.h"
#include "models/gemma3/model.h"
#include "models/gemma3/tokenizer.h"

namespace {

using namespace ltx;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  LTX_CHECK(in.good(), "bench", path, ": cannot read the prompts file");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  LTX_CHECK(lines.size() >= 2, "bench", path, ": expected the single prompt, then the batch, one per line");
  return lines;
}

int64_t real_tokens(const Tensor& mask) {
  int64_t n = 0;
  for (int64_t v : mask.to_ints()) n += v != 0;
  return n;
}

int run(int argc, char** argv) {
  std::string gguf, prompts_path;
  int reps = 5;
  DType compute = DType::BF16;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--precision" && i + 1 < argc) {
      const std::string p = argv[++i];
      LTX_CHECK(p == "validation" || p == "production", "bench", "--precision is validation or production");
      compute = p == "validation" ? DType::F32 : DType::BF16;
    } else if (a.rfind("--", 0) != 0 && gguf.empty()) {
      gguf = a;
    } else if (a.rfind("--", 0) != 0 && prompts_path.empty()) {
      prompts_path = a;
    } else {
      fail("bench", "usage: bench_text_encoder GGUF PROMPTS [--reps N] [--precision validation|production]");
    }
  }
  LTX_CHECK(!gguf.empty() && !prompts_path.empty(), "bench",
            "usage: bench_text_encoder GGUF PROMPTS [--reps N] [--precision validation|production]");
  const std::vector<std::string> lines = read_lines(prompts_path);
  const std::vector<std::string> single(lines.begin(), lines.begin() + 1), batch(lines.begin() + 1, lines.end());

  auto t0 = Clock::now();
  const gemma3::Tokenizer tok = gemma3::Tokenizer::from_gguf(gguf);
  const double load_tokenizer = since(t0);
  t0 = Clock::now();
  gemma3::Model model = gemma3::Model::from_gguf(gguf, compute, cpu_backend());
  const double load_model = since(t0);

  int64_t tokens[2] = {0, 0};
  std::vector<double> cpu[2];  // process CPU seconds (all threads) per timed call
  // Prompt text -> all hidden states of the real tokens, as PromptEncoder::encode_ids runs Gemma.
  const auto encode = [&](const std::vector<std::string>& prompts, int which, bool timed = true) {
    const std::clock_t c0 = std::clock();
    const auto start = Clock::now();
    const gemma3::Tokenizer::Batch b = tok.encode_batch(prompts, 1024);
    const gemma3::Output out = model.forward_real_tokens(b.ids, b.mask);
    const double s = since(start);
    if (timed) cpu[which].push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    LTX_CHECK(out.hidden_states.size() == static_cast<size_t>(model.config().n_hidden_states()), "bench",
              "wrong number of hidden states");
    tokens[which] = real_tokens(b.mask);
    return s;
  };
  const double first_single = encode(single, 0, false);
  const double first_batch = encode(batch, 1, false);
  std::vector<double> ts, tb;
  for (int r = 0; r < reps; ++r) {
    ts.push_back(encode(single, 0));
    tb.push_back(encode(batch, 1));
    std::fprintf(stderr, "# ours rep %d: single %.4f s, batch %.4f s\n", r, ts.back(), tb.back());
  }
  // Production against validation (f32 everywhere) on the batch: the worst over hidden states of
  // max |prod - f32| / max |f32| over the real tokens (pad rows are zeros in both).
  double worst = 0;
  if (compute != DType::F32) {
    gemma3::Model f32 = gemma3::Model::from_gguf(gguf, DType::F32, cpu_backend());
    const gemma3::Tokenizer::Batch b = tok.encode_batch(batch, 1024);
    const gemma3::Output ref = f32.forward_real_tokens(b.ids, b.mask), got = model.forward_real_tokens(b.ids, b.mask);
    for (size_t s = 0; s < ref.hidden_states.size(); ++s) {
      const std::vector<float> r = ref.hidden_states[s].to_floats(), g = got.hidden_states[s].to_floats();
      double diff = 0, scale = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        diff = std::max(diff, static_cast<double>(std::fabs(g[i] - r[i])));
        scale = std::max(scale, static_cast<double>(std::fabs(r[i])));
      }
      worst = std::max(worst, diff / scale);
    }
  }
  std::printf("vs_f32_rel=%.3g\n", worst);
  std::printf("load_tokenizer_s=%.4f\n", load_tokenizer);
  std::printf("load_model_s=%.4f\n", load_model);
  std::printf("first_single_s=%.4f\n", first_single);
  std::printf("first_batch_s=%.4f\n", first_batch);
  std::printf("single_s=%.4f\n", median(ts));
  std::printf("batch_s=%.4f\n", median(tb));
  std::printf("cpu_single_s=%.4f\n", median(cpu[0]));
  std::printf("cpu_batch_s=%.4f\n", median(cpu[1]));
  std::printf("tokens_single=%lld\n", static_cast<long long>(tokens[0]));
  std::printf("tokens_batch=%lld\n", static_cast<long long>(tokens[1]));
  std::printf("threads=%d\n", thread_count());
  std::printf("precision=%s\n", compute == DType::F32 ? "validation" : "production");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_text_encoder: %s\n", e.what());
    return 1;
  }
}
