// The GGUF stand-in writer: every metadata type and tensor type read back through io/gguf.h, sparse zero tensors,
// chunked streaming, and the LTX transformer / Gemma 3 formats read back through the engine's own loaders
// (open_gguf, open_dit_checkpoint + Dit::load, open_gguf_as_hf + Weights::load, Tokenizer::from_gguf).
#include "synth/gguf_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/half.h"
#include "core/quant.h"
#include "io/gguf.h"
#include "io/json.h"
#include "io/test_files.h"
#include "models/gemma3/config.h"
#include "models/gemma3/tokenizer.h"
#include "models/gemma3/weights.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/dit/dit_checkpoint.h"
#include "nn/weight_source.h"
#include "synth/gguf_formats.h"

namespace ltx::synth {
namespace {

using test::TempDir;

// A deterministic value in [-1, 1] per (tensor, element), standing in for ValueGenerator.
float test_value(const std::string& name, int64_t i) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  h ^= static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
  h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ULL, h ^= h >> 32;
  return static_cast<float>(static_cast<int64_t>(h % 20001) - 10000) / 10000.0f;
}

ValueSource test_values() {
  return {[](const TensorSpec& t, int64_t first, int64_t count, float* out) {
            for (int64_t i = 0; i < count; ++i) out[i] = test_value(t.name, first + i);
          },
          false};
}

// What the GGUF must hold before its own type's rounding: the value in the layout's bf16, plus the shift.
std::vector<float> expected(const std::string& name, int64_t n, float shift = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = bf16_to_f32(f32_to_bf16(test_value(name, i))) + shift;
  return v;
}

// max |x| (or the range max(x, 0) - min(x, 0)) over the group of `len` elements holding element i.
float group_stat(const std::vector<float>& x, size_t i, size_t len, bool range) {
  float lo = 0.0f, hi = 0.0f, amax = 0.0f;
  for (size_t k = i / len * len; k < i / len * len + len; ++k)
    lo = std::min(lo, x[k]), hi = std::max(hi, x[k]), amax = std::max(amax, std::fabs(x[k]));
  return range ? hi - lo : amax;
}

// Checks decoded values against what was stored: exact for f32 / bf16 / f16 (after that type's rounding), within
// the quantizer's step bounds (tests/core/quant_test.cpp) for the block types.
void expect_decoded(DType t, const std::vector<float>& want, const std::vector<float>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  if (!dtype_is_quantized(t)) {
    for (size_t i = 0; i < want.size(); ++i) {
      const float w = t == DType::F16    ? f16_to_f32(f32_to_f16(want[i]))
                      : t == DType::BF16 ? bf16_to_f32(f32_to_bf16(want[i]))
                                         : want[i];
      ASSERT_EQ(got[i], w) << what << " (" << dtype_name(t) << ") element " << i;
    }
    return;
  }
  size_t len = 32;
  float levels = 127.0f, factor = 0.6f;
  bool range = false;
  if (t == DType::Q5_0) levels = 16.0f, factor = 1.05f;
  if (t == DType::Q4_K) levels = 15.0f, factor = 0.75f, range = true;
  if (t == DType::Q6_K) len = 16, levels = 31.0f, factor = 0.75f;
  float worst = 0.0f;
  for (size_t i = 0; i < want.size(); ++i) {
    const float step = group_stat(want, i, len, range) / levels;
    if (step == 0.0f)
      ASSERT_EQ(got[i], 0.0f) << what << " element " << i;
    else
      worst = std::max(worst, std::fabs(got[i] - want[i]) / step);
  }
  EXPECT_LE(worst, factor) << what << " (" << dtype_name(t) << "): worst error in quantization steps";
}

uint64_t disk_bytes(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

TensorSpec spec(std::string name, Shape shape) { return TensorSpec{std::move(name), shape, DType::BF16}; }

// ---- the writer ------------------------------------------------------------------------------------------

TEST(GGUFWriter, EveryMetadataTypeAndTensorTypeReadsBack) {
  TempDir dir;
  const std::string path = dir.file("all.gguf");
  GGUFWriter w(64);
  w.add_u32("k.u32", 4000000000u);
  w.add_i32("k.i32", -7);
  w.add_f32("k.f32", 1.5f);
  w.add_bool("k.bool", true);
  w.add_string("k.string", "héllo");
  w.add_strings("k.strings", {"<pad>", "", "▁a b"});
  w.add_i32s("k.i32s", {3, -2, 1});
  w.add_f32s("k.f32s", {0.5f, -1.0f});
  w.add("k.u64", GGUFValue(GGUFValue::Variant(uint64_t{1} << 40)));
  w.add("k.f64", GGUFValue(GGUFValue::Variant(0.25)));
  w.add("k.u8s", GGUFValue(GGUFArray{std::vector<uint8_t>{1, 2, 255}}));
  w.add("k.bools", GGUFValue(GGUFArray{std::vector<bool>{true, false}}));
  const std::vector<std::pair<DType, Shape>> kinds = {
      {DType::F32, {3, 5}},      {DType::F16, {7}},       {DType::BF16, {2, 3, 4}}, {DType::Q8_0, {3, 64}},
      {DType::Q5_0, {2, 2, 96}}, {DType::Q4_K, {3, 512}}, {DType::Q6_K, {2, 256}}};
  for (const auto& [t, shape] : kinds) {
    const std::string name = "t." + std::string(dtype_name(t));
    w.add_tensor(name, shape, t, [name](int64_t first, int64_t count, float* out) {
      for (int64_t i = 0; i < count; ++i) out[i] = test_value(name, first + i);
    });
  }
  std::vector<std::string> lines;
  const uint64_t size = w.write(path, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(size, std::filesystem::file_size(path));
  EXPECT_EQ(size, w.file_bytes());
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_NE(lines.back().find("done"), std::string::npos);

  const GGUFFile f = GGUFFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.value("general.alignment").as_int(), 64);
  EXPECT_EQ(f.value("k.u32").as_int(), 4000000000);
  EXPECT_EQ(f.value("k.u32").type(), GGUFType::U32);
  EXPECT_EQ(f.value("k.i32").as_int(), -7);
  EXPECT_EQ(f.value("k.f32").as_float(), 1.5);
  EXPECT_EQ(f.value("k.f32").type(), GGUFType::F32);
  EXPECT_TRUE(f.value("k.bool").as_bool());
  EXPECT_EQ(f.value("k.string").as_string(), "héllo");
  EXPECT_EQ(std::get<std::vector<std::string_view>>(f.value("k.strings").as_array().values),
            (std::vector<std::string_view>{"<pad>", "", "▁a b"}));
  EXPECT_EQ(std::get<std::vector<int32_t>>(f.value("k.i32s").as_array().values), (std::vector<int32_t>{3, -2, 1}));
  EXPECT_EQ(std::get<std::vector<float>>(f.value("k.f32s").as_array().values), (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(f.value("k.u64").as_int(), int64_t{1} << 40);
  EXPECT_EQ(f.value("k.f64").as_float(), 0.25);
  EXPECT_EQ(std::get<std::vector<uint8_t>>(f.value("k.u8s").as_array().values), (std::vector<uint8_t>{1, 2, 255}));
  EXPECT_EQ(std::get<std::vector<bool>>(f.value("k.bools").as_array().values), (std::vector<bool>{true, false}));

  ASSERT_EQ(f.tensors().size(), kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    const auto& [t, shape] = kinds[k];
    const GGUFTensorInfo& info = f.tensors()[k];
    EXPECT_EQ(info.name, "t." + std::string(dtype_name(t)));
    EXPECT_EQ(info.shape, shape) << info.name;
    EXPECT_EQ(info.dtype, t) << info.name;
    EXPECT_EQ(info.ggml_type, *ggml_type_of(t)) << info.name;
    EXPECT_EQ(info.offset % 64, 0u) << info.name;
    std::vector<float> want(static_cast<size_t>(shape.numel()));
    for (size_t i = 0; i < want.size(); ++i) want[i] = test_value(info.name, static_cast<int64_t>(i));
    expect_decoded(t, want, f.get(info.name).to_floats(), info.name);
  }
}

TEST(GGUFWriter, ZeroTensorsAreHolesThatDecodeToZero) {
  // Zero bytes are 0.0 in every type: the plain types trivially, the block types because their scales are 0.
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q5_0, DType::Q4_K, DType::Q6_K}) {
    std::vector<uint8_t> zero(dtype_bytes_for(t, 512), 0);
    std::vector<float> out(512, 1.0f);
    dequantize_row(t, zero.data(), out.data(), 512);
    for (float v : out) ASSERT_EQ(v, 0.0f) << dtype_name(t);  // Q6_K and Q5_0 give -0.0: (q - offset) * 0
  }
  TempDir dir;
  const std::string path = dir.file("zeros.gguf");
  GGUFWriter w;
  w.add_tensor("big", {4096, 4096}, DType::Q4_K);  // 9.4 MB of zeros
  w.add_tensor("small", {1, 256}, DType::Q6_K,
               [](int64_t, int64_t count, float* out) { std::fill(out, out + count, 0.5f); });
  w.add_tensor("vec", {64}, DType::F32);
  const uint64_t size = w.write(path);
  EXPECT_GT(size, uint64_t{9'000'000});
  EXPECT_LT(disk_bytes(path), uint64_t{1} << 20) << "the zero tensor should be a hole";
  const GGUFFile f = GGUFFile::open(path);
  const auto big = f.get("big").to_floats();
  EXPECT_TRUE(std::all_of(big.begin(), big.end(), [](float v) { return v == 0.0f; }));
  for (float v : f.get("small").to_floats()) EXPECT_NEAR(v, 0.5f, 0.5f / 64) << "within Q6_K's step";
  EXPECT_EQ(f.get("vec").to_floats(), std::vector<float>(64, 0.0f));
}

TEST(GGUFWriter, StreamsTensorsLargerThanAChunk) {
  TempDir dir;
  const std::string path = dir.file("big.gguf");
  const Shape shape{5, 2000000};  // 10M elements: more than one kChunkElems chunk, boundaries inside rows
  ASSERT_GT(shape.numel(), GGUFWriter::kChunkElems);
  GGUFWriter w;
  w.add_tensor("x", shape, DType::Q8_0, [](int64_t first, int64_t count, float* out) {
    for (int64_t i = 0; i < count; ++i) out[i] = test_value("x", first + i);
  });
  w.write(path);
  std::vector<float> want(static_cast<size_t>(shape.numel()));
  for (size_t i = 0; i < want.size(); ++i) want[i] = test_value("x", static_cast<int64_t>(i));
  expect_decoded(DType::Q8_0, want, GGUFFile::open(path).get("x").to_floats(), "x");
}

TEST(GGUFWriter, RejectsBadInputAndLeavesNoFileOnFailure) {
  GGUFWriter w;
  w.add_u32("a", 1);
  EXPECT_THROW(w.add_u32("a", 2), Error);
  w.add_tensor("t", {2, 32}, DType::Q8_0);
  EXPECT_THROW(w.add_tensor("t", {2, 32}, DType::Q8_0), Error);
  EXPECT_THROW(w.add_tensor("rows", {2, 48}, DType::Q8_0), Error);  // 48 is not whole 32-blocks
  EXPECT_THROW(w.add_tensor("rank5", {1, 1, 1, 1, 32}, DType::F32), Error);
  EXPECT_THROW(w.add_tensor("fp8", {32}, DType::F8_E4M3), Error);
  EXPECT_THROW(GGUFWriter(24), Error);

  TempDir dir;
  const std::string path = dir.file("fails.gguf");
  GGUFWriter bad;
  bad.add_tensor("t", {4, 32}, DType::Q8_0, [](int64_t, int64_t, float*) { throw Error("test", "no values"); });
  EXPECT_THROW(bad.write(path), Error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

// ---- LTX transformer ---------------------------------------------------------------------------------------

Layout small_ltx_layout() {
  Layout l;
  l.name = "ltx-small";
  l.metadata = {{"config", {{"transformer", {{"num_layers", 1}}}}}};
  const std::string p = "model.diffusion_model.";
  const std::string b = p + "transformer_blocks.0.";
  l.tensors = {
      spec(p + "adaln_single.linear.weight", {1536, 256}),
      spec(p + "audio_adaln_single.linear.weight", {512, 256}),
      spec(p + "audio_embeddings_connector.transformer_1d_blocks.0.attn1.to_q.weight", {256, 256}),
      spec(p + "patchify_proj.bias", {256}),
      spec(p + "patchify_proj.weight", {256, 128}),
      spec(p + "proj_out.weight", {128, 256}),
      spec(p + "scale_shift_table", {6, 256}),
      spec(b + "attn1.q_norm.weight", {256}),
      spec(b + "attn1.to_gate_logits.weight", {8, 96}),
      spec(b + "attn1.to_q.weight", {256, 256}),
      spec(b + "attn1.to_v.bias", {256}),
      spec(b + "attn1.to_v.weight", {256, 256}),
      spec(b + "audio_ff.net.2.weight", {128, 512}),
      spec(b + "ff.net.0.proj.weight", {1024, 256}),
      spec(b + "ff.net.2.weight", {256, 1024}),
      spec(p + "video_embeddings_connector.learnable_registers", {128, 256}),
      spec("text_embedding_projection.video_aggregate_embed.weight", {256, 512}),
      spec("vae.decoder.conv_in.conv.weight", {4, 4, 3, 3, 3}),
  };
  return l;
}

TEST(GGUFStandIn, LtxTransformerTypesNamesAndValues) {
  const Layout layout = small_ltx_layout();
  const std::string b = "transformer_blocks.0.";
  // name -> {Q8_0, Q4_K, Q4_K_M}: convert.py keeps 1-D, <= 1024-element and scale_shift_table tensors F32, the
  // rest BF16; lcpp.patch quantizes 2-D "*weight" matrices except adaln_single / patchify_proj / proj_out, with
  // Q6_K for to_v and ff.net.2 in Q4_K_M and F16 when a K-quant does not divide the row.
  const std::map<std::string, std::array<DType, 3>> want = {
      {"adaln_single.linear.weight", {DType::BF16, DType::BF16, DType::BF16}},
      {"audio_adaln_single.linear.weight", {DType::BF16, DType::BF16, DType::BF16}},
      {"audio_embeddings_connector.transformer_1d_blocks.0.attn1.to_q.weight", {DType::Q8_0, DType::Q4_K, DType::Q4_K}},
      {"patchify_proj.bias", {DType::F32, DType::F32, DType::F32}},
      {"patchify_proj.weight", {DType::BF16, DType::BF16, DType::BF16}},
      {"proj_out.weight", {DType::BF16, DType::BF16, DType::BF16}},
      {"scale_shift_table", {DType::F32, DType::F32, DType::F32}},
      {b + "attn1.q_norm.weight", {DType::F32, DType::F32, DType::F32}},
      {b + "attn1.to_gate_logits.weight", {DType::Q8_0, DType::F16, DType::F16}},
      {b + "attn1.to_q.weight", {DType::Q8_0, DType::Q4_K, DType::Q4_K}},
      {b + "attn1.to_v.bias", {DType::F32, DType::F32, DType::F32}},
      {b + "attn1.to_v.weight", {DType::Q8_0, DType::Q4_K, DType::Q6_K}},
      {b + "audio_ff.net.2.weight", {DType::Q8_0, DType::Q4_K, DType::Q4_K}},
      {b + "ff.net.0.proj.weight", {DType::Q8_0, DType::Q4_K, DType::Q4_K}},
      {b + "ff.net.2.weight", {DType::Q8_0, DType::Q4_K, DType::Q6_K}},
      {"video_embeddings_connector.learnable_registers", {DType::BF16, DType::BF16, DType::BF16}},
  };
  TempDir dir;
  const LtxGgufQuant quants[] = {LtxGgufQuant::Q8_0, LtxGgufQuant::Q4_K, LtxGgufQuant::Q4_K_M};
  for (int q = 0; q < 3; ++q) {
    const std::string path = dir.file("ltx" + std::to_string(q) + ".gguf");
    write_ltx_transformer_gguf(layout, quants[q], test_values(), path, {}, /*with_config=*/q != 1);
    const auto source = open_gguf(path);
    std::vector<std::string> names;
    for (const auto& [name, types] : want) names.push_back(name);
    ASSERT_EQ(source->names(), names) << "quant " << q;
    for (const auto& [name, types] : want) {
      const TensorSpec* s = nullptr;
      for (const TensorSpec& t : layout.tensors)
        if (t.name == "model.diffusion_model." + name) s = &t;
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(source->shape(name), s->shape) << name;
      EXPECT_EQ(source->dtype(name), types[static_cast<size_t>(q)]) << name << " quant " << q;
      expect_decoded(source->dtype(name), expected(s->name, s->shape.numel()), source->get(name).to_floats(), name);
    }
    const GGUFFile f = GGUFFile::open(path);
    EXPECT_EQ(f.value("general.architecture").as_string(), "ltxv");
    EXPECT_EQ(f.value("general.quantization_version").as_int(), 2);
    if (q == 1) {
      EXPECT_EQ(f.find("config"), nullptr);
    } else {
      EXPECT_EQ(parse_json(f.value("config").as_string(), "config"), layout.metadata.at("config"));
      EXPECT_EQ(metadata_json(*source, "config"), layout.metadata.at("config"));
    }
  }
  EXPECT_EQ(gguf_formats_for(layout), (std::vector<std::string>{"gguf-q8_0", "gguf-q4_k", "gguf-q4_k_m"}));
}

// The public entry with the real ValueGenerator: the GGUF holds its values (rounded to the layout's bf16).
TEST(GGUFStandIn, HoldsTheValueGeneratorsValues) {
  const Layout layout = small_ltx_layout();
  const ValueGenerator values(42, false);
  TempDir dir;
  const std::string path = dir.file("ltx.gguf");
  write_gguf_stand_in(layout, "gguf-q4_k_m", values, path, {});
  const auto source = open_gguf(path);
  ASSERT_EQ(source->names().size(), 16u);
  for (const std::string& name : source->names()) {
    const TensorSpec* s = nullptr;
    for (const TensorSpec& t : layout.tensors)
      if (t.name == "model.diffusion_model." + name) s = &t;
    ASSERT_NE(s, nullptr) << name;
    std::vector<float> want(static_cast<size_t>(s->shape.numel()));
    values.fill(*s, 0, s->shape.numel(), want.data());
    for (float& v : want) v = bf16_to_f32(f32_to_bf16(v));
    expect_decoded(source->dtype(name), want, source->get(name).to_floats(), name);
  }
  test::expect_error([&] { write_gguf_stand_in(layout, "gguf-q2_k", values, dir.file("x.gguf"), {}); },
                     {"gguf-q2_k", "gguf-q8_0, gguf-q4_k, gguf-q4_k_m"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.gguf")));
}

// ---- Gemma 3 -----------------------------------------------------------------------------------------------

// A tokenizer GGUF of 16 pieces, with a key that is not the tokenizer's (it must not be copied).
std::string write_tiny_tokenizer(const TempDir& dir) {
  const std::string path = dir.file("tokenizer.gguf");
  GGUFWriter w;
  w.add_string("general.name", "tiny tokenizer");
  w.add_string("tokenizer.ggml.model", "llama");
  std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "[multimodal]"};
  for (const char* piece : {"▁a", "a", "b", "▁b", "ab", "▁", "c", "▁c", "x", "y"}) tokens.emplace_back(piece);
  std::vector<float> scores(tokens.size(), -1000.0f);
  std::vector<int32_t> types(tokens.size(), 1);
  for (int i = 0; i < 5; ++i) types[static_cast<size_t>(i)] = 3;
  types[5] = 4;
  w.add_strings("tokenizer.ggml.tokens", tokens);
  w.add_f32s("tokenizer.ggml.scores", scores);
  w.add_i32s("tokenizer.ggml.token_type", types);
  w.add_u32("tokenizer.ggml.bos_token_id", 2);
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_bool("tokenizer.ggml.add_space_prefix", false);
  w.write(path);
  return path;
}

// Gemma 3 under Gemma3ForConditionalGeneration names: `n_layers` layers, hidden 256, 2 heads / 1 kv of 128, an
// FFN of 320 (not whole 256-blocks: llama-quantize's fallbacks), more embedding rows than tokens.
Layout small_gemma_layout(int n_layers, int64_t vocab_size, int64_t embed_rows, int64_t image_token) {
  Layout l;
  l.name = "gemma-small";
  l.config_json = {{"image_token_index", image_token},
                   {"text_config",
                    {{"hidden_size", 256},
                     {"intermediate_size", 320},
                     {"num_hidden_layers", n_layers},
                     {"num_attention_heads", 2},
                     {"num_key_value_heads", 1},
                     {"head_dim", 128},
                     {"rms_norm_eps", 1e-6},
                     {"rope_theta", 1000000},
                     {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                     {"sliding_window", 64},
                     {"max_position_embeddings", 4096},
                     {"vocab_size", vocab_size}}}};
  const std::string m = "language_model.model.";
  l.tensors = {spec(m + "embed_tokens.weight", {embed_rows, 256}), spec(m + "norm.weight", {256})};
  for (int i = 0; i < n_layers; ++i) {
    const std::string p = m + "layers." + std::to_string(i) + ".";
    for (const char* norm :
         {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"})
      l.tensors.push_back(spec(p + norm + ".weight", {256}));
    l.tensors.push_back(spec(p + "self_attn.q_proj.weight", {256, 256}));
    l.tensors.push_back(spec(p + "self_attn.k_proj.weight", {128, 256}));
    l.tensors.push_back(spec(p + "self_attn.v_proj.weight", {128, 256}));
    l.tensors.push_back(spec(p + "self_attn.o_proj.weight", {256, 256}));
    l.tensors.push_back(spec(p + "self_attn.q_norm.weight", {128}));
    l.tensors.push_back(spec(p + "self_attn.k_norm.weight", {128}));
    l.tensors.push_back(spec(p + "mlp.gate_proj.weight", {320, 256}));
    l.tensors.push_back(spec(p + "mlp.up_proj.weight", {320, 256}));
    l.tensors.push_back(spec(p + "mlp.down_proj.weight", {256, 320}));
  }
  l.tensors.push_back(spec("multi_modal_projector.mm_input_projection_weight", {64, 256}));
  l.tensors.push_back(spec("vision_tower.vision_model.encoder.layers.0.layer_norm1.weight", {64}));
  return l;
}

TEST(GGUFStandIn, GemmaQ4KMTypesNamesValuesAndMetadata) {
  TempDir dir;
  const std::string tokenizer = write_tiny_tokenizer(dir);
  const Layout layout = small_gemma_layout(3, 20, 24, 17);
  const std::string path = dir.file("gemma.gguf");
  write_gemma_gguf(layout, test_values(), path, {}, tokenizer);

  // Q4_K_M for 3 layers: use_more_bits(i, 3) holds for layer 2 only; rows of 320 fall back (Q4_K -> Q5_0,
  // Q6_K -> Q8_0); the tied embedding is Q6_K.
  const auto hf = gemma3::open_gguf_as_hf(path);
  const auto type_of = [&](const std::string& name) { return hf->dtype(name); };
  EXPECT_EQ(type_of("model.embed_tokens.weight"), DType::Q6_K);
  EXPECT_EQ(hf->shape("model.embed_tokens.weight"), (Shape{20, 256}));  // trimmed to the 20 tokens
  for (int i = 0; i < 3; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    EXPECT_EQ(type_of(p + "self_attn.q_proj.weight"), DType::Q4_K);
    EXPECT_EQ(type_of(p + "self_attn.k_proj.weight"), DType::Q4_K);
    EXPECT_EQ(type_of(p + "self_attn.o_proj.weight"), DType::Q4_K);
    EXPECT_EQ(type_of(p + "self_attn.v_proj.weight"), i == 2 ? DType::Q6_K : DType::Q4_K) << i;
    EXPECT_EQ(type_of(p + "mlp.gate_proj.weight"), DType::Q4_K);
    EXPECT_EQ(type_of(p + "mlp.up_proj.weight"), DType::Q4_K);
    EXPECT_EQ(type_of(p + "mlp.down_proj.weight"), i == 2 ? DType::Q8_0 : DType::Q5_0) << i;
    EXPECT_EQ(type_of(p + "input_layernorm.weight"), DType::F32);
  }
  size_t n_text = 0;
  for (const TensorSpec& t : layout.tensors) {
    if (t.name.rfind("language_model.", 0) != 0) continue;
    ++n_text;
    const std::string name = t.name.substr(15);
    ASSERT_TRUE(hf->contains(name)) << name;
    const Shape shape = hf->shape(name);
    if (name != "model.embed_tokens.weight") {
      EXPECT_EQ(shape, t.shape) << name;
    }
    const bool norm = name.size() >= 11 && name.substr(name.size() - 11) == "norm.weight";
    expect_decoded(hf->dtype(name), expected(t.name, shape.numel(), norm ? 1.0f : 0.0f), hf->get(name).to_floats(),
                   name);
  }
  EXPECT_EQ(hf->names().size(), n_text) << "no vision tower or projector in the text GGUF";

  const GGUFFile f = GGUFFile::open(path);
  EXPECT_EQ(f.value("general.architecture").as_string(), "gemma3");
  EXPECT_EQ(f.value("general.name").as_string(), "gemma-small");  // the tokenizer file's own is not copied
  EXPECT_EQ(f.value("general.file_type").as_int(), 15);
  EXPECT_EQ(f.value("gemma3.block_count").as_int(), 3);
  EXPECT_EQ(f.value("gemma3.context_length").as_int(), 4096);
  EXPECT_EQ(f.value("gemma3.attention.key_length").as_int(), 128);
  EXPECT_EQ(f.value("gemma3.attention.sliding_window").as_int(), 64);
  EXPECT_EQ(f.value("gemma3.rope.scaling.type").as_string(), "linear");
  EXPECT_EQ(f.value("gemma3.rope.scaling.factor").as_float(), 8.0);
  const auto& tokens = std::get<std::vector<std::string_view>>(f.value("tokenizer.ggml.tokens").as_array().values);
  ASSERT_EQ(tokens.size(), 20u);
  EXPECT_EQ(tokens[15], "y");
  EXPECT_EQ(tokens[16], "[PAD16]");
  EXPECT_EQ(tokens[17], "<image_soft_token>");
  EXPECT_EQ(tokens[19], "[PAD19]");
  const auto& types = std::get<std::vector<int32_t>>(f.value("tokenizer.ggml.token_type").as_array().values);
  EXPECT_EQ(types[5], 4);
  EXPECT_EQ(types[17], 3);
  EXPECT_EQ(types[18], 5);
  const auto& scores = std::get<std::vector<float>>(f.value("tokenizer.ggml.scores").as_array().values);
  EXPECT_EQ(scores[17], -1000.0f);
  EXPECT_EQ(scores[19], -10000.0f);
  EXPECT_EQ(f.value("tokenizer.ggml.bos_token_id").as_int(), 2);

  // The engine configures and loads it.
  const gemma3::Config c = gemma3::Config::from_gguf(f);
  EXPECT_EQ(c.vocab_size, 20);
  EXPECT_EQ(c.n_layers, 3);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rope_linear_factor, 8.0);
  EXPECT_NO_THROW(gemma3::Weights::load(c, hf, "model.", DType::F32));
  EXPECT_EQ(gguf_formats_for(layout), (std::vector<std::string>{"gguf-q4_k_m"}));
}

// The type rules against llama-quantize's own output: the real Gemma 3 270M Q4_K_M file.
TEST(GGUFStandIn, GemmaTypeRulesMatchTheReal270mFile) {
  const std::string real = default_tokenizer_gguf();
  if (real.empty()) GTEST_SKIP() << "the Gemma 3 270M GGUF is absent (scripts/setup, or set LTX_GEMMA_GGUF)";
  Layout l;  // gemma-3-270m: hidden 640, 18 layers, 4 heads / 1 kv of 256, FFN 2048, 262144 tokens
  const std::string m = "model.";
  l.tensors = {spec(m + "embed_tokens.weight", {262144, 640}), spec(m + "norm.weight", {640})};
  for (int i = 0; i < 18; ++i) {
    const std::string p = m + "layers." + std::to_string(i) + ".";
    for (const char* n :
         {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"})
      l.tensors.push_back(spec(p + n + ".weight", {640}));
    for (const auto& [n, s] : std::vector<std::pair<std::string, Shape>>{{"self_attn.q_proj", {1024, 640}},
                                                                         {"self_attn.k_proj", {256, 640}},
                                                                         {"self_attn.v_proj", {256, 640}},
                                                                         {"self_attn.o_proj", {640, 1024}},
                                                                         {"self_attn.q_norm", {256}},
                                                                         {"self_attn.k_norm", {256}},
                                                                         {"mlp.gate_proj", {2048, 640}},
                                                                         {"mlp.up_proj", {2048, 640}},
                                                                         {"mlp.down_proj", {640, 2048}}})
      l.tensors.push_back(spec(p + n + ".weight", s));
  }
  const GGUFFile f = GGUFFile::open(real);
  const std::vector<GGUFTensorPlan> plan = plan_gemma_gguf(l, 262144);
  ASSERT_EQ(plan.size(), f.tensors().size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const GGUFTensorInfo& info = f.tensors()[i];  // also the same order
    EXPECT_EQ(plan[i].name, info.name) << i;
    EXPECT_EQ(plan[i].shape, info.shape) << info.name;
    EXPECT_EQ(plan[i].dtype, info.dtype) << info.name;
  }
}

// The real tokenizer copied verbatim, padded to the 12B's 262208 entries, tokenizes as the 270M file does.
TEST(GGUFStandIn, GemmaCopiesTheReal270mTokenizer) {
  const std::string real = default_tokenizer_gguf();
  if (real.empty()) GTEST_SKIP() << "the Gemma 3 270M GGUF is absent (scripts/setup, or set LTX_GEMMA_GGUF)";
  TempDir dir;
  const std::string path = dir.file("gemma.gguf");
  write_gemma_gguf(small_gemma_layout(1, 262208, 24, 262144), ValueSource{{}, true}, path, {}, real);
  const GGUFFile ours = GGUFFile::open(path);
  const GGUFFile theirs = GGUFFile::open(real);
  for (const auto& [key, value] : theirs.metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    ASSERT_NE(ours.find(key), nullptr) << key;
    if (value.type() != GGUFType::Array) {
      EXPECT_EQ(ours.value(key).str(), value.str()) << key;
    }
  }
  const auto& t0 = std::get<std::vector<std::string_view>>(theirs.value("tokenizer.ggml.tokens").as_array().values);
  const auto& t1 = std::get<std::vector<std::string_view>>(ours.value("tokenizer.ggml.tokens").as_array().values);
  ASSERT_EQ(t0.size(), 262144u);
  ASSERT_EQ(t1.size(), 262208u);
  EXPECT_TRUE(std::equal(t0.begin(), t0.end(), t1.begin()));
  EXPECT_EQ(t1[262144], "<image_soft_token>");
  EXPECT_EQ(t1[262145], "[PAD262145]");
  EXPECT_EQ(t1[262207], "[PAD262207]");
  const auto a = gemma3::Tokenizer::from_gguf(theirs), b = gemma3::Tokenizer::from_gguf(ours);
  for (const char* text : {"a red fox running through a snowy forest at dawn", "<start_of_turn>user\nHi",
                           "日本語 and émoji 🎬", "   spaced\ttabs  "})
    EXPECT_EQ(a.encode(text), b.encode(text)) << text;
}

// ---- the published layouts at full size, in zeros mode (sparse files) --------------------------------------

TEST(GGUFStandIn, FullSizeLtx23Q4KLoadsThroughTheDitCheckpoint) {
  const Layout layout = published_layout("ltx-2.3-22b");
  TempDir dir;
  const std::string path = dir.file("ltx-2.3-22b-q4_k.gguf");
  const uint64_t size = write_gguf_stand_in(layout, "gguf-q4_k", ValueGenerator(0, true), path, {});
  EXPECT_GT(size, uint64_t{10'000'000'000});  // ~19B transformer parameters at ~4.5 bits
  EXPECT_LT(disk_bytes(path), uint64_t{64} << 20) << "zeros mode should leave the data as holes";

  const ltxm::DitCheckpoint c = ltxm::open_dit_checkpoint(path);
  EXPECT_EQ(c.layout, ltxm::DitLayout::Gguf);
  EXPECT_EQ(c.root, "");
  std::map<std::string, Shape> want;
  for (const TensorSpec& t : layout.tensors)  // the transformer and its text connectors
    if (t.name.rfind("model.diffusion_model.", 0) == 0) want.emplace(t.name, t.shape);
  std::map<std::string, Shape> got;
  for (const std::string& name : c.weights->names())
    got.emplace("model.diffusion_model." + name, c.weights->shape(name));
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "names or shapes differ from the layout's transformer tensors";
  EXPECT_EQ(c.weights->dtype("transformer_blocks.0.attn1.to_q.weight"), DType::Q4_K);
  EXPECT_EQ(c.config.n_layers, 48);
  EXPECT_NO_THROW(ltxm::Dit::load(c.loader(), c.config, DType::BF16, cpu_backend()));

  // Without the config entry, as community files come, the engine asks for --dit-config.
  const std::string bare = dir.file("bare.gguf");
  write_ltx_transformer_gguf(layout, LtxGgufQuant::Q8_0, ValueSource{{}, true}, bare, {}, false);
  test::expect_error([&] { ltxm::open_dit_checkpoint(bare); }, {"--dit-config"});
}

TEST(GGUFStandIn, FullSizeGemma12bLoadsThroughTheGemmaLoader) {
  const Layout layout = published_layout("gemma-3-12b");
  TempDir dir;
  const std::string path = dir.file("gemma-3-12b-q4_k_m.gguf");
  const ValueGenerator zeros(0, true);
  const uint64_t size = write_gemma_gguf(layout, value_source(zeros), path, {}, write_tiny_tokenizer(dir));
  EXPECT_GT(size, uint64_t{6'500'000'000});  // 11.8B text parameters at ~4.8 bits
  EXPECT_LT(disk_bytes(path), uint64_t{64} << 20) << "only the norms (1 + 0) and the header hold data";

  const auto hf = gemma3::open_gguf_as_hf(path);
  std::map<std::string, Shape> want, got;
  for (const TensorSpec& t : layout.tensors)
    if (t.name.rfind("language_model.", 0) == 0) want.emplace(t.name.substr(15), t.shape);
  for (const std::string& name : hf->names()) got.emplace(name, hf->shape(name));
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "names or shapes differ from the layout's text-model tensors";
  EXPECT_EQ(hf->dtype("model.embed_tokens.weight"), DType::Q6_K);
  // attn_v / ffn_down in Q6_K exactly for use_more_bits(i, 48): i < 6, i >= 42, (i - 6) % 3 == 2.
  for (int i = 0; i < 48; ++i) {
    const DType more = i < 6 || i >= 42 || (i - 6) % 3 == 2 ? DType::Q6_K : DType::Q4_K;
    const std::string p = "model.layers." + std::to_string(i) + ".";
    EXPECT_EQ(hf->dtype(p + "self_attn.v_proj.weight"), more) << i;
    EXPECT_EQ(hf->dtype(p + "mlp.down_proj.weight"), more) << i;
    EXPECT_EQ(hf->dtype(p + "mlp.up_proj.weight"), DType::Q4_K) << i;
  }
  EXPECT_EQ(hf->get("model.norm.weight").to_floats(), std::vector<float>(3840, 1.0f));

  const GGUFFile f = GGUFFile::open(path);
  const gemma3::Config c = gemma3::Config::from_gguf(f);
  EXPECT_EQ(c.vocab_size, 262208);
  EXPECT_EQ(c.hidden_size, 3840);
  EXPECT_EQ(c.n_layers, 48);
  EXPECT_EQ(c.n_kv_heads, 8);
  EXPECT_EQ(c.sliding_window, 1024);
  EXPECT_EQ(c.rope_linear_factor, 8.0);
  EXPECT_EQ(f.value("tokenizer.ggml.tokens").as_array().size(), 262208u);
  EXPECT_NO_THROW(gemma3::Weights::load(c, hf, "model.", DType::BF16));
}

}  // namespace
}  // namespace ltx::synth
