#include "models/gemma3/vocabulary.h"

#include <limits>

#include "core/error.h"

namespace ltx::gemma3 {
namespace {

uint32_t tag_of(uint64_t h) { return static_cast<uint32_t>(h >> 32); }

}  // namespace

Vocabulary::Vocabulary(const std::vector<std::string>& pieces) {
  size_t n_bytes = 0;
  for (const std::string& p : pieces) n_bytes += p.size();
  reserve(pieces.size(), n_bytes);
  for (const std::string& p : pieces) push_back(p);
  index();
}

void Vocabulary::reserve(size_t n_pieces, size_t n_bytes) {
  bytes_.reserve(n_bytes);
  offsets_.reserve(n_pieces + 1);
}

void Vocabulary::push_back(std::string_view piece) {
  LTX_CHECK(bytes_.size() + piece.size() <= std::numeric_limits<uint32_t>::max(), "tokenizer",
            "the vocabulary's pieces exceed 4 GiB");
  bytes_.append(piece);
  offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
}

void Vocabulary::index() {
  const auto n = static_cast<size_t>(size());
  size_t capacity = 16;
  while (capacity < 2 * n) capacity <<= 1;
  mask_ = capacity - 1;
  slots_.assign(capacity, Slot{});
  // The slot loads miss the cache (the table is 4 MB for 262k pieces): hash every piece first, then insert with
  // the slot a few pieces ahead prefetched.
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; ++i) hashes[i] = hash(piece(static_cast<int32_t>(i)));
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&slots_[hashes[i + kAhead] & mask_], 1);
    const auto id = static_cast<int32_t>(i);
    const std::string_view p = piece(id);
    const uint64_t h = hashes[i];
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      Slot& slot = slots_[at];
      if (slot.id < 0 || (slot.tag == tag_of(h) && piece(slot.id) == p)) {
        slot = Slot{tag_of(h), id};  // a repeated piece: the later id replaces the earlier
        break;
      }
    }
  }
}

template <typename Equal>
int32_t Vocabulary::probe(uint64_t h, const Equal& equal) const {
  if (slots_.empty()) return -1;
  for (size_t at = h & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.id < 0) return -1;
    if (slot.tag == tag_of(h) && equal(piece(slot.id))) return slot.id;
  }
}

int32_t Vocabulary::find(std::string_view s, uint64_t h) const {
  return probe(h, [&](std::string_view p) { return p == s; });
}

int32_t Vocabulary::find_concat(std::string_view a, std::string_view b) const {
  return probe(extend(hash(a), b), [&](std::string_view p) {
    return p.size() == a.size() + b.size() && p.substr(0, a.size()) == a && p.substr(a.size()) == b;
  });
}

}  // namespace ltx::gemma3
