// Gemma-3 tokenizer: SentencePiece-style BPE with byte fallback, whitespace written as U+2581, as transformers
// builds it (models/gemma/tokenization_gemma.py GemmaTokenizer: normalizer Replace(" ", "▁"), BPE with
// byte_fallback and fuse_unk; added tokens matched first on the raw text, leftmost-longest).
//
// Loaded from GGUF metadata (tokenizer.ggml.*), where Gemma files carry no merges: they follow from the vocabulary
// as transformers' GGUF loader builds them (integrations/gguf/gguf_tokenizer_mapping.py gemma_tokenizer and
// tokenization_utils_base.py generate_merges): every split of a token into two tokens is a merge, ranked by the
// merged token's position in the file (its scores do not follow merge order), longer left part first. Rather than
// listing all of them at load (0.3 s for the 262k vocabulary), the BPE derives the one merge it asks for: the pair
// (l, r) merges when both are their piece's last id, their concatenation is a piece, and l ends on a character
// boundary of it (derived_merge; tested equal to the full list on the whole vocabulary). Tokens made
// only of whitespace including a space are spelled as that many "▁"; control tokens (type 3) and user-defined
// tokens (type 4) are matched whole in the raw text. Or from a Hugging Face tokenizer.json (vocab, ranked merges,
// added_tokens). Pieces are looked up in a Vocabulary (one byte buffer and a hash table, no allocation per piece).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "models/gemma3/vocabulary.h"

namespace ltx {

class GGUFFile;

namespace gemma3 {

class Tokenizer {
 public:
  static Tokenizer from_gguf(const GGUFFile& file);
  static Tokenizer from_gguf(const std::string& path);
  static Tokenizer from_hf_json(const std::string& tokenizer_json_path);
  // tokenizer.json inside a HF folder, or the GGUF file itself.
  static Tokenizer load(const std::string& path);

  // Token ids of `text` with no special tokens added (added/control tokens in the text are recognised).
  std::vector<int32_t> encode(std::string_view text) const;
  // LTX's use (ltx_core text_encoders/gemma/tokenizer.py): text.strip(), exactly one leading <bos>, truncated
  // to max_length tokens in all.
  std::vector<int32_t> encode_prompt(std::string_view text, int64_t max_length = 1024) const;

  struct Batch {
    Tensor ids;   // i64 [B, max_length], left-padded with the pad id
    Tensor mask;  // i64 [B, max_length], 1 on real tokens
  };
  Batch encode_batch(const std::vector<std::string>& texts, int64_t max_length = 1024) const;

  // For tests: every merge of the GGUF rule listed the way transformers' generate_merges lists them, as
  // ((left id << 32 | right id), rank, merged id); derived_merge must agree with each and find no others.
  std::vector<std::pair<uint64_t, std::pair<uint64_t, int32_t>>> list_gguf_merges_for_testing() const;
  // For tests: the merge the BPE uses for (l, r): rank and merged id, or nullopt.
  std::optional<std::pair<uint64_t, int32_t>> merge_for_testing(int32_t l, int32_t r) const;

  int64_t vocab_size() const { return vocab_.size(); }
  std::string_view piece(int32_t id) const {
    LTX_CHECK(id >= 0 && id < vocab_size(), "tokenizer", "token id ", id, " is outside the vocabulary of ",
              vocab_size());
    return vocab_.piece(id);
  }
  // The text of `ids` as transformers' decode gives it (the tokenizer.json decoder: U+2581 -> space, <0xNN> pieces
  // fused into their bytes), without the special (control) tokens when `skip_special`. Bytes that do not form
  // UTF-8 come out as U+FFFD, as the byte-fallback decoder writes them.
  std::string decode(std::span<const int32_t> ids, bool skip_special) const;
  // The id of a piece spelled exactly `piece` (e.g. "<end_of_turn>"), or -1.
  int32_t find(std::string_view piece) const { return vocab_.find(piece); }
  bool is_special(int32_t id) const { return id >= 0 && static_cast<size_t>(id) < special_.size() && special_[id]; }

  int32_t bos_id() const { return bos_id_; }
  int32_t pad_id() const { return pad_id_; }
  int32_t eos_id() const { return eos_id_; }

 private:
  struct Merge {
    uint64_t rank;
    int32_t id;
  };
  struct TrieNode {
    std::unordered_map<unsigned char, int32_t> next;
    int32_t token = -1;
  };

  // The merge of the pair (l, r), or null: from merges_, or derived from the vocabulary (GGUF).
  std::optional<Merge> merge_of(int32_t l, int32_t r) const;
  std::optional<Merge> derived_merge(int32_t l, int32_t r) const;
  void build_byte_ids();
  void add_special(std::string_view text, int32_t id);
  void mark_image_tokens_special();
  void bpe(std::string_view text, std::vector<int32_t>& out) const;

  Vocabulary vocab_;                            // id <-> piece as the model spells it (a repeated piece: last id)
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> rank and merged id (HF json)
  bool derive_merges_ = false;                  // GGUF: merges follow from the vocabulary (derived_merge)
  std::vector<TrieNode> trie_;                  // added tokens, matched on raw bytes
  // Per id: a special token (GGUF control type; tokenizer.json special; the image markers, as Gemma3Processor).
  std::vector<bool> special_;
  int32_t byte_ids_[256] = {};
  int32_t unk_id_ = 3, bos_id_ = 2, eos_id_ = 1, pad_id_ = 0;
};

// Python's str.strip(): removes leading and trailing Unicode whitespace (str.isspace()).
std::string_view strip_unicode_whitespace(std::string_view text);

}  // namespace gemma3
}  // namespace ltx
