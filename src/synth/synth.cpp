#include "synth/synth.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "synth/fp8.h"
#include "synth/gguf_formats.h"
#include "synth/safetensors_stream.h"
#include "synth/values.h"

namespace ltx::synth {
namespace {

namespace fs = std::filesystem;

constexpr const char* kComponent = "synth";
// huggingface_hub serialization/_base.py MAX_SHARD_SIZE "5GB" (10^9 bytes), the size transformers' shards keep to.
constexpr uint64_t kMaxShardBytes = 5'000'000'000ull;

struct ModelFormats {
  std::string_view model;
  std::vector<std::string> formats;
};

const std::vector<ModelFormats>& format_table() {
  static const std::vector<ModelFormats> table = {
      {"ltx-2.3-22b", {"bf16", "fp8", "gguf-q8_0", "gguf-q4_k", "gguf-q4_k_m"}},
      {"ltx-2-19b", {"bf16", "fp8", "gguf-q8_0", "gguf-q4_k", "gguf-q4_k_m"}},
      {"gemma-3-12b", {"hf-bf16", "gguf-q4_k_m"}},
      {"upsampler-x2", {"bf16"}},
      {"distilled-lora", {"bf16"}},
  };
  return table;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

void check_format(const std::string& model, const std::string& format) {
  std::vector<std::string> all;
  for (const ModelFormats& m : format_table())
    for (const std::string& f : m.formats)
      if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
  LTX_CHECK(std::find(all.begin(), all.end(), format) != all.end(), kComponent, "unknown format '", format,
            "'; formats: ", join(all));
  const std::vector<std::string> valid = synth_formats(model);
  LTX_CHECK(std::find(valid.begin(), valid.end(), format) != valid.end(), kComponent, "format '", format,
            "' is not available for model '", model, "'; its formats: ", join(valid));
}

// The layout's canonical file name: the first `files` entry up to any note, without a repository ("google/...").
std::string canonical_name(const Layout& layout) {
  LTX_CHECK(!layout.files.empty(), kComponent, "layout ", layout.name, " names no published file");
  std::string name = layout.files.front().substr(0, layout.files.front().find(' '));
  return name.substr(name.rfind('/') + 1);
}

std::string stem(const std::string& file) {
  constexpr std::string_view kExtension = ".safetensors";
  return std::string_view(file).ends_with(kExtension) ? file.substr(0, file.size() - kExtension.size()) : file;
}

// The nearest folder of `dir` that exists (dir itself when it does).
fs::path existing_ancestor(fs::path dir) {
  dir = fs::absolute(dir);
  std::error_code ec;
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path()) dir = dir.parent_path();
  return dir;
}

// Checks the output folder can be made and written, and holds `bytes` (unless zeros), before anything is written.
void check_destination(const std::string& dir, uint64_t bytes, const SynthOptions& o, bool estimated) {
  const fs::path base = existing_ancestor(dir);
  std::error_code ec;
  LTX_CHECK(fs::is_directory(base, ec), kComponent, "cannot write into ", dir, ": ", base.string(), " is not a folder");
  LTX_CHECK(::access(base.c_str(), W_OK) == 0, kComponent, "cannot write into ", dir, ": ", base.string(), ": ",
            std::strerror(errno));
  if (o.zeros) return;  // sparse files: only the headers take space
  struct statvfs st {};
  LTX_CHECK(::statvfs(base.c_str(), &st) == 0, kComponent, "statvfs ", base.string(), ": ", std::strerror(errno));
  const uint64_t available = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
  LTX_CHECK(available >= bytes, kComponent, "not enough disk space in ", dir, ": ", format_bytes(available),
            " free, the stand-in needs ", estimated ? "about " : "", format_bytes(bytes),
            " (--zeros writes sparse files that take almost none)");
}

fs::path make_out_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  LTX_CHECK(!ec && fs::is_directory(dir), kComponent, "cannot create the output folder ", dir, ": ",
            ec ? ec.message() : "not a folder");
  return dir;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  LTX_CHECK(out.good(), kComponent, "cannot write ", path.string(), ": ", std::strerror(errno));
}

std::vector<std::string> write_single_file(const Layout& layout, const SynthOptions& o, const ValueGenerator& values,
                                           const ProgressFn& say) {
  const bool fp8 = o.format == "fp8";
  const Layout out = fp8 ? fp8_layout(layout) : layout;
  const std::string name = fp8 ? stem(canonical_name(layout)) + "-fp8.safetensors" : canonical_name(layout);
  const std::vector<StreamedTensor> tensors = stand_in_tensors(out, values);
  const std::map<std::string, std::string> metadata = layout_file_metadata(out);
  check_destination(o.out_dir, safetensors_stream_size(tensors, metadata), o, false);
  const std::string path = (make_out_dir(o.out_dir) / name).string();
  write_safetensors_stream(path, tensors, metadata, say);
  return {path};
}

// Community GGUF names: the published stem with the quantization (e.g. ltx-2.3-22b-dev-Q8_0.gguf).
std::string gguf_name(const Layout& layout, const std::string& format) {
  std::string quant = format.substr(std::string_view("gguf-").size());
  std::transform(quant.begin(), quant.end(), quant.begin(), [](char c) { return c == 'k' ? 'K' : c == 'm' ? 'M' : c; });
  std::replace(quant.begin(), quant.end(), 'q', 'Q');
  return stem(canonical_name(layout)) + "-" + quant + ".gguf";
}

// For the disk check only: ggml's block sizes (Q8_0: 34 bytes per 32, Q4_K: 144 per 256; Q4_K_M mixes in Q6_K,
// 210 per 256), Q8_0 where rows are no whole K-blocks, 4 bytes for the small tensors kept unquantized.
uint64_t estimated_gguf_bytes(const Layout& layout, const std::string& format) {
  const bool ltx = layout.name != "gemma-3-12b";
  const double per_weight = format == "gguf-q8_0" ? 34.0 / 32 : format == "gguf-q4_k" ? 144.0 / 256 : 0.7;
  const int64_t block = format == "gguf-q8_0" ? 32 : 256;
  double bytes = 16e6;  // header, metadata, Gemma's vocabulary
  for (const TensorSpec& t : layout.tensors) {
    if (ltx && !t.name.starts_with("model.diffusion_model.")) continue;
    const auto n = static_cast<double>(t.shape.numel());
    if (t.shape.rank() >= 2 && n >= 1024)
      bytes += n * (t.shape.dim(-1) % block == 0 ? per_weight : 34.0 / 32);
    else
      bytes += n * 4;
  }
  return static_cast<uint64_t>(bytes);
}

std::vector<std::string> write_gguf_file(const Layout& layout, const SynthOptions& o, const ValueGenerator& values,
                                         const ProgressFn& say) {
  check_destination(o.out_dir, estimated_gguf_bytes(layout, o.format), o, true);
  const std::string path = (make_out_dir(o.out_dir) / gguf_name(layout, o.format)).string();
  // The GGUF writer streams to "<path>.partial" and renames it when complete (gguf_writer.h).
  write_gguf_stand_in(layout, o.format, values, path, say);
  return {path};
}

struct Shard {
  std::string file;
  std::vector<StreamedTensor> tensors;
};

// transformers' sharding: tensors in order, a new shard when the next would pass 5 GB, named
// model-0000N-of-0000M.safetensors (huggingface_hub serialization/_base.py, "-{idx:05d}-of-{n:05d}"); one shard
// is model.safetensors (a cut model).
std::vector<Shard> hf_shards(const Layout& layout, const ValueGenerator& values) {
  std::vector<Shard> shards;
  uint64_t bytes = 0;
  for (StreamedTensor& t : stand_in_tensors(layout, values)) {
    const uint64_t b = tensor_bytes(t.spec);
    if (shards.empty() || (bytes + b > kMaxShardBytes && !shards.back().tensors.empty())) {
      shards.emplace_back();
      bytes = 0;
    }
    shards.back().tensors.push_back(std::move(t));
    bytes += b;
  }
  if (shards.size() == 1) {  // save_pretrained writes an unsharded model as model.safetensors, with no index
    shards[0].file = "model.safetensors";
    return shards;
  }
  char name[64];
  for (size_t i = 0; i < shards.size(); ++i) {
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
    shards[i].file = name;
  }
  return shards;
}

// The tokenizer file's name in the folder: tokenizer.json or tokenizer.model, by its own name or extension.
std::string tokenizer_name(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  LTX_CHECK(ext == ".json" || ext == ".model", kComponent, "--tokenizer ", path,
            ": expected a tokenizer.json or tokenizer.model file");
  return ext == ".json" ? "tokenizer.json" : "tokenizer.model";
}

std::vector<std::string> write_hf_folder(const Layout& layout, const SynthOptions& o, const ValueGenerator& values,
                                         const ProgressFn& say) {
  // transformers' save_pretrained tags each shard {"format": "pt"} (modeling_utils.py).
  const std::map<std::string, std::string> shard_metadata = {{"format", "pt"}};
  const std::vector<Shard> shards = hf_shards(layout, values);
  uint64_t file_bytes = 1'000'000;  // config.json and the index
  uint64_t total_size = 0;
  Json weight_map = Json::object();
  for (const Shard& s : shards) {
    file_bytes += safetensors_stream_size(s.tensors, shard_metadata);
    for (const StreamedTensor& t : s.tensors) {
      total_size += tensor_bytes(t.spec);
      weight_map[t.spec.name] = s.file;
    }
  }
  if (!o.tokenizer.empty()) file_bytes += fs::file_size(o.tokenizer);
  check_destination(o.out_dir, file_bytes, o, false);

  const fs::path final_dir = make_out_dir(o.out_dir) / canonical_name(layout);
  const fs::path partial_dir = final_dir.string() + ".partial";
  std::error_code ec;
  fs::remove_all(partial_dir, ec);  // left by an interrupted run
  LTX_CHECK(fs::create_directory(partial_dir, ec) && !ec, kComponent, "cannot create ", partial_dir.string(), ": ",
            ec.message());
  std::vector<std::string> files;
  try {
    say(final_dir.string() + "/: " + std::to_string(shards.size()) + (shards.size() == 1 ? " file, " : " shards, ") +
        format_bytes(total_size) + " (written in " + partial_dir.filename().string() + "/, renamed when complete)");
    for (const Shard& s : shards) {
      write_safetensors_stream((partial_dir / s.file).string(), s.tensors, shard_metadata, say);
      files.push_back(s.file);
    }
    write_text(partial_dir / "config.json", layout.config_json.dump(2) + "\n");
    files.emplace_back("config.json");
    if (shards.size() > 1) {
      const Json index = {{"metadata", {{"total_size", total_size}}}, {"weight_map", weight_map}};
      write_text(partial_dir / "model.safetensors.index.json", index.dump(2) + "\n");
      files.emplace_back("model.safetensors.index.json");
    }
    if (!o.tokenizer.empty()) {
      const std::string name = tokenizer_name(o.tokenizer);
      fs::copy_file(o.tokenizer, partial_dir / name, fs::copy_options::overwrite_existing);
      files.push_back(name);
    } else {
      say("  no --tokenizer given: " + final_dir.string() +
          "/ has no tokenizer.json or tokenizer.model; copy Gemma 3's in, or run again with --tokenizer FILE");
    }
    if (fs::exists(final_dir)) fs::remove_all(final_dir);
    fs::rename(partial_dir, final_dir);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(partial_dir, ec);
    fail(kComponent, e.what());
  } catch (...) {
    fs::remove_all(partial_dir, ec);
    throw;
  }
  std::vector<std::string> paths;
  for (const std::string& f : files) paths.push_back((final_dir / f).string());
  return paths;
}

}  // namespace

std::vector<std::string> synth_formats(std::string_view model) {
  for (const ModelFormats& m : format_table())
    if (m.model == model) return m.formats;
  return {};
}

std::vector<std::string> write_stand_in(const SynthOptions& o, const ProgressFn& progress) {
  const ProgressFn say = progress ? progress : [](const std::string&) {};
  Layout layout = published_layout(o.model);  // throws naming the models
  check_format(o.model, o.format);
  LTX_CHECK(!o.out_dir.empty(), kComponent, "no output folder given (--out DIR)");
  const int64_t full_layers = layer_count(layout);
  if (o.layers != -1) layout = cut_layers(std::move(layout), o.layers);
  if (!o.tokenizer.empty()) {
    LTX_CHECK(o.format == "hf-bf16", kComponent, "--tokenizer is for --format hf-bf16 only");
    std::error_code ec;
    LTX_CHECK(fs::is_regular_file(o.tokenizer, ec), kComponent, "--tokenizer ", o.tokenizer, ": not a file");
    tokenizer_name(o.tokenizer);
  }

  const ValueGenerator values(o.seed, o.zeros);
  say(o.model + " " + o.format + " stand-in" +
      (o.layers != -1 ? " (first " + std::to_string(o.layers) + " of " + std::to_string(full_layers) + " layers)"
                      : "") +
      (o.zeros ? ", all zeros (sparse)" : ", seed " + std::to_string(o.seed)) + ", into " + o.out_dir);
  if (o.format == "hf-bf16") return write_hf_folder(layout, o, values, say);
  if (o.format.starts_with("gguf-")) return write_gguf_file(layout, o, values, say);
  return write_single_file(layout, o, values, say);
}

}  // namespace ltx::synth
