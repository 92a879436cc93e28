#include "models/gemma3/content_hash.h"

#include <array>
#include <cstring>

#include "core/cpu_features.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LTX_CONTENT_HASH_AVX512 1
#endif

namespace ltx::gemma3 {
namespace {

constexpr uint64_t kPrime = 0x100000001b3ull;
constexpr uint64_t kBasis = 0xcbf29ce484222325ull;

// The tail bytes after the last whole block, then the lanes folded in order.
uint64_t finish(const std::array<uint64_t, 8>& lane, const std::byte* tail, size_t n_tail, size_t n) {
  uint64_t h = kBasis ^ n;
  for (size_t i = 0; i < n_tail; ++i) h = (h ^ static_cast<uint8_t>(tail[i])) * kPrime;
  for (uint64_t l : lane) h = (h ^ l) * kPrime ^ (h >> 29);
  return h;
}

#if defined(LTX_CONTENT_HASH_AVX512)
__attribute__((target("avx512f,avx512dq"))) uint64_t content_hash_avx512(const std::byte* p, size_t n) {
  __m512i lanes = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(kBasis)),
                                   _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));  // lane k starts at basis + k
  const __m512i prime = _mm512_set1_epi64(static_cast<long long>(kPrime));
  size_t i = 0;
  for (; i + 64 <= n; i += 64) lanes = _mm512_mullo_epi64(_mm512_xor_si512(lanes, _mm512_loadu_si512(p + i)), prime);
  std::array<uint64_t, 8> lane;
  _mm512_storeu_si512(lane.data(), lanes);
  return finish(lane, p + i, n - i, n);
}
#endif

}  // namespace

uint64_t content_hash_portable(const std::byte* p, size_t n) {
  std::array<uint64_t, 8> lane;
  for (size_t k = 0; k < lane.size(); ++k) lane[k] = kBasis + k;
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    for (size_t k = 0; k < 8; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kPrime;
    }
  return finish(lane, p + i, n - i, n);
}

uint64_t content_hash(const std::byte* p, size_t n) {
#if defined(LTX_CONTENT_HASH_AVX512)
  if (cpu_features().avx512) return content_hash_avx512(p, n);
#endif
  return content_hash_portable(p, n);
}

}  // namespace ltx::gemma3
