// `ltx bench --dit-slice DIR ...` and `ltx bench --vae-decode DIR ...`: our side of the model benchmarks, run
// through the models as generate runs them. The kernel table (ours beside oneDNN) is bench/kernels (bench_kernels).
#include <string_view>

#include "commands.h"
#include "core/error.h"

namespace ltx::cli {

int bench(Args args) {
  if (!args.empty() && std::string_view(args[0]) == "--dit-slice") return bench_dit_slice(args.subspan(1));
  if (!args.empty() && std::string_view(args[0]) == "--vae-decode") return bench_vae_decode(args.subspan(1));
  fail("bench", "usage: ltx bench --dit-slice DIR [--reps N] | ltx bench --vae-decode DIR {video|vocoder} ... (the "
                "kernel table is build/bench_kernels [--quick])");
}

}  // namespace ltx::cli
