// Subcommands of the `ltx` tool, one per file in tools/ltx/. Each takes the arguments after its name and
// returns the process exit code; errors are reported by throwing ltx::Error (main prints them).
#pragma once

#include <span>
#include <string_view>

namespace ltx::cli {

using Args = std::span<char* const>;

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `ltx help`
  int (*run)(Args args);
};

std::span<const Command> commands();

int inspect(Args args);        // inspect.cpp
int compare(Args args);        // compare.cpp
int compare_media(Args args);  // compare_media.cpp
int bench(Args args);          // bench.cpp: --dit-slice, --vae-decode or --matmul
int selfcheck(Args args);      // selfcheck.cpp
int verify(Args args);         // verify.cpp
int encode(Args args);         // encode.cpp
int generate(Args args);       // generate.cpp
int tokenize(Args args);       // tokenize.cpp
int enhance(Args args);        // enhance.cpp
int synth(Args args);          // synth.cpp
int serve(Args args);          // serve.cpp

// bench_dit_slice.cpp: `ltx bench --dit-slice`, reached through bench().
int bench_dit_slice(Args args);
// bench_matmul.cpp: `ltx bench --matmul`, reached through bench().
int bench_matmul(Args args);
// bench_generation.cpp: `ltx bench --generation`, reached through bench().
int bench_generation(Args args);
// bench_dit_error.cpp: `ltx bench --int8-error` and `--backend-error`, reached through bench().
int bench_int8_error(Args args);
int bench_backend_error(Args args);
// bench_vision.cpp: `ltx bench --vision`, reached through bench().
int bench_vision(Args args);
// bench_vae_decode.cpp: `ltx bench --vae-decode`, reached through bench().
int bench_vae_decode(Args args);

}  // namespace ltx::cli
