#include "models/gemma3/decoded_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/mapped_file.h"
#include "core/thread_pool.h"
#include "io/atomic_file.h"
#include "models/gemma3/content_hash.h"

namespace ltx::gemma3 {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'L', 'T', 'X', 'G', 'D', 'E', 'C', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kAlign = 64;
constexpr size_t kMaxMatrices = (kHeaderBytes - 128) / 16;

uint64_t hash_bytes(const std::byte* p, size_t n) { return content_hash(p, n); }

// hash_bytes over 4 MiB pieces on the pool, the pieces' hashes then hashed in order (the same value on any
// number of threads). A piece of a mapped file is let go once hashed: checking a cache file at load would otherwise
// map all of it (a 12B model's is larger than memory) before the run's memory plan decides what stays resident.
uint64_t hash_data(const std::byte* p, size_t n) {
  constexpr size_t kPiece = size_t{4} << 20;
  const size_t pieces = (n + kPiece - 1) / kPiece;
  std::vector<uint64_t> h(pieces);
  parallel_for(static_cast<int64_t>(pieces), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const size_t at = static_cast<size_t>(i) * kPiece, bytes = std::min(kPiece, n - at);
      h[static_cast<size_t>(i)] = hash_bytes(p + at, bytes);
      drop_file_pages(p + at, bytes);  // no-op on memory that is not a file mapping
    }
  });
  return hash_bytes(reinterpret_cast<const std::byte*>(h.data()), h.size() * sizeof(uint64_t));
}

struct Header {
  char magic[8];
  uint32_t version, dtype;
  uint64_t source_size;
  int64_t source_mtime_ns;
  uint64_t source_head_hash;
  uint64_t n_matrices, data_bytes, data_hash;
  uint64_t header_hash;  // hash of the whole 4 KiB header with this field zero
  uint64_t shapes[2 * kMaxMatrices];
};
static_assert(sizeof(Header) <= kHeaderBytes);

// What the file must hold for this load: everything but the two hashes.
Header expected_header(const std::vector<nn::Linear*>& matrices, DType to, const std::string& source_path) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kFormatVersion;
  h.dtype = static_cast<uint32_t>(to);
  struct stat st {};
  LTX_CHECK(::stat(source_path.c_str(), &st) == 0, "gemma3", "cannot stat ", source_path);
  h.source_size = static_cast<uint64_t>(st.st_size);
  h.source_mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::vector<char> head(std::min<size_t>(h.source_size, size_t{1} << 20));
  std::ifstream in(source_path, std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  LTX_CHECK(in.gcount() == static_cast<std::streamsize>(head.size()), "gemma3", "cannot read ", source_path);
  h.source_head_hash = hash_bytes(reinterpret_cast<const std::byte*>(head.data()), head.size());
  h.n_matrices = matrices.size();
  uint64_t offset = 0;
  for (size_t i = 0; i < matrices.size(); ++i) {
    h.shapes[2 * i] = static_cast<uint64_t>(matrices[i]->weight.dim(0));
    h.shapes[2 * i + 1] = static_cast<uint64_t>(matrices[i]->weight.dim(1));
    offset = (offset + kAlign - 1) / kAlign * kAlign + h.shapes[2 * i] * h.shapes[2 * i + 1] * dtype_block_bytes(to);
  }
  h.data_bytes = offset;
  return h;
}

uint64_t header_hash(Header h) {
  h.header_hash = 0;
  std::array<std::byte, kHeaderBytes> bytes{};
  std::memcpy(bytes.data(), &h, sizeof(h));
  return hash_bytes(bytes.data(), bytes.size());
}

// The file's matrices as views of its mapping, when it holds exactly what `want` describes; else empty.
std::vector<Tensor> read_cache(const std::string& path, const Header& want, DType to) {
  std::shared_ptr<MappedFile> file;
  try {
    file = MappedFile::open(path);
  } catch (const Error&) {
    return {};
  }
  if (file->size() != kHeaderBytes + want.data_bytes) return {};
  Header got;
  std::memcpy(&got, file->data(), sizeof(got));
  if (got.header_hash != header_hash(got)) return {};
  Header same = got;
  same.data_hash = 0, same.header_hash = 0;
  Header expect = want;
  expect.data_hash = 0, expect.header_hash = 0;
  if (std::memcmp(&same, &expect, sizeof(Header)) != 0) return {};  // another source, dtype, format or shapes
  const std::byte* data = file->data() + kHeaderBytes;
  if (hash_data(data, want.data_bytes) != got.data_hash) return {};
  auto storage = Storage::borrow(const_cast<std::byte*>(data), want.data_bytes, file);
  std::vector<Tensor> out;
  uint64_t offset = 0;
  for (size_t i = 0; i < want.n_matrices; ++i) {
    offset = (offset + kAlign - 1) / kAlign * kAlign;
    const Shape shape{static_cast<int64_t>(want.shapes[2 * i]), static_cast<int64_t>(want.shapes[2 * i + 1])};
    out.push_back(Tensor::view_of(storage, offset, to, shape));
    offset += static_cast<uint64_t>(shape.numel()) * dtype_block_bytes(to);
  }
  return out;
}

// Decodes the matrices into one buffer laid out as the file's data (the returned tensors are views of it) and
// writes the file; a file that cannot be written (read-only folder, full disk) leaves only the in-memory copy.
std::vector<Tensor> decode_and_write(const std::string& path, Header h, const std::vector<nn::Linear*>& matrices,
                                     DType to) {
  auto data = Storage::allocate(std::max<uint64_t>(h.data_bytes, 1));
  std::vector<Tensor> out;
  uint64_t offset = 0;
  for (size_t i = 0; i < matrices.size(); ++i) {
    offset = (offset + kAlign - 1) / kAlign * kAlign;
    const Shape shape{static_cast<int64_t>(h.shapes[2 * i]), static_cast<int64_t>(h.shapes[2 * i + 1])};
    out.push_back(Tensor::view_of(data, offset, to, shape));
    dequantize_matrix_into(matrices[i]->weight, out.back());
    offset += static_cast<uint64_t>(shape.numel()) * dtype_block_bytes(to);
  }
  h.data_hash = hash_data(data->data(), h.data_bytes);
  h.header_hash = header_hash(h);
  std::array<std::byte, kHeaderBytes> header{};
  std::memcpy(header.data(), &h, sizeof(h));
  try {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    // Unsynced: every read checks the size and both hashes, so a file a crash left incomplete is rewritten.
    io::AtomicFile f(path, io::AtomicFile::Durability::Unsynced);
    f.write(header.data(), header.size());
    f.write(data->data(), h.data_bytes);
    f.commit();
  } catch (const Error&) {
  }
  return out;
}

}  // namespace

std::string decoded_cache_path(const std::string& cache_dir, const std::string& source_path, DType to) {
  std::error_code ec;
  const std::string absolute = fs::absolute(source_path, ec).lexically_normal().string();
  const uint64_t h = hash_bytes(reinterpret_cast<const std::byte*>(absolute.data()), absolute.size());
  char name[64];
  std::snprintf(name, sizeof(name), "gemma-decoded-%016llx-%s.bin", static_cast<unsigned long long>(h),
                std::string(dtype_name(to)).c_str());
  return (fs::path(cache_dir) / name).string();
}

DecodedCacheOutcome dequantize_layer_matrices_cached(Weights& w, DType to, int64_t budget_bytes,
                                                     const std::string& source_path, const std::string& cache_path) {
  const std::vector<nn::Linear*> matrices = quantized_layer_matrices(w, to, budget_bytes);
  if (matrices.empty() || matrices.size() > kMaxMatrices) {
    dequantize_layer_matrices(w, to, budget_bytes);
    return DecodedCacheOutcome::NotUsed;
  }
  const Header want = expected_header(matrices, to, source_path);
  const bool existed = fs::exists(cache_path);
  if (existed) {
    const std::vector<Tensor> cached = read_cache(cache_path, want, to);
    if (!cached.empty()) {
      for (size_t i = 0; i < matrices.size(); ++i) matrices[i]->weight = cached[i];
      return DecodedCacheOutcome::Read;
    }
  }
  const std::vector<Tensor> decoded = decode_and_write(cache_path, want, matrices, to);
  for (size_t i = 0; i < matrices.size(); ++i) matrices[i]->weight = decoded[i];
  return existed ? DecodedCacheOutcome::Rewritten : DecodedCacheOutcome::Written;
}

}  // namespace ltx::gemma3
