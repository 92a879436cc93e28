// A test-only GGUF writer (ggml/docs/gguf.md layout), with hooks to produce corrupt variants.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ltx::test {

class GGUFWriter {
 public:
  uint32_t version = 3;
  uint64_t alignment = 32;  // used for layout; written only through add_u32("general.alignment", ...)
  std::string magic = "GGUF";
  int64_t n_tensors_override = -1;
  int64_t n_kv_override = -1;

  void add_u8(const std::string& k, uint8_t v) {
    kv(k, 0);
    put(v);
  }
  void add_i8(const std::string& k, int8_t v) {
    kv(k, 1);
    put(v);
  }
  void add_u16(const std::string& k, uint16_t v) {
    kv(k, 2);
    put(v);
  }
  void add_i16(const std::string& k, int16_t v) {
    kv(k, 3);
    put(v);
  }
  void add_u32(const std::string& k, uint32_t v) {
    kv(k, 4);
    put(v);
  }
  void add_i32(const std::string& k, int32_t v) {
    kv(k, 5);
    put(v);
  }
  void add_f32(const std::string& k, float v) {
    kv(k, 6);
    put(v);
  }
  void add_bool(const std::string& k, bool v) {
    kv(k, 7);
    put(static_cast<uint8_t>(v));
  }
  void add_string(const std::string& k, const std::string& v) {
    kv(k, 8);
    put_string(v);
  }
  void add_u64(const std::string& k, uint64_t v) {
    kv(k, 10);
    put(v);
  }
  void add_i64(const std::string& k, int64_t v) {
    kv(k, 11);
    put(v);
  }
  void add_f64(const std::string& k, double v) {
    kv(k, 12);
    put(v);
  }
  template <typename T>
  void add_array(const std::string& k, uint32_t elem_type, const std::vector<T>& values) {
    kv(k, 9);
    put(elem_type);
    put(static_cast<uint64_t>(values.size()));
    for (const T& v : values) put(v);
  }
  void add_string_array(const std::string& k, const std::vector<std::string>& values) {
    kv(k, 9);
    put(uint32_t{8});
    put(static_cast<uint64_t>(values.size()));
    for (const auto& v : values) put_string(v);
  }
  // Appends raw bytes to the metadata section (and counts one key-value) for hand-made corrupt entries.
  void add_raw_kv(const std::string& raw) {
    kv_bytes_ += raw;
    ++n_kv_;
  }

  // ne in ggml order (innermost first). offset < 0: laid out after the previous tensor, aligned.
  void add_tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t ggml_type, std::string data,
                  int64_t offset = -1) {
    tensors_.push_back({name, std::move(ne), ggml_type, std::move(data), offset});
  }

  std::string build() const {
    std::string out = magic;
    append(out, version);
    append(out, n_tensors_override >= 0 ? static_cast<uint64_t>(n_tensors_override) : tensors_.size());
    append(out, n_kv_override >= 0 ? static_cast<uint64_t>(n_kv_override) : n_kv_);
    out += kv_bytes_;
    std::string data;
    for (const auto& t : tensors_) {
      data.append((alignment - data.size() % alignment) % alignment, '\0');
      append_string(out, t.name);
      append(out, static_cast<uint32_t>(t.ne.size()));
      for (uint64_t d : t.ne) append(out, d);
      append(out, t.type);
      append(out, t.offset >= 0 ? static_cast<uint64_t>(t.offset) : static_cast<uint64_t>(data.size()));
      data += t.data;
    }
    out.append((alignment - out.size() % alignment) % alignment, '\0');
    return out + data;
  }

 private:
  struct TensorEntry {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
    std::string data;
    int64_t offset;
  };

  template <typename T>
  static void append(std::string& out, const T& v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  }
  static void append_string(std::string& out, const std::string& s) {
    append(out, static_cast<uint64_t>(s.size()));
    out += s;
  }
  template <typename T>
  void put(const T& v) {
    append(kv_bytes_, v);
  }
  void put_string(const std::string& s) { append_string(kv_bytes_, s); }
  void kv(const std::string& key, uint32_t type) {
    put_string(key);
    put(type);
    ++n_kv_;
  }

  std::string kv_bytes_;
  uint64_t n_kv_ = 0;
  std::vector<TensorEntry> tensors_;
};

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace ltx::test
