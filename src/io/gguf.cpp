#include "io/gguf.h"

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>

#include "core/error.h"
#include "io/mapped_tensor.h"

namespace ltx {
namespace {

struct GGMLType {
  uint32_t id;
  std::string_view name;
  uint64_t block_elems;
  uint64_t block_bytes;
  std::optional<DType> dtype;
};
// ggml_type ids and block sizes (ggml/include/ggml.h enum ggml_type; gguf-py GGML_QUANT_SIZES). Ids 4, 5 and
// 31-33, 36-38 were removed from ggml and are absent here.
constexpr GGMLType kGGMLTypes[] = {
    {0, "f32", 1, 4, DType::F32},
    {1, "f16", 1, 2, DType::F16},
    {2, "q4_0", 32, 18, DType::Q4_0},
    {3, "q4_1", 32, 20, {}},
    {6, "q5_0", 32, 22, DType::Q5_0},
    {7, "q5_1", 32, 24, {}},
    {8, "q8_0", 32, 34, DType::Q8_0},
    {9, "q8_1", 32, 40, {}},
    {10, "q2_k", 256, 84, {}},
    {11, "q3_k", 256, 110, {}},
    {12, "q4_k", 256, 144, DType::Q4_K},
    {13, "q5_k", 256, 176, DType::Q5_K},
    {14, "q6_k", 256, 210, DType::Q6_K},
    {15, "q8_k", 256, 292, {}},
    {16, "iq2_xxs", 256, 66, {}},
    {17, "iq2_xs", 256, 74, {}},
    {18, "iq3_xxs", 256, 98, {}},
    {19, "iq1_s", 256, 50, {}},
    {20, "iq4_nl", 32, 18, {}},
    {21, "iq3_s", 256, 110, {}},
    {22, "iq2_s", 256, 82, {}},
    {23, "iq4_xs", 256, 136, {}},
    {24, "i8", 1, 1, {}},
    {25, "i16", 1, 2, {}},
    {26, "i32", 1, 4, {}},
    {27, "i64", 1, 8, {}},
    {28, "f64", 1, 8, {}},
    {29, "iq1_m", 256, 56, {}},
    {30, "bf16", 1, 2, DType::BF16},
    {34, "tq1_0", 256, 54, {}},
    {35, "tq2_0", 256, 66, {}},
    {39, "mxfp4", 32, 17, {}},
};

const GGMLType* find_ggml_type(uint32_t id) {
  for (const auto& t : kGGMLTypes)
    if (t.id == id) return &t;
  return nullptr;
}

constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS

// Reads little-endian fields, checking every length against the bytes left before it reads.
class Cursor {
 public:
  Cursor(const std::string& path, const std::byte* data, uint64_t size) : path_(path), data_(data), size_(size) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }

  [[noreturn]] void bad(const std::string& problem) const { fail("gguf", path_ + ": " + problem); }

  void need(uint64_t n, const char* what) const {
    if (n > left())
      bad(std::string("truncated file: ") + what + " at offset " + std::to_string(pos_) + " needs " +
          std::to_string(n) + " bytes, only " + std::to_string(left()) + " remain");
  }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));  // GGUF is little-endian, as is every host ltx supports
    pos_ += sizeof(T);
    return v;
  }

  void read_into(void* out, uint64_t n, const char* what) {
    need(n, what);
    if (n > 0) std::memcpy(out, data_ + pos_, n);
    pos_ += n;
  }

  std::string string(const char* what) { return std::string(string_view(what)); }

  // A view of the file's bytes (the mapping outlives the parse).
  std::string_view string_view(const char* what) {
    const auto n = read<uint64_t>(what);
    need(n, what);
    const std::string_view s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

 private:
  const std::string& path_;
  const std::byte* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

template <typename T>
std::vector<T> read_array(Cursor& in, uint64_t count, const std::string& key) {
  if (count > in.left() / sizeof(T))
    in.bad("metadata '" + key + "': array of " + std::to_string(count) + " elements runs past the end of the file");
  std::vector<T> out(count);
  in.read_into(out.data(), count * sizeof(T), "array elements");  // little-endian, as every supported host
  return out;
}

GGUFArray read_array_value(Cursor& in, const std::string& key) {
  const auto elem = in.read<uint32_t>("array type");
  const auto count = in.read<uint64_t>("array length");
  switch (static_cast<GGUFType>(elem)) {
    case GGUFType::U8:
      return {read_array<uint8_t>(in, count, key)};
    case GGUFType::I8:
      return {read_array<int8_t>(in, count, key)};
    case GGUFType::U16:
      return {read_array<uint16_t>(in, count, key)};
    case GGUFType::I16:
      return {read_array<int16_t>(in, count, key)};
    case GGUFType::U32:
      return {read_array<uint32_t>(in, count, key)};
    case GGUFType::I32:
      return {read_array<int32_t>(in, count, key)};
    case GGUFType::F32:
      return {read_array<float>(in, count, key)};
    case GGUFType::U64:
      return {read_array<uint64_t>(in, count, key)};
    case GGUFType::I64:
      return {read_array<int64_t>(in, count, key)};
    case GGUFType::F64:
      return {read_array<double>(in, count, key)};
    case GGUFType::Bool: {
      const auto bytes = read_array<uint8_t>(in, count, key);
      return {std::vector<bool>(bytes.begin(), bytes.end())};
    }
    case GGUFType::String: {
      // Each string takes at least its 8-byte length, which bounds the count before anything is reserved.
      if (count > in.left() / 8)
        in.bad("metadata '" + key + "': array of " + std::to_string(count) + " strings cannot fit in the file");
      std::vector<std::string_view> out(count);
      for (uint64_t i = 0; i < count; ++i) out[i] = in.string_view("array string");
      return {std::move(out)};
    }
    case GGUFType::Array:
      in.bad("metadata '" + key + "': nested arrays are not supported");
  }
  in.bad("metadata '" + key + "': unknown array element type " + std::to_string(elem));
}

GGUFValue read_value(Cursor& in, const std::string& key) {
  const auto type = in.read<uint32_t>("value type");
  switch (static_cast<GGUFType>(type)) {
    case GGUFType::U8:
      return GGUFValue(in.read<uint8_t>("u8"));
    case GGUFType::I8:
      return GGUFValue(in.read<int8_t>("i8"));
    case GGUFType::U16:
      return GGUFValue(in.read<uint16_t>("u16"));
    case GGUFType::I16:
      return GGUFValue(in.read<int16_t>("i16"));
    case GGUFType::U32:
      return GGUFValue(in.read<uint32_t>("u32"));
    case GGUFType::I32:
      return GGUFValue(in.read<int32_t>("i32"));
    case GGUFType::F32:
      return GGUFValue(in.read<float>("f32"));
    case GGUFType::Bool:
      return GGUFValue(in.read<uint8_t>("bool") != 0);
    case GGUFType::String:
      return GGUFValue(in.string("string"));
    case GGUFType::Array:
      return GGUFValue(read_array_value(in, key));
    case GGUFType::U64:
      return GGUFValue(in.read<uint64_t>("u64"));
    case GGUFType::I64:
      return GGUFValue(in.read<int64_t>("i64"));
    case GGUFType::F64:
      return GGUFValue(in.read<double>("f64"));
  }
  in.bad("metadata '" + key + "': unknown value type " + std::to_string(type));
}

GGUFTensorInfo read_tensor_info(Cursor& in) {
  GGUFTensorInfo t;
  t.name = in.string("tensor name");
  const auto n_dims = in.read<uint32_t>("tensor rank");
  if (n_dims > kMaxDims)
    in.bad("tensor '" + t.name + "': " + std::to_string(n_dims) + " dimensions (GGUF allows at most 4)");
  uint64_t ne[kMaxDims] = {};
  uint64_t numel = 1, nonzero = 1;  // the dimensions other than zeros must not overflow either (Shape::numel)
  for (uint32_t i = 0; i < n_dims; ++i) {
    ne[i] = in.read<uint64_t>("tensor dimension");
    if (ne[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        __builtin_mul_overflow(numel, ne[i], &numel) ||
        numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (ne[i] != 0 && (__builtin_mul_overflow(nonzero, ne[i], &nonzero) ||
                        nonzero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))))
      in.bad("tensor '" + t.name + "': dimensions overflow");
  }
  for (uint32_t i = n_dims; i-- > 0;) t.shape.push_back(static_cast<int64_t>(ne[i]));
  t.ggml_type = in.read<uint32_t>("tensor type");
  t.offset = in.read<uint64_t>("tensor offset");

  if (const GGMLType* type = find_ggml_type(t.ggml_type)) {
    t.dtype = type->dtype;
    if (n_dims > 0 && ne[0] % type->block_elems != 0)
      in.bad("tensor '" + t.name + "': row of " + std::to_string(ne[0]) + " elements is not a whole number of " +
             std::string(type->name) + " blocks of " + std::to_string(type->block_elems));
    t.bytes = numel / type->block_elems * type->block_bytes;  // cannot overflow: block_bytes < 8 * block_elems
  }
  return t;
}

}  // namespace

std::string ggml_type_name(uint32_t ggml_type) {
  const GGMLType* t = find_ggml_type(ggml_type);
  return t ? std::string(t->name) : "type " + std::to_string(ggml_type);
}

std::optional<uint32_t> ggml_type_of(DType t) {
  for (const auto& g : kGGMLTypes)
    if (g.dtype == t) return g.id;
  return std::nullopt;
}

std::shared_ptr<const GGUFFile> GGUFFile::open_shared(const std::string& path) {
  struct Entry {
    std::filesystem::file_time_type time;
    uintmax_t size = 0;
    std::shared_ptr<const GGUFFile> file;
  };
  static std::mutex mu;
  static std::map<std::string, Entry> parsed;
  std::error_code ec;
  const auto time = std::filesystem::last_write_time(path, ec);
  const uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
  std::lock_guard<std::mutex> lock(mu);
  Entry& e = parsed[path];
  if (ec || !e.file || e.time != time || e.size != size) {
    e.file = std::make_shared<const GGUFFile>(open(path));  // throws for a missing or bad file, as open does
    e.time = time, e.size = size;
  }
  return e.file;
}

GGUFFile GGUFFile::open(const std::string& path) {
  GGUFFile f;
  f.path_ = path;
  f.file_ = MappedFile::open(path);
  Cursor in(path, f.file_->data(), f.file_->size());
  if (f.file_->size() < 4 || std::memcmp(f.file_->data(), "GGUF", 4) != 0)
    in.bad("not a GGUF file (the first 4 bytes are not \"GGUF\")");
  in.read<uint32_t>("magic");

  f.version_ = in.read<uint32_t>("version");
  if (f.version_ == 1) in.bad("GGUF version 1 is not supported (only versions 2 and 3)");
  if (f.version_ != 2 && f.version_ != 3)
    in.bad("unsupported GGUF version " + std::to_string(f.version_) + " (only versions 2 and 3)");
  const auto n_tensors = in.read<uint64_t>("tensor count");
  const auto n_kv = in.read<uint64_t>("metadata count");
  // Smallest encodings: a key-value is 8 + 4 + 1 bytes, a tensor info 8 + 4 + 4 + 8.
  if (n_kv > in.left() / 13) in.bad("metadata count " + std::to_string(n_kv) + " cannot fit in the file");
  if (n_tensors > in.left() / 24) in.bad("tensor count " + std::to_string(n_tensors) + " cannot fit in the file");

  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = in.string("metadata key");
    GGUFValue value = read_value(in, key);
    if (f.metadata_.count(key)) in.bad("metadata key '" + key + "' appears twice");
    f.metadata_.emplace(std::move(key), std::move(value));
  }
  if (const GGUFValue* a = f.find("general.alignment")) {
    if (a->type() != GGUFType::U32)
      in.bad("general.alignment must be u32, not " + std::string(gguf_type_name(a->type())));
    f.alignment_ = static_cast<uint64_t>(a->as_int());
    if (f.alignment_ == 0 || (f.alignment_ & (f.alignment_ - 1)) != 0)
      in.bad("general.alignment " + std::to_string(f.alignment_) + " is not a power of two");
  }

  f.tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    GGUFTensorInfo t = read_tensor_info(in);
    if (!f.index_.emplace(t.name, f.tensors_.size()).second) in.bad("tensor '" + t.name + "' appears twice");
    if (t.offset % f.alignment_ != 0)
      in.bad("tensor '" + t.name + "': offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
             std::to_string(f.alignment_));
    f.tensors_.push_back(std::move(t));
  }

  f.data_start_ = (in.pos() + f.alignment_ - 1) / f.alignment_ * f.alignment_;
  const uint64_t size = f.file_->size();
  for (const auto& t : f.tensors_) {
    if (t.bytes == 0) continue;
    if (f.data_start_ > size || t.offset > size - f.data_start_ || t.bytes > size - f.data_start_ - t.offset)
      in.bad("tensor '" + t.name + "': data (" + std::to_string(t.bytes) + " bytes at data offset " +
             std::to_string(t.offset) + ") extends beyond the end of the file (" + std::to_string(size) + " bytes)");
  }
  f.storage_ = io::storage_of_mapping(f.file_);
  return f;
}

const GGUFValue* GGUFFile::find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GGUFValue& GGUFFile::value(std::string_view key) const {
  const GGUFValue* v = find(key);
  LTX_CHECK(v != nullptr, "gguf", path_, ": no metadata key '", key, "'");
  return *v;
}

bool GGUFFile::contains(std::string_view name) const { return index_.find(name) != index_.end(); }

const GGUFTensorInfo& GGUFFile::info(std::string_view name) const {
  auto it = index_.find(name);
  LTX_CHECK(it != index_.end(), "gguf", path_, ": no tensor named '", name, "'");
  return tensors_[it->second];
}

Tensor GGUFFile::get(std::string_view name) const {
  const GGUFTensorInfo& t = info(name);
  LTX_CHECK(t.dtype.has_value(), "gguf", path_, ": tensor '", name, "' has ggml type ", ggml_type_name(t.ggml_type),
            ", which ltx does not support (supported: f32, f16, bf16, q8_0, q4_0, q5_0, q4_k, q5_k, q6_k)");
  return io::mapped_tensor(storage_, data_start_ + t.offset, *t.dtype, t.shape);
}

}  // namespace ltx
