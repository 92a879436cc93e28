// `ltx synth --model NAME --format FORMAT --out DIR [--seed S] [--zeros] [--layers N] [--tokenizer FILE]`:
// full-size stand-ins of the released files (src/synth/synth.h), progress on stderr, the written paths on stdout.
#include "synth/synth.h"

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>

#include "commands.h"
#include "core/error.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage =
    "usage: ltx synth --model NAME --format FORMAT --out DIR [--seed S] [--zeros] [--layers N]\n"
    "                 [--tokenizer FILE] [--help]\n"
    "Writes deterministic stand-in weights with exactly the layout of a released file (names, shapes, dtypes,\n"
    "`config` metadata), to test the engine at full size without downloading. Same seed, same bytes.\n"
    "  --model NAME     ltx-2.3-22b, ltx-2-19b, gemma-3-12b, upsampler-x2, distilled-lora\n"
    "  --format FORMAT  ltx-2.3-22b, ltx-2-19b: bf16, fp8, gguf-q8_0, gguf-q4_k, gguf-q4_k_m\n"
    "                   gemma-3-12b: hf-bf16 (the gemma-3-12b-it folder), gguf-q4_k_m\n"
    "                   upsampler-x2, distilled-lora: bf16\n"
    "  --out DIR        the output folder (created if needed)\n"
    "  --seed S         the values' seed (default 0)\n"
    "  --zeros          all-zero values as sparse files: seconds and almost no disk for any size\n"
    "  --layers N       keep only the first N transformer layers (the config says N)\n"
    "  --tokenizer FILE hf-bf16: a tokenizer.json or tokenizer.model to copy into the folder\n"
    "Files are written under a .partial name and renamed when complete.";

template <class Int>
Int parse_integer(const std::string& option, std::string_view value) {
  Int v = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), v);
  LTX_CHECK(!value.empty() && error == std::errc() && end == value.data() + value.size(), "synth", option,
            " needs a whole number, got '", value, "'");
  return v;
}

}  // namespace

int synth(Args args) {
  synth::SynthOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    const auto value = [&]() -> std::string {
      LTX_CHECK(i + 1 < args.size(), "synth", a, " needs a value\n", kUsage);
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      std::printf("%s\n", kUsage);
      return 0;
    } else if (a == "--model") {
      o.model = value();
    } else if (a == "--format") {
      o.format = value();
    } else if (a == "--out") {
      o.out_dir = value();
    } else if (a == "--seed") {
      o.seed = parse_integer<uint64_t>(a, value());
    } else if (a == "--zeros") {
      o.zeros = true;
    } else if (a == "--layers") {
      o.layers = parse_integer<int64_t>(a, value());
      LTX_CHECK(o.layers >= 1, "synth", "--layers must be at least 1");
    } else if (a == "--tokenizer") {
      o.tokenizer = value();
    } else {
      fail("synth", "unknown argument '" + a + "'\n" + kUsage);
    }
  }
  LTX_CHECK(!o.model.empty() && !o.format.empty() && !o.out_dir.empty(), "synth",
            "--model, --format and --out are required\n", kUsage);
  const auto progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  for (const std::string& path : synth::write_stand_in(o, progress)) std::printf("%s\n", path.c_str());
  return 0;
}

}  // namespace ltx::cli
