#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "io/json.h"
#include "io/mapped_tensor.h"

namespace ltx {
namespace {

// The official reader refuses headers above 100 MB (safetensors/src/tensor.rs, MAX_HEADER_SIZE).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeName {
  std::string_view name;
  DType dtype;
};
constexpr DTypeName kDTypeNames[] = {
    {"F32", DType::F32}, {"BF16", DType::BF16}, {"F16", DType::F16},         {"I32", DType::I32},
    {"I64", DType::I64}, {"U8", DType::U8},     {"F8_E4M3", DType::F8_E4M3}, {"F8_E5M2", DType::F8_E5M2},
};
// Valid safetensors dtypes (safetensors/src/tensor.rs, enum Dtype) that ltx has no DType for.
constexpr std::string_view kUnsupportedDTypes[] = {"BOOL", "I8", "I16",     "U16",     "U32",     "U64",
                                                   "F64",  "F4", "F6_E2M3", "F6_E3M2", "F8_E8M0", "C64"};

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  fail("safetensors", path + ": " + problem);
}

DType parse_dtype(const std::string& path, const std::string& tensor, const Json& j) {
  if (!j.is_string()) bad(path, "tensor '" + tensor + "': \"dtype\" must be a string");
  const auto& name = j.get_ref<const std::string&>();
  for (const auto& d : kDTypeNames)
    if (d.name == name) return d.dtype;
  for (auto u : kUnsupportedDTypes)
    if (u == name) bad(path, "tensor '" + tensor + "': dtype " + name + " is not supported by ltx");
  bad(path, "tensor '" + tensor + "': unknown dtype '" + name + "'");
}

// Returns the shape; `numel` receives the element count, checked against overflow.
Shape parse_shape(const std::string& path, const std::string& tensor, const Json& j, uint64_t& numel) {
  if (!j.is_array()) bad(path, "tensor '" + tensor + "': \"shape\" must be an array");
  if (j.size() > static_cast<size_t>(kMaxRank))
    bad(path, "tensor '" + tensor + "': rank " + std::to_string(j.size()) + " exceeds ltx's maximum of " +
                  std::to_string(kMaxRank));
  Shape shape;
  numel = 1;
  for (const auto& d : j) {
    if (d.is_number_integer() && !d.is_number_unsigned())
      bad(path, "tensor '" + tensor + "': negative dimension " + d.dump());
    if (!d.is_number_unsigned()) bad(path, "tensor '" + tensor + "': dimension " + d.dump() + " is not an integer");
    const auto v = d.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || __builtin_mul_overflow(numel, v, &numel) ||
        numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      bad(path, "tensor '" + tensor + "': shape " + j.dump() + " has too many elements");
    shape.push_back(static_cast<int64_t>(v));
  }
  return shape;
}

TensorInfo parse_entry(const std::string& path, const std::string& name, const Json& j, uint64_t data_bytes) {
  if (!j.is_object()) bad(path, "entry '" + name + "' is not an object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!j.contains(key)) bad(path, "tensor '" + name + "': missing \"" + key + "\"");
  TensorInfo t;
  t.name = name;
  t.dtype = parse_dtype(path, name, j["dtype"]);
  uint64_t numel = 0;
  t.shape = parse_shape(path, name, j["shape"], numel);

  const Json& off = j["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    bad(path, "tensor '" + name + "': \"data_offsets\" must be two non-negative integers, got " + off.dump());
  t.begin = off[0].get<uint64_t>();
  t.end = off[1].get<uint64_t>();
  if (t.begin > t.end)
    bad(path,
        "tensor '" + name + "': data_offsets begin " + std::to_string(t.begin) + " > end " + std::to_string(t.end));
  if (t.end > data_bytes)
    bad(path, "tensor '" + name + "': data_offsets end " + std::to_string(t.end) + " is beyond the data section of " +
                  std::to_string(data_bytes) + " bytes (truncated file?)");
  uint64_t expected = 0;
  if (__builtin_mul_overflow(numel, dtype_block_bytes(t.dtype), &expected) || expected != t.end - t.begin)
    bad(path, "tensor '" + name + "': byte range of " + std::to_string(t.end - t.begin) + " bytes does not match " +
                  std::string(dtype_name(t.dtype)) + t.shape.str());
  return t;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const Json& j) {
  if (!j.is_object()) bad(path, "\"__metadata__\" must be an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) bad(path, "\"__metadata__\" value for '" + key + "' is not a string");
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

void check_no_overlap(const std::string& path, const std::vector<TensorInfo>& tensors) {
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : tensors)
    if (t.end > t.begin) by_offset.push_back(&t);  // empty tensors occupy no bytes
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      bad(path, "tensors '" + by_offset[i - 1]->name + "' and '" + by_offset[i]->name + "' have overlapping bytes");
}

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const auto& d : kDTypeNames)
    if (d.dtype == dtype) return d.name;
  fail("safetensors", "dtype " + std::string(dtype_name(dtype)) + " cannot be stored in safetensors");
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.file_ = MappedFile::open(path);
  const uint64_t size = f.file_->size();
  if (size < 8) bad(path, "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");

  // The header length is a little-endian u64 (the format's spec); assemble it bytewise to be endian-neutral.
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | static_cast<uint8_t>(f.file_->data()[i]);
  if (header_bytes > kMaxHeaderBytes)
    bad(path, "header length " + std::to_string(header_bytes) + " is implausibly large (limit " +
                  std::to_string(kMaxHeaderBytes) + ")");
  if (header_bytes > size - 8)
    bad(path, "header length " + std::to_string(header_bytes) + " exceeds the file size of " + std::to_string(size) +
                  " bytes (truncated file?)");

  const std::string_view text(reinterpret_cast<const char*>(f.file_->data()) + 8, header_bytes);
  const Json header = parse_json(text, path + ": safetensors header");
  if (!header.is_object()) bad(path, "header is not a JSON object");

  f.data_start_ = 8 + header_bytes;
  const uint64_t data_bytes = size - f.data_start_;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__")
      f.metadata_ = parse_metadata(path, value);
    else
      f.tensors_.push_back(parse_entry(path, key, value, data_bytes));
  }
  // nlohmann's object is a std::map, so items() already come in name order.
  check_no_overlap(path, f.tensors_);
  f.storage_ = io::storage_of_mapping(f.file_);
  return f;
}

bool SafetensorsFile::contains(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name;
}

const TensorInfo& SafetensorsFile::info(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  if (it == tensors_.end() || it->name != name) bad(path_, "no tensor named '" + std::string(name) + "'");
  return *it;
}

Tensor SafetensorsFile::get(std::string_view name) const {
  const TensorInfo& t = info(name);
  return io::mapped_tensor(storage_, data_start_ + t.begin, t.dtype, t.shape);
}

}  // namespace ltx
