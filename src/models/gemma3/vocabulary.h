// A tokenizer's vocabulary, id -> piece and piece -> id, built without an allocation per piece: the pieces lie back
// to back in one byte buffer and are found through an open-addressing table of their FNV-1a hashes. For Gemma 3's
// 262k pieces it is built in ~5 ms, where a std::unordered_map<std::string, int32_t> took 20-35 ms (its node and
// string allocations were most of the tokenizer's load, the first generation's critical path).
//
// A piece listed more than once maps to its last id, as a Python dict filled in id order does (transformers builds
// the GGUF tokenizer's vocab that way). The hash extends one byte at a time, so hash(a + b) = extend(hash(a), b):
// find_concat looks up a + b without building the string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ltx::gemma3 {

class Vocabulary {
 public:
  static constexpr uint64_t kSeed = 0xcbf29ce484222325ULL;
  static uint64_t extend(uint64_t h, std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  }
  static uint64_t hash(std::string_view s) { return extend(kSeed, s); }

  Vocabulary() = default;
  // pieces[i] is id i's piece.
  explicit Vocabulary(const std::vector<std::string>& pieces);

  // Building piece by piece: ids in order, then index() once before any lookup.
  void reserve(size_t n_pieces, size_t n_bytes);
  void push_back(std::string_view piece);
  void index();

  int64_t size() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  // Id `id`'s piece (0 <= id < size()); valid as long as this vocabulary.
  std::string_view piece(int32_t id) const {
    const auto i = static_cast<size_t>(id);
    return {bytes_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]};
  }
  // The (last) id of piece s, or -1.
  int32_t find(std::string_view s) const { return find(s, hash(s)); }
  // The same, given h = hash(s).
  int32_t find(std::string_view s, uint64_t h) const;
  // The (last) id of the piece a + b, or -1.
  int32_t find_concat(std::string_view a, std::string_view b) const;

 private:
  // One slot per 32-bit hash tag and id; the table's index bits are the hash's low bits, the tag its high half.
  struct Slot {
    uint32_t tag = 0;
    int32_t id = -1;
  };
  template <typename Equal>
  int32_t probe(uint64_t h, const Equal& equal) const;

  std::string bytes_;                 // every piece, back to back
  std::vector<uint32_t> offsets_{0};  // piece i is bytes_[offsets_[i], offsets_[i + 1])
  std::vector<Slot> slots_;           // open addressing, linear probing; capacity a power of two >= 2 size()
  size_t mask_ = 0;
};

}  // namespace ltx::gemma3
