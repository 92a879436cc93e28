#include "models/gemma3/tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <queue>
#include <sstream>

#include "core/error.h"
#include "core/unicode_letters.h"
#include "io/gguf.h"
#include "io/json.h"

namespace ltx::gemma3 {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581 "▁"

// Length in bytes of the UTF-8 character starting at s[i]; 1 for an invalid or truncated sequence.
size_t utf8_len(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) return 1;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  return n;
}

uint32_t utf8_decode(std::string_view s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i + k])); };
  switch (n) {
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    case 4:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    default:
      return b(0);
  }
}

// CPython's Py_UNICODE_ISSPACE: the code points str.isspace() accepts.
bool is_python_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> chars;
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_len(s, i);
    chars.push_back(s.substr(i, n));
    i += n;
  }
  return chars;
}

std::string replace_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3);
  for (char ch : text) {
    if (ch == ' ')
      out += kSpaceMark;
    else
      out += ch;
  }
  return out;
}

// The piece the BPE sees for a GGUF token: whitespace-only tokens containing a space are stored with real spaces
// and spelled as that many "▁" (gemma_tokenizer); every other token as stored.
std::string_view gguf_piece(std::string_view token, std::string& scratch) {
  if (token.find(' ') == std::string_view::npos) return token;
  size_t n_chars = 0;
  for (size_t i = 0; i < token.size(); ++n_chars) {
    const size_t n = utf8_len(token, i);
    if (!is_python_space(utf8_decode(token, i, n))) return token;
    i += n;
  }
  scratch.clear();
  for (size_t k = 0; k < n_chars; ++k) scratch += kSpaceMark;
  return scratch;
}

template <typename T>
const std::vector<T>& array_of(const GGUFFile& f, const char* key) {
  const GGUFArray& a = f.value(key).as_array();
  const auto* v = std::get_if<std::vector<T>>(&a.values);
  LTX_CHECK(v != nullptr, "tokenizer", f.path(), ": ", key, " has elements of type ", gguf_type_name(a.elem_type()));
  return *v;
}

}  // namespace

std::string_view strip_unicode_whitespace(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end) {
    const size_t n = utf8_len(text, begin);
    if (!is_python_space(utf8_decode(text, begin, n))) break;
    begin += n;
  }
  while (end > begin) {
    size_t start = end - 1;  // back up to the lead byte
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80 && end - start < 4) --start;
    const size_t n = utf8_len(text, start);
    if (start + n != end) {  // not a well-formed character ending here: a lone byte, never whitespace
      break;
    }
    if (!is_python_space(utf8_decode(text, start, n))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

void Tokenizer::build_byte_ids() {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = vocab_.find(name);
  }
  trie_.assign(1, TrieNode{});
}

void Tokenizer::add_special(std::string_view text, int32_t id) {
  if (text.empty()) return;
  int32_t node = 0;
  for (unsigned char c : text) {
    auto it = trie_[node].next.find(c);
    if (it == trie_[node].next.end()) {
      trie_.emplace_back();
      it = trie_[node].next.emplace(c, static_cast<int32_t>(trie_.size() - 1)).first;
    }
    node = it->second;
  }
  trie_[node].token = id;
}

Tokenizer Tokenizer::from_gguf(const GGUFFile& f) {
  const std::string model = f.value("tokenizer.ggml.model").as_string();
  LTX_CHECK(model == "llama", "tokenizer", f.path(), ": tokenizer.ggml.model is '", model,
            "', expected a SentencePiece vocabulary ('llama')");
  if (const GGUFValue* p = f.find("tokenizer.ggml.add_space_prefix"))
    LTX_CHECK(!p->as_bool(), "tokenizer", f.path(), ": add_space_prefix is not supported (Gemma has none)");
  const auto& tokens = array_of<std::string_view>(f, "tokenizer.ggml.tokens");
  const auto& types = array_of<int32_t>(f, "tokenizer.ggml.token_type");
  LTX_CHECK(types.size() == tokens.size(), "tokenizer", f.path(), ": ", types.size(), " token types for ",
            tokens.size(), " tokens");
  LTX_CHECK(!f.find("tokenizer.ggml.merges"), "tokenizer", f.path(),
            ": a GGUF with tokenizer.ggml.merges is not a Gemma-3 vocabulary this loader knows");

  Tokenizer t;
  size_t n_bytes = 0;
  for (const std::string_view tok : tokens) n_bytes += tok.size();
  t.vocab_.reserve(tokens.size(), n_bytes + 64);
  std::string scratch;
  for (const std::string_view tok : tokens) t.vocab_.push_back(gguf_piece(tok, scratch));
  t.vocab_.index();

  t.derive_merges_ = true;
  t.build_byte_ids();
  // add_gguf_special_tokens: control tokens always; user-defined ones when their (stored) spelling is a piece.
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (types[i] != 3 && types[i] != 4) continue;
    const int32_t id = t.vocab_.find(tokens[i]);
    if (types[i] == 3 || id >= 0) t.add_special(tokens[i], id >= 0 ? id : static_cast<int32_t>(i));
  }
  t.special_.assign(tokens.size(), false);
  for (size_t i = 0; i < tokens.size(); ++i) t.special_[i] = types[i] == 3;
  t.mark_image_tokens_special();
  const auto id_of = [&](const char* key, int32_t fallback) {
    const GGUFValue* v = f.find(key);
    return v ? static_cast<int32_t>(v->as_int()) : fallback;
  };
  t.bos_id_ = id_of("tokenizer.ggml.bos_token_id", 2);
  t.eos_id_ = id_of("tokenizer.ggml.eos_token_id", 1);
  t.unk_id_ = id_of("tokenizer.ggml.unknown_token_id", 3);
  t.pad_id_ = id_of("tokenizer.ggml.padding_token_id", 0);
  return t;
}

Tokenizer Tokenizer::from_gguf(const std::string& path) { return from_gguf(*GGUFFile::open_shared(path)); }

// generate_merges' rule for one pair: (l, r) is a merge when l and r are each the last id of their piece (the
// table transformers looks halves up in keeps the last), l + r is a piece, whose last id m is the merged token,
// and the split falls after l's k-th character of it; rank: m first, then longer l first.
std::optional<Tokenizer::Merge> Tokenizer::derived_merge(int32_t l, int32_t r) const {
  const auto n = static_cast<int32_t>(vocab_.size());
  if (l < 0 || r < 0 || l >= n || r >= n) return std::nullopt;
  const std::string_view left = vocab_.piece(l);
  const std::string_view right = vocab_.piece(r);
  if (left.empty() || right.empty()) return std::nullopt;
  if (vocab_.find(left) != l || vocab_.find(right) != r) return std::nullopt;
  const int32_t merged_id = vocab_.find_concat(left, right);
  if (merged_id < 0) return std::nullopt;
  const std::string_view merged = vocab_.piece(merged_id);
  uint64_t k = 0;
  size_t offset = 0;
  while (offset < left.size()) {
    offset += utf8_len(merged, offset);
    ++k;
  }
  if (offset != left.size()) return std::nullopt;  // l ends inside a character of the merged piece
  const auto m = static_cast<uint64_t>(merged_id);
  return Merge{(m << 20) | (0xFFFFFu - std::min<uint64_t>(k, 0xFFFFF)), merged_id};
}

std::optional<Tokenizer::Merge> Tokenizer::merge_of(int32_t l, int32_t r) const {
  if (derive_merges_) return derived_merge(l, r);
  const auto it = merges_.find((static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r));
  return it == merges_.end() ? std::nullopt : std::optional<Merge>(it->second);
}

std::optional<std::pair<uint64_t, int32_t>> Tokenizer::merge_for_testing(int32_t l, int32_t r) const {
  const auto m = merge_of(l, r);
  return m ? std::optional<std::pair<uint64_t, int32_t>>({m->rank, m->id}) : std::nullopt;
}

// generate_merges as transformers runs it: each split (l, r) of a piece with both halves in the vocabulary, ranked
// by the merged piece's (last) position, then longer l first; the halves are looked up in a flat table by a hash
// that grows one character at a time along the prefix.
std::vector<std::pair<uint64_t, std::pair<uint64_t, int32_t>>> Tokenizer::list_gguf_merges_for_testing() const {
  std::vector<std::pair<uint64_t, std::pair<uint64_t, int32_t>>> out;
  for (int32_t id = 0; id < static_cast<int32_t>(vocab_.size()); ++id) {
    const std::string_view piece = vocab_.piece(id);
    if (piece.empty() || vocab_.find(piece) != id) continue;  // a repeated piece: last id
    uint64_t k = 0;                                           // split after the k-th character
    uint64_t prefix_hash = Vocabulary::kSeed;
    for (size_t start = 0, offset = utf8_len(piece, 0); offset < piece.size();
         start = offset, offset += utf8_len(piece, offset)) {
      ++k;
      prefix_hash = Vocabulary::extend(prefix_hash, piece.substr(start, offset - start));
      const int32_t l = vocab_.find(piece.substr(0, offset), prefix_hash);
      if (l < 0) continue;
      const int32_t r = vocab_.find(piece.substr(offset));
      if (r < 0) continue;
      const uint64_t rank = (static_cast<uint64_t>(id) << 20) | (0xFFFFFu - std::min<uint64_t>(k, 0xFFFFF));
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
      out.push_back({key, {rank, id}});
    }
  }
  return out;
}

Tokenizer Tokenizer::from_hf_json(const std::string& path) {
  return read_json_fields("tokenizer", path, [&] {
    std::ifstream in(path);
    LTX_CHECK(in.good(), "tokenizer", "cannot open ", path);
    std::stringstream ss;
    ss << in.rdbuf();
    const Json j = parse_json(ss.str(), path);
    const Json& m = j.at("model");
    LTX_CHECK(m.value("type", std::string()) == "BPE", "tokenizer", path, ": model type is not BPE");
    LTX_CHECK(m.value("byte_fallback", false), "tokenizer", path, ": a Gemma tokenizer has byte_fallback");
    if (j.contains("normalizer") && !j.at("normalizer").is_null()) {
      const Json& n = j.at("normalizer");
      LTX_CHECK(n.value("type", std::string()) == "Replace" && n.at("content") == "\u2581", "tokenizer", path,
                ": expected the normalizer Replace(\" \", \"\u2581\"), got ", n.dump());
    }
    Tokenizer t;
    // Every id an integer in [0, 2^24) (Gemma 3's are below 262,208): checked before one indexes or sizes anything.
    const auto id_of = [&](const Json& v) {
      LTX_CHECK(v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < (int64_t{1} << 24), "tokenizer",
                path, ": token id ", v.dump(), " is not an integer in [0, 2^24)");
      return static_cast<size_t>(v.get<int64_t>());
    };
    size_t n_ids = 0;
    for (const auto& [piece, id] : m.at("vocab").items()) n_ids = std::max(n_ids, id_of(id) + 1);
    for (const auto& a : j.value("added_tokens", Json::array())) n_ids = std::max(n_ids, id_of(a.at("id")) + 1);
    // Ids the model's vocab leaves out are added tokens (their content is their piece) or stay empty.
    std::vector<std::string> pieces(n_ids);
    for (const auto& [piece, id] : m.at("vocab").items()) pieces[id_of(id)] = piece;
    for (const auto& a : j.value("added_tokens", Json::array())) {
      std::string& piece = pieces[id_of(a.at("id"))];
      if (piece.empty()) piece = a.at("content").get<std::string>();
    }
    t.vocab_ = Vocabulary(pieces);
    uint64_t rank = 0;
    for (const auto& mg : m.at("merges")) {
      std::string l, r;
      if (mg.is_array()) {
        l = mg.at(0).get<std::string>();
        r = mg.at(1).get<std::string>();
      } else {
        const std::string s = mg.get<std::string>();
        const size_t sp = s.find(' ');
        LTX_CHECK(sp != std::string::npos, "tokenizer", path, ": merge '", s, "' has no space");
        l = s.substr(0, sp);
        r = s.substr(sp + 1);
      }
      const int32_t li = t.vocab_.find(l), ri = t.vocab_.find(r), ni = t.vocab_.find_concat(l, r);
      LTX_CHECK(li >= 0 && ri >= 0 && ni >= 0, "tokenizer", path, ": merge '", l, " ", r,
                "' names a piece outside the vocabulary");
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(li)) << 32) | static_cast<uint32_t>(ri);
      t.merges_.emplace(key, Merge{rank++, ni});  // the first listing of a pair wins
    }
    t.build_byte_ids();
    t.special_.assign(static_cast<size_t>(t.vocab_.size()), false);
    for (const auto& a : j.value("added_tokens", Json::array())) {
      const std::string content = a.at("content").get<std::string>();
      const int32_t id = a.at("id").get<int32_t>();
      t.add_special(content, id);
      if (a.value("special", false) && id >= 0 && id < t.vocab_.size()) t.special_[static_cast<size_t>(id)] = true;
      if (content == "<bos>") t.bos_id_ = id;
      if (content == "<eos>") t.eos_id_ = id;
      if (content == "<pad>") t.pad_id_ = id;
      if (content == "<unk>") t.unk_id_ = id;
    }
    t.mark_image_tokens_special();
    return t;
  });
}

namespace {

// The byte a "<0xNN>" piece stands for, or -1.
int byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int v = 0;
  for (const char c : piece.substr(3, 2)) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Whether `s` is valid UTF-8: every sequence whole (core/unicode_letters.h decodes it).
bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto [c, n] = utf8_code_point(s, i);
    if (n == 1 && c >= 0x80) return false;
    i += n;
  }
  return true;
}

}  // namespace

void Tokenizer::mark_image_tokens_special() {
  // Gemma3Processor registers the image markers as extra special tokens, so its decode skips them too.
  for (const char* name : {"<start_of_image>", "<end_of_image>", "<image_soft_token>"})
    if (const int32_t id = vocab_.find(name); id >= 0 && static_cast<size_t>(id) < special_.size())
      special_[static_cast<size_t>(id)] = true;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  // tokenizers' ByteFallback decoder: a run of <0xNN> pieces becomes its bytes when they are valid UTF-8, else one
  // U+FFFD per byte; every other piece is its text with U+2581 as a space.
  std::string out, bytes;
  const auto flush = [&] {
    if (valid_utf8(bytes)) {
      out += bytes;
    } else {
      for (size_t i = 0; i < bytes.size(); ++i) out += "\xEF\xBF\xBD";
    }
    bytes.clear();
  };
  for (const int32_t id : ids) {
    if (skip_special && is_special(id)) continue;
    const std::string_view p = piece(id);
    if (const int b = byte_piece(p); b >= 0) {
      bytes.push_back(static_cast<char>(b));
      continue;
    }
    flush();
    for (size_t i = 0; i < p.size();) {
      if (p.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
        out.push_back(' ');
        i += kSpaceMark.size();
      } else {
        out.push_back(p[i++]);
      }
    }
  }
  flush();
  return out;
}

Tokenizer Tokenizer::load(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::path(path).extension() == ".gguf") return from_gguf(path);
  if (fs::is_directory(path)) return from_hf_json((fs::path(path) / "tokenizer.json").string());
  return from_hf_json(path);
}

// HF tokenizers' BPE (models/bpe/word.rs merge_all): characters (or their <0xNN> bytes when the character is not
// a piece), then repeatedly the adjacent pair of lowest rank, leftmost first, is merged.
void Tokenizer::bpe(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  const std::string s = replace_spaces(text);
  struct Sym {
    int32_t id;
    int32_t prev, next;
    bool alive;
  };
  std::vector<Sym> syms;
  bool prev_unk = false;
  for (std::string_view ch : utf8_chars(s)) {
    const int32_t found = vocab_.find(ch);
    std::vector<int32_t> ids;
    if (found >= 0) {
      ids.push_back(found);
    } else {
      for (unsigned char b : ch) ids.push_back(byte_ids_[b]);
      if (std::find(ids.begin(), ids.end(), -1) != ids.end()) ids.assign(1, unk_id_);
    }
    for (int32_t id : ids) {
      const bool unk = found < 0 && id == unk_id_;
      if (unk && prev_unk) continue;  // fuse_unk
      prev_unk = unk;
      const auto n = static_cast<int32_t>(syms.size());
      syms.push_back({id, n - 1, n + 1, true});
    }
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  struct Cand {
    uint64_t rank;
    int32_t pos;
    int32_t id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const auto lookup = [&](int32_t a, int32_t b) { return merge_of(a, b); };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i)
    if (const auto mg = lookup(syms[i].id, syms[i + 1].id)) heap.push({mg->rank, i, mg->id});
  while (!heap.empty()) {
    const Cand c = heap.top();
    heap.pop();
    Sym& left = syms[static_cast<size_t>(c.pos)];
    if (!left.alive || left.next < 0) continue;
    Sym& right = syms[static_cast<size_t>(left.next)];
    const auto mg = lookup(left.id, right.id);
    if (!mg || mg->id != c.id) continue;  // stale: a side was merged since
    left.id = c.id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = c.pos;
    if (left.prev >= 0)
      if (const auto p = lookup(syms[static_cast<size_t>(left.prev)].id, left.id))
        heap.push({p->rank, left.prev, p->id});
    if (left.next >= 0)
      if (const auto n = lookup(left.id, syms[static_cast<size_t>(left.next)].id)) heap.push({n->rank, c.pos, n->id});
  }
  for (int32_t i = 0; i >= 0; i = syms[static_cast<size_t>(i)].next) out.push_back(syms[static_cast<size_t>(i)].id);
}

// Added tokens are found first on the raw text, leftmost then longest (tokenizers' AddedVocabulary), and the text
// between them goes through normalisation and BPE.
std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    int32_t node = 0, match = -1;
    size_t match_len = 0;
    for (size_t k = i; k < text.size(); ++k) {
      const auto it = trie_[static_cast<size_t>(node)].next.find(static_cast<unsigned char>(text[k]));
      if (it == trie_[static_cast<size_t>(node)].next.end()) break;
      node = it->second;
      if (trie_[static_cast<size_t>(node)].token >= 0) {
        match = trie_[static_cast<size_t>(node)].token;
        match_len = k + 1 - i;
      }
    }
    if (match < 0) {
      ++i;
      continue;
    }
    bpe(text.substr(start, i - start), out);
    out.push_back(match);
    i += match_len;
    start = i;
  }
  bpe(text.substr(start), out);
  return out;
}

std::vector<int32_t> Tokenizer::encode_prompt(std::string_view text, int64_t max_length) const {
  LTX_CHECK(max_length >= 1, "tokenizer", "max_length ", max_length, " leaves no room for <bos>");
  std::vector<int32_t> ids{bos_id_};
  const std::vector<int32_t> body = encode(strip_unicode_whitespace(text));
  const size_t keep = std::min(body.size(), static_cast<size_t>(max_length - 1));
  ids.insert(ids.end(), body.begin(), body.begin() + static_cast<std::ptrdiff_t>(keep));
  return ids;
}

Tokenizer::Batch Tokenizer::encode_batch(const std::vector<std::string>& texts, int64_t max_length) const {
  const auto b = static_cast<int64_t>(texts.size());
  std::vector<int64_t> ids(static_cast<size_t>(b * max_length), pad_id_), mask(ids.size(), 0);
  for (int64_t r = 0; r < b; ++r) {
    const std::vector<int32_t> row = encode_prompt(texts[static_cast<size_t>(r)], max_length);
    const int64_t pad = max_length - static_cast<int64_t>(row.size());
    for (size_t k = 0; k < row.size(); ++k) {
      ids[r * max_length + pad + static_cast<int64_t>(k)] = row[k];
      mask[r * max_length + pad + static_cast<int64_t>(k)] = 1;
    }
  }
  return {Tensor::from_ints(DType::I64, {b, max_length}, ids), Tensor::from_ints(DType::I64, {b, max_length}, mask)};
}

}  // namespace ltx::gemma3
