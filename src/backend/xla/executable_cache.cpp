#include "backend/xla/executable_cache.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace ltx::xla {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "ltx-xla-executable 1\n";

// FNV-1a, 64 bits: names the file; the key inside the file (the whole program included) is what decides.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The host CPU as XLA's CPU compiler targets it: the first model line and the feature flags of /proc/cpuinfo
// ("model name" and "flags" on x86, "CPU part" and "Features" on ARM).
std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && (line.rfind("model name", 0) == 0 || line.rfind("CPU part", 0) == 0)) model = line;
    if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
  }
  return model + "|" + hex(fnv1a(flags));
}

std::string xla_flags() {
  const char* flags = std::getenv("XLA_FLAGS");  // they change what XLA generates
  return flags != nullptr ? flags : "";
}

std::string plugin_file(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  const auto time = fs::last_write_time(path, ec).time_since_epoch().count();
  return path + "|" + std::to_string(ec ? 0 : size) + "|" + std::to_string(time);
}

}  // namespace

ExecutableCache::ExecutableCache(const PjrtRuntime& runtime, std::string dir)
    : runtime_(runtime), dir_(dir.empty() ? "" : dir + "/xla") {
  identity_ = "plugin " + plugin_file(runtime.plugin_path()) + "\napi " + runtime.api_version() + "\nplatform " +
              runtime.platform() + " " + runtime.platform_version() + "\ndevice " + runtime.device_kind() + "\ncpu " +
              host_cpu() + "\noptions " + hex(fnv1a(runtime.compile_options())) + "\nXLA_FLAGS " + xla_flags() + "\n";
}

std::shared_ptr<const Executable> ExecutableCache::get(const std::string& mlir, const std::string& what) const {
  // The whole program is part of the key (the file repeats it), so only the same program loads.
  const std::string key = identity_ + "program " + std::to_string(mlir.size()) + "\n" + mlir;
  std::lock_guard lock(mutex_);
  if (auto it = in_memory_.find(key); it != in_memory_.end()) {
    ++reused_;
    return it->second;
  }
  std::shared_ptr<const Executable> executable = load_or_compile(key, mlir, what);
  in_memory_.emplace(key, executable);
  return executable;
}

std::unique_ptr<Executable> ExecutableCache::load_or_compile(const std::string& key, const std::string& mlir,
                                                             const std::string& what) const {
  if (dir_.empty()) {
    ++compiled_;
    return runtime_.compile(mlir, what);
  }
  const fs::path file = fs::path(dir_) / (hex(fnv1a(key)) + ".pjrt");
  if (std::ifstream in{file, std::ios::binary}) {
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const std::string header = kMagic + key;
    if (bytes.compare(0, header.size(), header) == 0) {
      try {
        auto loaded = runtime_.deserialize(bytes.substr(header.size()));
        ++loaded_;
        return loaded;
      } catch (const Error&) {  // truncated or corrupt: compiled again below
      }
    }
    ++rejected_;
  }
  auto executable = runtime_.compile(mlir, what);
  ++compiled_;
  store(file, key, *executable);
  return executable;
}

void ExecutableCache::store(const fs::path& file, const std::string& key, const Executable& executable) const {
  // A cache that cannot be written (no space, a plugin that cannot serialize) only costs the next process a compile.
  const fs::path temporary = file.string() + ".tmp" + std::to_string(::getpid());
  std::error_code ec;
  try {
    const std::string bytes = runtime_.serialize(executable);
    fs::create_directories(dir_, ec);
    std::ofstream out(temporary, std::ios::binary);
    out << kMagic << key << bytes;
    out.close();
    if (!out) ec = std::make_error_code(std::errc::io_error);
  } catch (const Error&) {
    ec = std::make_error_code(std::errc::not_supported);
  }
  if (!ec) fs::rename(temporary, file, ec);
  if (ec) fs::remove(temporary, ec);
}

}  // namespace ltx::xla
