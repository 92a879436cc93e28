// `ltx inspect FILE`: a model file's metadata and tensor list (GGUF detected by its magic, else safetensors).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "commands.h"
#include "core/error.h"
#include "io/gguf.h"
#include "io/safetensors.h"

namespace ltx::cli {
namespace {

constexpr size_t kMaxValueChars = 160;  // long values (a checkpoint's config JSON) are cut to this
constexpr size_t kMaxArrayItems = 5;

std::string summarize(const std::string& text) {
  if (text.size() <= kMaxValueChars) return text;
  return text.substr(0, kMaxValueChars) + "... (" + std::to_string(text.size()) + " chars)";
}

bool has_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LTX_CHECK(in.good(), "inspect", path, ": cannot open: ", std::strerror(errno));
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

void inspect_gguf(const std::string& path) {
  const GGUFFile f = GGUFFile::open(path);
  std::printf("%s: GGUF v%u, alignment %llu, data at byte %llu\n", path.c_str(), f.version(),
              static_cast<unsigned long long>(f.alignment()), static_cast<unsigned long long>(f.data_offset()));
  std::printf("metadata (%zu):\n", f.metadata().size());
  for (const auto& [key, value] : f.metadata())
    std::printf("  %s: %s = %s\n", key.c_str(), std::string(gguf_type_name(value.type())).c_str(),
                summarize(value.str(kMaxArrayItems)).c_str());
  std::printf("tensors (%zu):\n", f.tensors().size());
  for (const auto& t : f.tensors())
    std::printf("  %s %s%s %s\n", t.name.c_str(), ggml_type_name(t.ggml_type).c_str(), t.dtype ? "" : " (unsupported)",
                t.shape.str().c_str());
}

void inspect_safetensors(const std::string& path) {
  const SafetensorsFile f = SafetensorsFile::open(path);
  std::printf("%s: safetensors\n", path.c_str());
  std::printf("metadata (%zu):\n", f.metadata().size());
  for (const auto& [key, value] : f.metadata()) std::printf("  %s = %s\n", key.c_str(), summarize(value).c_str());
  std::printf("tensors (%zu):\n", f.tensors().size());
  for (const auto& t : f.tensors())
    std::printf("  %s %s %s\n", t.name.c_str(), std::string(dtype_name(t.dtype)).c_str(), t.shape.str().c_str());
}

}  // namespace

int inspect(Args args) {
  LTX_CHECK(args.size() == 1, "inspect", "usage: ltx inspect FILE");
  const std::string path = args[0];
  if (has_gguf_magic(path))
    inspect_gguf(path);
  else
    inspect_safetensors(path);
  return 0;
}

}  // namespace ltx::cli
