// Every fuzz target (tests/fuzz/targets) on its seed corpus (tests/fuzz/corpus/<target>/) and its regression inputs
// (tests/fuzz/regressions/<target>/: each input a fuzzing run once crashed, hung or leaked on, kept after its fix).
// Under ASan and UBSan (scripts/test) a regression is a failed test; here a crash or an abort is.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/targets/fuzz_target.h"

LTX_FUZZ_TARGET(safetensors);
LTX_FUZZ_TARGET(gguf);
LTX_FUZZ_TARGET(json_config);
LTX_FUZZ_TARGET(tokenizer);
LTX_FUZZ_TARGET(tokenizer_json);
LTX_FUZZ_TARGET(image);
LTX_FUZZ_TARGET(media);
LTX_FUZZ_TARGET(noise_record);
LTX_FUZZ_TARGET(lora);
LTX_FUZZ_TARGET(request);
LTX_FUZZ_TARGET(server_request);

namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

const Target kTargets[] = {
    {"safetensors", ltx_fuzz_safetensors},
    {"gguf", ltx_fuzz_gguf},
    {"json_config", ltx_fuzz_json_config},
    {"tokenizer", ltx_fuzz_tokenizer},
    {"tokenizer_json", ltx_fuzz_tokenizer_json},
    {"image", ltx_fuzz_image},
    {"media", ltx_fuzz_media},
    {"noise_record", ltx_fuzz_noise_record},
    {"lora", ltx_fuzz_lora},
    {"request", ltx_fuzz_request},
    {"server_request", ltx_fuzz_server_request},
};

std::vector<fs::path> inputs(const std::string& target) {
  std::vector<fs::path> files;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(LTX_SOURCE_DIR) / "tests/fuzz" / kind / target;
    if (fs::is_directory(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
  }
  return files;
}

class FuzzReplay : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzReplay, EveryKeptInputIsHandled) {
  const Target& t = GetParam();
  const std::vector<fs::path> files = inputs(t.name);
  EXPECT_FALSE(files.empty()) << "no seed corpus for " << t.name;
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    t.run(bytes.data(), bytes.size());
  }
  static const uint8_t none = 0;
  t.run(&none, 0);  // the empty input (libFuzzer never passes a null pointer)
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& i) { return std::string(i.param.name); });

}  // namespace
