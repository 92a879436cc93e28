// `ltx bench --dit-slice DIR ...`, `ltx bench --vae-decode DIR ...`, `ltx bench --matmul ...`, `ltx bench
// --generation GGUF ...`, `ltx bench --int8-error DIT ...` and `ltx bench --vision PATH ...`: our side of the
// model benchmarks, run through the models as generate runs them, and the transformer's Linear shapes per weight
// type. The kernel table (ours beside oneDNN) is bench/kernels (bench_kernels).
#include <cstdio>
#include <string_view>

#include "commands.h"
#include "core/error.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage =
    "usage: ltx bench --dit-slice DIR [--reps N] [--backend NAME]\n"
    "       ltx bench --vae-decode DIR {video|vocoder} ...\n"
    "       ltx bench --matmul [--m LIST] [--types LIST] [--shapes video|audio|all] [--repeat N] [--threads N]\n"
    "  --matmul: x [1, M, K] bf16 times the LTX-2.3 22B transformer's Linear weights [N, K] through a compiled plan,\n"
    "  per weight type (bf16, f8_e4m3, q8_0, q4_k): median ms, GFLOP/s, ratio to bf16, weight bytes\n"
    "  (defaults: --m 192,1536 --types bf16,f8_e4m3,q8_0,q4_k --shapes video --repeat 3)\n"
    "       ltx bench --generation GGUF [--prompt-tokens N] [--new-tokens N] [--reps N] [--precision P]\n"
    "                 [--int8-activations]\n"
    "  --generation: Gemma 3 prompt processing and greedy generation speed in tokens/s (bench/generation.sh)\n"
    "       ltx bench --int8-error DIT [--video-tokens F,H,W] [--audio-tokens N] [--context-tokens N]\n"
    "  --int8-error: one transformer call with and without --int8-activations, per-block relative L2\n"
    "       ltx bench --backend-error DIT --backend NAME [--video-tokens F,H,W] ...\n"
    "  --backend-error: one transformer call on the CPU backend and on NAME, per-block relative L2, seconds\n"
    "       ltx bench --vision FOLDER|MMPROJ [--reps N] [--precision P]\n"
    "  --vision: Gemma 3's vision tower and projector, seconds per image (bench/vision.sh)\n"
    "The kernel table (ours beside oneDNN) is build/bench/bench_kernels [--quick].";

}  // namespace

int bench(Args args) {
  const std::string_view mode = args.empty() ? std::string_view() : std::string_view(args[0]);
  if (mode == "--dit-slice") return bench_dit_slice(args.subspan(1));
  if (mode == "--vae-decode") return bench_vae_decode(args.subspan(1));
  if (mode == "--matmul") return bench_matmul(args.subspan(1));
  if (mode == "--generation") return bench_generation(args.subspan(1));
  if (mode == "--int8-error") return bench_int8_error(args.subspan(1));
  if (mode == "--backend-error") return bench_backend_error(args.subspan(1));
  if (mode == "--vision") return bench_vision(args.subspan(1));
  if (mode == "--help" || mode == "-h") {
    std::printf("%s\n", kUsage);
    return 0;
  }
  fail("bench", kUsage);
}

}  // namespace ltx::cli
