#include "synth/safetensors_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <numeric>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/float8.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "io/json.h"
#include "io/safetensors.h"

namespace ltx::synth {
namespace {

constexpr const char* kComponent = "synth";
constexpr int64_t kChunkElems = int64_t{1} << 20;     // one unit of work: at most 4 MB of output
constexpr uint64_t kBatchBytes = uint64_t{64} << 20;  // computed together, then written while the next one computes
constexpr int64_t kBlockElems = 16384;                // f32 values staged per encode step (64 kB)

size_t element_bytes(const TensorSpec& t, const std::string& path) {
  switch (t.dtype) {
    case DType::F32:
      return 4;
    case DType::BF16:
    case DType::F16:
      return 2;
    case DType::F8_E4M3:
      return 1;
    default:
      fail(kComponent, path + ": tensor '" + t.name + "' has dtype " + std::string(dtype_name(t.dtype)) +
                           ", which the stand-in writer cannot produce (F32, BF16, F16, F8_E4M3)");
  }
}

// Rounds n f32 values to `dtype` into dst (little-endian).
void encode(DType dtype, const float* src, int64_t n, uint8_t* dst) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_f16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    default:  // F8_E4M3, checked by element_bytes
      quantize_f8_e4m3(src, dst, n);
  }
}

// The file under construction: `<path>.partial`, removed unless committed.
class PartialFile {
 public:
  explicit PartialFile(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {
    fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    LTX_CHECK(fd_ >= 0, kComponent, "cannot create ", partial_, ": ", std::strerror(errno));
  }
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(partial_.c_str());
  }

  void write_at(const uint8_t* data, uint64_t bytes, uint64_t offset) const {
    while (bytes > 0) {
      const ssize_t n = ::pwrite(fd_, data, bytes, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      LTX_CHECK(n > 0, kComponent, "writing ", partial_, ": ", n < 0 ? std::strerror(errno) : "nothing written");
      data += n;
      bytes -= static_cast<uint64_t>(n);
      offset += static_cast<uint64_t>(n);
    }
  }
  void resize(uint64_t bytes) const {
    LTX_CHECK(::ftruncate(fd_, static_cast<off_t>(bytes)) == 0, kComponent, "sizing ", partial_, ": ",
              std::strerror(errno));
  }
  void commit() {
    LTX_CHECK(::fdatasync(fd_) == 0, kComponent, "syncing ", partial_, ": ", std::strerror(errno));
    const int closed = ::close(fd_);
    fd_ = -1;
    LTX_CHECK(closed == 0, kComponent, "closing ", partial_, ": ", std::strerror(errno));
    LTX_CHECK(std::rename(partial_.c_str(), path_.c_str()) == 0, kComponent, "renaming ", partial_, " to ", path_, ": ",
              std::strerror(errno));
    committed_ = true;
  }

 private:
  std::string path_, partial_;
  int fd_ = -1;
  bool committed_ = false;
};

struct Placed {
  const StreamedTensor* tensor;
  uint64_t begin, end;  // data_offsets
};

// Largest element first, then by name (safetensors/src/tensor.rs, prepare()).
std::vector<Placed> place(std::span<const StreamedTensor> tensors, const std::string& path) {
  std::set<std::string_view> names;
  for (const StreamedTensor& t : tensors) {
    LTX_CHECK(!t.spec.name.empty() && t.spec.name != "__metadata__", kComponent, path, ": invalid tensor name '",
              t.spec.name, "'");
    LTX_CHECK(names.insert(t.spec.name).second, kComponent, path, ": tensor '", t.spec.name, "' given twice");
    element_bytes(t.spec, path);
  }
  std::vector<const StreamedTensor*> order;
  for (const StreamedTensor& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [&](const StreamedTensor* a, const StreamedTensor* b) {
    const size_t ea = element_bytes(a->spec, path), eb = element_bytes(b->spec, path);
    return ea != eb ? ea > eb : a->spec.name < b->spec.name;
  });
  std::vector<Placed> placed;
  uint64_t offset = 0;
  for (const StreamedTensor* t : order) {
    const uint64_t bytes = tensor_bytes(t->spec);
    placed.push_back({t, offset, offset + bytes});
    offset += bytes;
  }
  return placed;
}

std::string header_text(const std::vector<Placed>& placed, const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const Placed& p : placed) {
    const TensorSpec& s = p.tensor->spec;
    header[s.name] = {{"dtype", safetensors_dtype_name(s.dtype)},
                      {"shape", std::vector<int64_t>(s.shape.begin(), s.shape.end())},
                      {"data_offsets", {p.begin, p.end}}};
  }
  std::string text = header.dump();
  // Spaces pad the header so the data starts 8-byte aligned (the format allows trailing spaces).
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  return text;
}

// One unit of work: elements [first, first + count) of a tensor, at `file_offset`, staged at `buffer_offset`.
struct Chunk {
  const StreamedTensor* tensor;
  int64_t first, count;
  uint64_t file_offset, bytes, buffer_offset = 0;
};

std::vector<Chunk> plan_chunks(const std::vector<Placed>& placed, uint64_t data_start) {
  std::vector<Chunk> chunks;
  for (const Placed& p : placed) {
    if (!p.tensor->values) continue;  // all zeros: the truncated file already reads as zeros
    const int64_t n = p.tensor->spec.shape.numel();
    const uint64_t elem = (p.end - p.begin) / static_cast<uint64_t>(std::max<int64_t>(n, 1));
    for (int64_t first = 0; first < n; first += kChunkElems) {
      const int64_t count = std::min(kChunkElems, n - first);
      chunks.push_back({p.tensor, first, count, data_start + p.begin + static_cast<uint64_t>(first) * elem,
                        static_cast<uint64_t>(count) * elem});
    }
  }
  return chunks;
}

// Computes and encodes chunks [begin, end) into `buffer`, the pool's threads taking chunks in turn.
void fill_batch(std::span<const Chunk> chunks, std::vector<uint8_t>& buffer) {
  std::atomic<size_t> next{0};
  parallel_for(thread_count(), 1, [&](int64_t, int64_t) {
    std::vector<float> staged(static_cast<size_t>(kBlockElems));
    for (size_t i = next++; i < chunks.size(); i = next++) {
      const Chunk& c = chunks[i];
      const DType dtype = c.tensor->spec.dtype;
      const uint64_t elem = c.bytes / static_cast<uint64_t>(c.count);
      for (int64_t done = 0; done < c.count; done += kBlockElems) {
        const int64_t n = std::min(kBlockElems, c.count - done);
        c.tensor->values(c.first + done, n, staged.data());
        encode(dtype, staged.data(), n, buffer.data() + c.buffer_offset + static_cast<uint64_t>(done) * elem);
      }
    }
  });
}

// Writes a filled batch, merging chunks that are contiguous in the file into one write.
void write_batch(const PartialFile& file, std::span<const Chunk> chunks, const std::vector<uint8_t>& buffer) {
  size_t i = 0;
  while (i < chunks.size()) {
    size_t j = i + 1;
    uint64_t bytes = chunks[i].bytes;
    while (j < chunks.size() && chunks[j].file_offset == chunks[i].file_offset + bytes) bytes += chunks[j++].bytes;
    file.write_at(buffer.data() + chunks[i].buffer_offset, bytes, chunks[i].file_offset);
    i = j;
  }
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  char text[32];
  const auto b = static_cast<double>(bytes);
  if (bytes >= 1000000000ull)
    std::snprintf(text, sizeof text, "%.2f GB", b / 1e9);
  else if (bytes >= 1000000ull)
    std::snprintf(text, sizeof text, "%.1f MB", b / 1e6);
  else if (bytes >= 1000ull)
    std::snprintf(text, sizeof text, "%.1f kB", b / 1e3);
  else
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  return text;
}

uint64_t safetensors_stream_size(std::span<const StreamedTensor> tensors,
                                 const std::map<std::string, std::string>& metadata) {
  const std::vector<Placed> placed = place(tensors, "stand-in");
  const uint64_t data = placed.empty() ? 0 : placed.back().end;
  return 8 + header_text(placed, metadata).size() + data;
}

uint64_t write_safetensors_stream(const std::string& path, std::span<const StreamedTensor> tensors,
                                  const std::map<std::string, std::string>& metadata, const ProgressFn& progress) {
  const std::vector<Placed> placed = place(tensors, path);
  const std::string header = header_text(placed, metadata);
  const uint64_t data_start = 8 + header.size();
  const uint64_t total = data_start + (placed.empty() ? 0 : placed.back().end);
  std::vector<Chunk> chunks = plan_chunks(placed, data_start);
  const uint64_t computed = std::accumulate(chunks.begin(), chunks.end(), uint64_t{0},
                                            [](uint64_t s, const Chunk& c) { return s + c.bytes; });
  if (progress)
    progress(
        path + ": " + format_bytes(total) + ", " + std::to_string(tensors.size()) + " tensors" +
        (computed < total - data_start ? " (" + format_bytes(computed) + " of data written, the rest sparse)" : ""));

  PartialFile file(path);
  file.resize(total);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
  file.write_at(length, 8, 0);
  file.write_at(reinterpret_cast<const uint8_t*>(header.data()), header.size(), 8);

  // Two buffers: the pool fills one while a writer thread writes the other.
  std::array<std::vector<uint8_t>, 2> buffers;
  for (auto& b : buffers) b.reserve(std::min<uint64_t>(computed, kBatchBytes));  // never reallocated: no 2x peak
  std::future<void> writing;  // declared after the buffers: destroyed (joined) before them
  uint64_t done = 0;
  int next_percent = 5;
  for (size_t begin = 0, b = 0; begin < chunks.size(); b ^= 1) {
    size_t end = begin;
    uint64_t bytes = 0;
    while (end < chunks.size() && (end == begin || bytes + chunks[end].bytes <= kBatchBytes)) {
      chunks[end].buffer_offset = bytes;
      bytes += chunks[end++].bytes;
    }
    std::vector<uint8_t>& buffer = buffers[b];
    buffer.resize(bytes);
    const std::span<const Chunk> batch(chunks.data() + begin, end - begin);
    fill_batch(batch, buffer);
    if (writing.valid()) writing.get();  // the previous batch, which used the other buffer
    writing = std::async(std::launch::async, [&file, batch, &buffer] { write_batch(file, batch, buffer); });
    begin = end;
    done += bytes;
    const int percent = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(computed));
    if (progress && percent >= next_percent && percent < 100) {
      progress("  " + std::to_string(percent) + "% (" + format_bytes(done) + " of " + format_bytes(computed) + ")");
      next_percent = percent / 5 * 5 + 5;
    }
  }
  if (writing.valid()) writing.get();
  file.commit();
  if (progress) progress("  wrote " + path);
  return total;
}

}  // namespace ltx::synth
