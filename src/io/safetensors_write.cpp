// The safetensors writer (the reader is in safetensors.cpp).
#include <algorithm>
#include <numeric>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json.h"
#include "io/safetensors.h"

namespace ltx {

void write_safetensors(const std::string& path, std::span<const std::pair<std::string, Tensor>> tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::set<std::string_view> names;
  for (const auto& [name, t] : tensors) {
    LTX_CHECK(!name.empty() && name != "__metadata__", "safetensors", path, ": invalid tensor name '", name, "'");
    LTX_CHECK(names.insert(name).second, "safetensors", path, ": tensor '", name, "' given twice");
    LTX_CHECK(t.defined(), "safetensors", path, ": tensor '", name, "' is undefined");
    LTX_CHECK(!dtype_is_quantized(t.dtype()), "safetensors", path, ": tensor '", name, "' is ", dtype_name(t.dtype()),
              ", which safetensors cannot store");
  }

  // Largest elements first, then by name: every offset stays a multiple of its element size with no gaps,
  // the layout the official writer produces (safetensors/src/tensor.rs, prepare()).
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const size_t ea = dtype_block_bytes(tensors[a].second.dtype());
    const size_t eb = dtype_block_bytes(tensors[b].second.dtype());
    return ea != eb ? ea > eb : tensors[a].first < tensors[b].first;
  });

  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i : order) {
    const Tensor& t = tensors[i].second;
    const uint64_t bytes = t.nbytes();
    header[tensors[i].first] = {{"dtype", safetensors_dtype_name(t.dtype())},
                                {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())},
                                {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // Spaces pad the header so the data section starts 8-byte aligned (the format's spec allows trailing spaces).
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');

  io::AtomicFile out(path);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  out.write(length, 8);
  out.write(text.data(), text.size());
  for (size_t i : order) {
    const Tensor t = tensors[i].second.contiguous();
    if (t.nbytes() > 0) out.write(t.raw(), t.nbytes());
  }
  out.commit();
}

}  // namespace ltx
