// The decoded cache's integrity hash of a byte range: eight FNV-style 64-bit lanes over the 8-byte words of each
// 64-byte block ((lane ^ word) * prime: for fixed other words each step is a bijection, so any one changed word
// changes its lane for good), then the tail bytes, then the lanes folded in order. Not cryptographic: it detects
// damage, not tampering. The lanes run as one AVX-512 vector where the CPU has AVX512DQ (same value; a 200 MB file
// hashed 3x faster, at memory speed), else as scalars.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ltx::gemma3 {

uint64_t content_hash(const std::byte* p, size_t n);
// The scalar computation, whatever the CPU (tests check the vector path against it).
uint64_t content_hash_portable(const std::byte* p, size_t n);

}  // namespace ltx::gemma3
