#include "synth/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <type_traits>
#include <variant>

#include "core/error.h"
#include "core/quant.h"
#include "core/thread_pool.h"
#include "io/gguf.h"

namespace ltx::synth {
namespace {

uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

// Little-endian fields (every host ltx supports is little-endian, as GGUF is).
class Bytes {
 public:
  template <typename T>
  void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&v);
    out_.append(p, sizeof(T));
  }
  void str(std::string_view s) {
    pod(static_cast<uint64_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

void put_array(Bytes& b, const GGUFArray& a) {
  b.pod(static_cast<uint32_t>(a.elem_type()));
  b.pod(static_cast<uint64_t>(a.size()));
  std::visit(
      [&](const auto& elems) {
        using V = std::decay_t<decltype(elems)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          fail("synth", "GGUF arrays of arrays are not supported");
        } else if constexpr (std::is_same_v<V, std::vector<bool>>) {
          for (const bool e : elems) b.pod(static_cast<uint8_t>(e));
        } else if constexpr (std::is_same_v<V, std::vector<std::string_view>>) {
          for (const std::string_view e : elems) b.str(e);
        } else {
          for (const auto e : elems) b.pod(e);
        }
      },
      a.values);
}

void put_value(Bytes& b, const GGUFValue& v) {
  b.pod(static_cast<uint32_t>(v.type()));
  std::visit(
      [&](const auto& x) {
        using V = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<V, bool>)
          b.pod(static_cast<uint8_t>(x));
        else if constexpr (std::is_same_v<V, std::string>)
          b.str(x);
        else if constexpr (std::is_same_v<V, GGUFArray>)
          put_array(b, x);
        else
          b.pod(x);
      },
      v.variant());
}

void pwrite_all(int fd, const void* data, size_t n, uint64_t at, const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    LTX_CHECK(w > 0, "synth", path, ": write failed at byte ", at, ": ", std::strerror(errno));
    p += w, at += static_cast<uint64_t>(w), n -= static_cast<size_t>(w);
  }
}

std::string gigabytes(uint64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof(s), "%.2f GB", static_cast<double>(bytes) / 1e9);
  return s;
}

// The partial file: closed, and removed unless kept, when the write ends.
struct PartialFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~PartialFile() {
    if (fd >= 0) ::close(fd);
    if (!keep) ::unlink(path.c_str());
  }
};

}  // namespace

GGUFWriter::GGUFWriter(uint32_t alignment) : alignment_(alignment) {
  LTX_CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0, "synth", "GGUF alignment ", alignment,
            " is not a power of two");
  if (alignment != 32) add_u32("general.alignment", alignment);
}

void GGUFWriter::add(const std::string& key, const GGUFValue& value) {
  LTX_CHECK(keys_.insert(key).second, "synth", "GGUF metadata key '", key, "' added twice");
  const auto* array = std::get_if<GGUFArray>(&value.variant());
  const auto* views = array ? std::get_if<std::vector<std::string_view>>(&array->values) : nullptr;
  if (!views) {
    metadata_.emplace_back(key, value);
    return;
  }
  std::vector<std::string_view> owned;
  owned.reserve(views->size());
  for (const std::string_view s : *views) owned.emplace_back(strings_.emplace_back(s));
  metadata_.emplace_back(key, GGUFValue(GGUFArray{std::move(owned)}));
}

void GGUFWriter::add_u32(const std::string& key, uint32_t v) { add(key, GGUFValue(GGUFValue::Variant(v))); }
void GGUFWriter::add_i32(const std::string& key, int32_t v) { add(key, GGUFValue(GGUFValue::Variant(v))); }
void GGUFWriter::add_f32(const std::string& key, float v) { add(key, GGUFValue(GGUFValue::Variant(v))); }
void GGUFWriter::add_bool(const std::string& key, bool v) {
  add(key, GGUFValue(GGUFValue::Variant(std::in_place_type<bool>, v)));
}
void GGUFWriter::add_string(const std::string& key, const std::string& v) {
  add(key, GGUFValue(GGUFValue::Variant(std::in_place_type<std::string>, v)));
}
void GGUFWriter::add_strings(const std::string& key, const std::vector<std::string>& v) {
  add(key, GGUFValue(GGUFArray{std::vector<std::string_view>(v.begin(), v.end())}));
}
void GGUFWriter::add_i32s(const std::string& key, const std::vector<int32_t>& v) { add(key, GGUFValue(GGUFArray{v})); }
void GGUFWriter::add_f32s(const std::string& key, const std::vector<float>& v) { add(key, GGUFValue(GGUFArray{v})); }

void GGUFWriter::add_tensor(std::string name, const Shape& shape, DType dtype, GGUFFillFn fill) {
  LTX_CHECK(ggml_type_of(dtype).has_value(), "synth", "tensor '", name, "': ", dtype_name(dtype),
            " has no GGUF type ltx writes");
  LTX_CHECK(shape.rank() >= 1 && shape.rank() <= 4, "synth", "tensor '", name, "': shape ", shape.str(),
            " (GGUF tensors have 1 to 4 dimensions)");
  for (const int64_t d : shape) LTX_CHECK(d > 0, "synth", "tensor '", name, "': shape ", shape.str());
  const auto block = static_cast<int64_t>(dtype_block_elems(dtype));
  LTX_CHECK(shape.dim(-1) % block == 0, "synth", "tensor '", name, "': rows of ", shape.dim(-1),
            " elements are not a whole number of ", dtype_name(dtype), " blocks of ", block);
  LTX_CHECK(tensor_names_.insert(name).second, "synth", "GGUF tensor '", name, "' added twice");
  PendingTensor t{std::move(name),
                  shape,
                  dtype,
                  std::move(fill),
                  align_up(data_bytes_, alignment_),
                  dtype_bytes_for(dtype, shape.numel())};
  data_bytes_ = t.offset + t.bytes;
  tensors_.push_back(std::move(t));
}

std::string GGUFWriter::header() const {
  Bytes b;
  b.out().append("GGUF", 4);
  b.pod(uint32_t{3});
  b.pod(static_cast<uint64_t>(tensors_.size()));
  b.pod(static_cast<uint64_t>(metadata_.size()));
  for (const auto& [key, value] : metadata_) {
    b.str(key);
    put_value(b, value);
  }
  for (const PendingTensor& t : tensors_) {
    b.str(t.name);
    b.pod(static_cast<uint32_t>(t.shape.rank()));
    for (int i = t.shape.rank() - 1; i >= 0; --i) b.pod(static_cast<uint64_t>(t.shape[i]));  // ne: innermost first
    b.pod(*ggml_type_of(t.dtype));
    b.pod(t.offset);
  }
  b.out().resize(align_up(b.out().size(), alignment_), '\0');
  return std::move(b.out());
}

uint64_t GGUFWriter::file_bytes() const { return header().size() + align_up(data_bytes_, alignment_); }

// Encodes the tensor chunk by chunk: the pool fills and encodes chunk k + 1 while chunk k is being written.
void GGUFWriter::write_tensor(int fd, uint64_t at, const PendingTensor& t,
                              const std::function<void(uint64_t)>& done) const {
  const int64_t numel = t.shape.numel();
  const auto block = static_cast<int64_t>(dtype_block_elems(t.dtype));
  const auto block_bytes = static_cast<int64_t>(dtype_block_bytes(t.dtype));
  const int64_t chunk = std::max(block, kChunkElems / block * block);
  std::vector<float> values(static_cast<size_t>(std::min(chunk, numel)));
  std::vector<std::byte> encoded[2];
  std::future<void> pending;  // declared after `encoded`, so it is waited for before they go
  int slot = 0;
  for (int64_t first = 0; first < numel; first += chunk) {
    const int64_t n_blocks = std::min(chunk, numel - first) / block;
    std::vector<std::byte>& out = encoded[slot];
    out.resize(static_cast<size_t>(n_blocks * block_bytes));
    parallel_for(n_blocks, std::max<int64_t>(1, 4096 / block), [&](int64_t b0, int64_t b1) {
      float* v = values.data() + b0 * block;
      t.fill(first + b0 * block, (b1 - b0) * block, v);
      quantize_row(t.dtype, v, out.data() + b0 * block_bytes, (b1 - b0) * block);
    });
    if (pending.valid()) pending.get();
    const uint64_t where = at + static_cast<uint64_t>(first / block * block_bytes);
    pending = std::async(std::launch::async,
                         [fd, where, &out, &t] { pwrite_all(fd, out.data(), out.size(), where, t.name); });
    done(out.size());
    slot ^= 1;
  }
  if (pending.valid()) pending.get();
}

uint64_t GGUFWriter::write(const std::string& path, const std::function<void(const std::string&)>& progress) const {
  const std::string head = header();
  const uint64_t total = head.size() + align_up(data_bytes_, alignment_);
  PartialFile file{path + ".partial"};
  file.fd = ::open(file.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  LTX_CHECK(file.fd >= 0, "synth", file.path, ": cannot create: ", std::strerror(errno));
  // The full size first: zero tensors and padding stay holes (a sparse file); data is written in place.
  LTX_CHECK(::ftruncate(file.fd, static_cast<off_t>(total)) == 0, "synth", file.path, ": cannot size to ", total,
            " bytes: ", std::strerror(errno));
  pwrite_all(file.fd, head.data(), head.size(), 0, file.path);

  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  say(path + ": " + std::to_string(tensors_.size()) + " tensors, " + gigabytes(total));
  uint64_t written = 0, next_report = data_bytes_ / 20;
  const auto done = [&](uint64_t bytes) {
    written += bytes;
    if (written < next_report || written >= data_bytes_) return;
    say(path + ": " + std::to_string(written * 100 / std::max<uint64_t>(data_bytes_, 1)) + "% (" + gigabytes(written) +
        " of " + gigabytes(data_bytes_) + ")");
    next_report = written + data_bytes_ / 20;
  };
  for (const PendingTensor& t : tensors_) {
    if (t.fill)
      write_tensor(file.fd, head.size() + t.offset, t, done);
    else
      done(t.bytes);
  }
  const int rc = ::close(file.fd);
  file.fd = -1;
  LTX_CHECK(rc == 0, "synth", file.path, ": close failed: ", std::strerror(errno));
  LTX_CHECK(std::rename(file.path.c_str(), path.c_str()) == 0, "synth", file.path, ": cannot rename to ", path, ": ",
            std::strerror(errno));
  file.keep = true;
  say(path + ": done, " + gigabytes(total));
  return total;
}

}  // namespace ltx::synth
