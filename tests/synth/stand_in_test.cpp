// Stand-in files read back with the engine's safetensors reader: full-size zeros files (sparse, seconds) have exactly
// the published names, shapes, dtypes and config; small seeded files hold exactly the generator's values.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <filesystem>

#include "core/float8.h"
#include "core/half.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "io/test_files.h"
#include "synth/fp8.h"
#include "synth/safetensors_stream.h"
#include "synth/synth.h"
#include "synth/values.h"

namespace ltx::synth {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> write(const std::string& model, const std::string& format, const std::string& dir,
                               int64_t layers = -1) {
  SynthOptions o;
  o.model = model;
  o.format = format;
  o.out_dir = dir;
  o.zeros = true;
  o.layers = layers;
  return write_stand_in(o, {});
}

// The file holds exactly the layout's tensors, and the layout's metadata with `config` as a JSON string.
void expect_layout(const SafetensorsFile& f, const Layout& l) {
  ASSERT_EQ(f.tensors().size(), l.tensors.size());
  for (size_t i = 0; i < l.tensors.size(); ++i) {
    const TensorInfo& got = f.tensors()[i];  // both in name order
    EXPECT_EQ(got.name, l.tensors[i].name);
    EXPECT_EQ(got.shape, l.tensors[i].shape) << got.name;
    EXPECT_EQ(got.dtype, l.tensors[i].dtype) << got.name;
  }
  if (l.metadata.is_object()) {
    ASSERT_EQ(f.metadata().size(), l.metadata.size());
    if (l.metadata.contains("config")) {
      EXPECT_EQ(parse_json(f.metadata().at("config"), "config"), l.metadata["config"]);
    }
    if (l.metadata.contains("model_version")) {
      EXPECT_EQ(f.metadata().at("model_version"), l.metadata["model_version"].get<std::string>());
    }
  }
}

uint64_t allocated_bytes(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TEST(SynthStandIn, ZerosLtx23Bf16IsThePublishedLayoutAtFullSize) {
  test::TempDir dir;
  const std::vector<std::string> paths = write("ltx-2.3-22b", "bf16", dir.path().string());
  ASSERT_EQ(paths, std::vector<std::string>{dir.file("ltx-2.3-22b-dev.safetensors")});
  const Layout l = published_layout("ltx-2.3-22b");
  const SafetensorsFile f = SafetensorsFile::open(paths[0]);
  expect_layout(f, l);
  EXPECT_GT(fs::file_size(paths[0]), 46'139'011'286ull);  // the data plus the header
  EXPECT_LT(allocated_bytes(paths[0]), 64ull << 20);      // sparse
  EXPECT_FALSE(fs::exists(paths[0] + ".partial"));
}

TEST(SynthStandIn, ZerosLtx23Fp8PairsEveryF8WeightWithItsScales) {
  test::TempDir dir;
  const std::vector<std::string> paths = write("ltx-2.3-22b", "fp8", dir.path().string());
  ASSERT_EQ(paths, std::vector<std::string>{dir.file("ltx-2.3-22b-dev-fp8.safetensors")});
  const SafetensorsFile f = SafetensorsFile::open(paths[0]);
  const Layout bf16 = published_layout("ltx-2.3-22b");
  expect_layout(f, fp8_layout(bf16));

  int64_t n_f8 = 0;
  for (const TensorSpec& t : bf16.tensors) {
    const TensorInfo& got = f.info(t.name);
    const std::string& n = t.name;
    const bool in_block = n.starts_with("model.diffusion_model.transformer_blocks.");
    const int64_t block = in_block ? std::stoll(n.substr(n.find("blocks.") + 7)) : -1;
    // Exactly the Linear weights of blocks 1-42 (fp8_scaled_mm.py excludes blocks 0 and 43-47).
    const bool expect_f8 = block >= 1 && block <= 42 && t.shape.rank() == 2 && n.ends_with(".weight");
    // Everything else as the bf16 file has it: BF16, the AdaLN tables F32.
    EXPECT_EQ(got.dtype, expect_f8 ? DType::F8_E4M3 : t.dtype) << n;
    if (n.find("scale_shift_table") != std::string::npos) EXPECT_EQ(got.dtype, DType::F32) << n;
    if (got.dtype != DType::F8_E4M3) continue;
    ++n_f8;
    const std::string layer = n.substr(0, n.size() - 7);
    for (const std::string scale : {".weight_scale", ".input_scale"}) {
      ASSERT_TRUE(f.contains(layer + scale)) << layer;
      EXPECT_EQ(f.info(layer + scale).dtype, DType::F32);
      EXPECT_EQ(f.info(layer + scale).shape.rank(), 0);
      EXPECT_EQ(f.get(layer + scale).to_floats().at(0), 1.0f);  // zeros mode: scale 1, never 0
    }
  }
  // 42 blocks × (6 attentions × 5 Linears + 2 feed-forwards × 2).
  EXPECT_EQ(n_f8, 42 * (6 * 5 + 2 * 2));
  EXPECT_EQ(f.tensors().size(), bf16.tensors.size() + 2 * static_cast<size_t>(n_f8));
}

TEST(SynthStandIn, ZerosDistilledLoraAndUpsampler) {
  test::TempDir dir;
  for (const auto& [model, file] :
       {std::pair<std::string, std::string>{"distilled-lora", "ltx-2.3-22b-distilled-lora-384-1.1.safetensors"},
        {"upsampler-x2", "ltx-2.3-spatial-upscaler-x2-1.0.safetensors"}}) {
    SCOPED_TRACE(model);
    const std::vector<std::string> paths = write(model, "bf16", dir.path().string());
    ASSERT_EQ(paths, std::vector<std::string>{dir.file(file)});
    expect_layout(SafetensorsFile::open(paths[0]), published_layout(model));
  }
}

TEST(SynthStandIn, LayersCutsTheFileAndItsConfig) {
  test::TempDir dir;
  const std::vector<std::string> paths = write("ltx-2-19b", "bf16", dir.path().string(), 2);
  const SafetensorsFile f = SafetensorsFile::open(paths.at(0));
  expect_layout(f, cut_layers(published_layout("ltx-2-19b"), 2));
  EXPECT_EQ(parse_json(f.metadata().at("config"), "config")["transformer"]["num_layers"], 2);
  EXPECT_FALSE(f.contains("model.diffusion_model.transformer_blocks.2.attn1.to_q.weight"));
  EXPECT_TRUE(f.contains("model.diffusion_model.transformer_blocks.1.attn1.to_q.weight"));
}

TEST(SynthStandIn, GemmaHfFolderHasShardsIndexAndConfig) {
  test::TempDir dir;
  std::vector<std::string> lines;
  SynthOptions o;
  o.model = "gemma-3-12b";
  o.format = "hf-bf16";
  o.out_dir = dir.path().string();
  o.zeros = true;
  const std::vector<std::string> paths = write_stand_in(o, [&](const std::string& s) { lines.push_back(s); });
  const fs::path folder = dir.path() / "gemma-3-12b-it";
  EXPECT_FALSE(fs::exists(dir.path() / "gemma-3-12b-it.partial"));
  const Layout l = published_layout("gemma-3-12b");
  EXPECT_EQ(parse_json(test::read_bytes((folder / "config.json").string()), "config.json"), l.config_json);
  const Json index = parse_json(test::read_bytes((folder / "model.safetensors.index.json").string()), "index");
  EXPECT_EQ(index["metadata"]["total_size"], 24'374'650'080ull);
  ASSERT_EQ(index["weight_map"].size(), l.tensors.size());
  size_t seen = 0;
  std::string previous;
  for (int i = 1; i <= 5; ++i) {
    const std::string shard = "model-0000" + std::to_string(i) + "-of-00005.safetensors";
    EXPECT_NE(std::find(paths.begin(), paths.end(), (folder / shard).string()), paths.end()) << shard;
    const SafetensorsFile f = SafetensorsFile::open((folder / shard).string());
    uint64_t bytes = 0;
    for (const TensorInfo& t : f.tensors()) {
      EXPECT_EQ(index["weight_map"][t.name], shard) << t.name;
      EXPECT_GT(t.name, previous);  // shards follow name order
      previous = t.name;
      bytes += t.end - t.begin;
    }
    EXPECT_LE(bytes, 5'000'000'000ull);
    EXPECT_EQ(f.metadata().at("format"), "pt");
    seen += f.tensors().size();
  }
  EXPECT_EQ(seen, l.tensors.size());
  EXPECT_FALSE(fs::exists(folder / "model-00006-of-00005.safetensors"));
  bool told = false;  // no --tokenizer: the folder has none, and a progress line says so
  for (const std::string& line : lines) told |= line.find("no --tokenizer given") != std::string::npos;
  EXPECT_TRUE(told);
}

TEST(SynthStandIn, BadRequestsThrowNamingTheValidValuesAndWriteNothing) {
  test::TempDir dir;
  const std::string out = (dir.path() / "out").string();
  test::expect_error([&] { write("gemma-3-12b", "fp8", out); },
                     {"format 'fp8' is not available for model 'gemma-3-12b'", "hf-bf16", "gguf-q4_k_m"});
  test::expect_error([&] { write("ltx-2.3-22b", "bf8", out); }, {"unknown format 'bf8'", "bf16", "fp8", "gguf-q8_0"});
  test::expect_error([&] { write("ltx-3", "bf16", out); }, {"unknown model 'ltx-3'", "ltx-2-19b", "upsampler-x2"});
  test::expect_error([&] { write("upsampler-x2", "bf16", out, 3); }, {"no transformer layers"});
  test::expect_error([&] { write("ltx-2.3-22b", "bf16", out, 49); }, {"outside [1, 48]"});
  SynthOptions o;
  o.model = "ltx-2.3-22b";
  o.format = "bf16";
  o.out_dir = out;
  o.tokenizer = dir.file("tokenizer.json");
  test::expect_error([&] { write_stand_in(o, {}); }, {"--tokenizer is for --format hf-bf16 only"});
  EXPECT_TRUE(fs::is_empty(dir.path()));

  // An output folder that cannot exist: below a regular file.
  test::write_bytes(dir.file("a_file"), "x");
  test::expect_error([&] { write("upsampler-x2", "bf16", dir.file("a_file") + "/sub"); }, {"cannot write into"});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

// A small layout written with seeded values, read back and compared with the generator, value by value.
Layout small_layout() {
  Layout l;
  l.name = "small";
  l.metadata = {{"config", {{"transformer", {{"num_layers", 2}}}}}};
  l.tensors = {
      {"model.diffusion_model.transformer_blocks.0.attn1.to_q.weight", Shape{96, 80}, DType::BF16},
      {"model.diffusion_model.transformer_blocks.1.attn1.to_q.bias", Shape{96}, DType::BF16},
      {"model.diffusion_model.transformer_blocks.1.attn1.to_q.weight", Shape{96, 80}, DType::BF16},
      {"model.diffusion_model.transformer_blocks.1.ff.net.0.proj.weight", Shape{1100, 1024}, DType::BF16},  // 2 chunks
      {"model.diffusion_model.transformer_blocks.1.attn1.q_norm.weight", Shape{80}, DType::BF16},
      {"vocoder.mel_stft.mel_basis", Shape{64, 257}, DType::F32},
  };
  std::sort(l.tensors.begin(), l.tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return l;
}

std::string write_small(const Layout& l, uint64_t seed, const std::string& path) {
  const ValueGenerator values(seed, false);
  const std::vector<StreamedTensor> tensors = stand_in_tensors(l, values);
  std::map<std::string, std::string> metadata = {{"config", l.metadata["config"].dump()}};
  const uint64_t size = write_safetensors_stream(path, tensors, metadata, {});
  EXPECT_EQ(size, safetensors_stream_size(tensors, metadata));
  EXPECT_EQ(size, fs::file_size(path));
  return test::read_bytes(path);
}

TEST(SynthStandIn, SeededValuesAreTheGeneratorsRoundedToTheDtype) {
  test::TempDir dir;
  const Layout l = small_layout();
  const std::string bytes = write_small(l, 42, dir.file("a.safetensors"));
  EXPECT_EQ(write_small(l, 42, dir.file("b.safetensors")), bytes);
  EXPECT_NE(write_small(l, 43, dir.file("c.safetensors")), bytes);

  const SafetensorsFile f = SafetensorsFile::open(dir.file("a.safetensors"));
  expect_layout(f, l);
  const ValueGenerator values(42, false);
  for (const TensorSpec& t : l.tensors) {
    SCOPED_TRACE(t.name);
    std::vector<float> expected(static_cast<size_t>(t.shape.numel()));
    values.fill(t, 0, t.shape.numel(), expected.data());
    const std::vector<float> got = f.get(t.name).to_floats();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const float want = t.dtype == DType::BF16 ? bf16_to_f32(f32_to_bf16(expected[i])) : expected[i];
      ASSERT_EQ(got[i], want) << i;
    }
  }
}

TEST(SynthStandIn, Fp8WeightsDequantizeToTheBf16Weights) {
  test::TempDir dir;
  const Layout l = fp8_layout(small_layout());
  write_small(l, 7, dir.file("fp8.safetensors"));
  const SafetensorsFile f = SafetensorsFile::open(dir.file("fp8.safetensors"));
  expect_layout(f, l);
  // Block 0 is excluded from fp8 (fp8_scaled_mm.py); block 1's Linear weights are F8, its bias and norm are not.
  EXPECT_EQ(f.info("model.diffusion_model.transformer_blocks.0.attn1.to_q.weight").dtype, DType::BF16);
  EXPECT_EQ(f.info("model.diffusion_model.transformer_blocks.1.attn1.to_q.bias").dtype, DType::BF16);
  EXPECT_FALSE(f.contains("model.diffusion_model.transformer_blocks.0.attn1.to_q.weight_scale"));

  const ValueGenerator values(7, false);
  for (const std::string layer : {"model.diffusion_model.transformer_blocks.1.attn1.to_q",
                                  "model.diffusion_model.transformer_blocks.1.ff.net.0.proj"}) {
    SCOPED_TRACE(layer);
    const TensorInfo& info = f.info(layer + ".weight");
    ASSERT_EQ(info.dtype, DType::F8_E4M3);
    const TensorSpec bf16{layer + ".weight", info.shape, DType::BF16};
    const float scale = f.get(layer + ".weight_scale").to_floats().at(0);
    EXPECT_FLOAT_EQ(scale * 448.0f, value_rule(bf16).max_abs());  // scale = max|w| / 448
    EXPECT_EQ(f.get(layer + ".input_scale").to_floats().at(0), 1.0f);
    std::vector<float> w(static_cast<size_t>(info.shape.numel()));
    values.fill(bf16, 0, info.shape.numel(), w.data());
    const Tensor q = f.get(layer + ".weight");
    const auto* bytes = reinterpret_cast<const uint8_t*>(q.raw());
    int top = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const float wb = bf16_to_f32(f32_to_bf16(w[i]));
      // e4m3 keeps 3 mantissa bits: half an ulp is 2^-4 of the value; subnormals are steps of 2^-9 · scale.
      const float err = std::fabs(f8_e4m3_to_f32(bytes[i]) * scale - wb);
      ASSERT_LE(err, std::max(std::fabs(wb) / 16.0f, std::ldexp(scale, -10)) * 1.0001f) << i;
      top += (bytes[i] & 0x7F) >= 0x7D;  // the top of the range (416, 448) is used
    }
    EXPECT_GT(top, 0);
  }
}

}  // namespace
}  // namespace ltx::synth
