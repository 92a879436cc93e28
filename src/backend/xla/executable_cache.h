// Compiled executables kept in memory for the process (a program compiled again, e.g. a decoder graph built per
// call, is the same executable) and on disk, so a second process loads what the first compiled: one file per program in
// <cache folder>/xla/, named by a hash of its key: the StableHLO text, the compile options and XLA_FLAGS, the plugin
// (path, size, modification time, PJRT API version, platform and its version), the device kind and the host CPU
// (model and feature flags: XLA's CPU code is compiled for them). The file repeats the whole key, the program's text
// included; an entry whose key differs (another program under the same hash, another plugin) or that does not load
// (truncated, corrupt) is compiled again and rewritten, never trusted. Writes go to a temporary name, then rename.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backend/xla/pjrt_runtime.h"

namespace ltx::xla {

class ExecutableCache {
 public:
  // `dir` empty: no cache (every program compiles).
  ExecutableCache(const PjrtRuntime& runtime, std::string dir);

  // The executable of `mlir`: the one this process already has, else loaded from the disk's valid entry, else
  // compiled (and stored).
  std::shared_ptr<const Executable> get(const std::string& mlir, const std::string& what) const;

  struct Counts {
    int compiled = 0;  // programs compiled (no entry, or one that was not valid)
    int loaded = 0;    // programs loaded from an entry
    int reused = 0;    // programs this process had already
    int rejected = 0;  // entries found but not trusted (another key, or they did not load)
  };
  Counts counts() const { return {compiled_, loaded_, reused_, rejected_}; }
  const std::string& dir() const { return dir_; }

 private:
  const PjrtRuntime& runtime_;
  std::string dir_;
  std::string identity_;  // the key without the program: plugin, device, CPU
  void store(const std::filesystem::path& file, const std::string& key, const Executable& executable) const;
  std::unique_ptr<Executable> load_or_compile(const std::string& key, const std::string& mlir,
                                              const std::string& what) const;

  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const Executable>> in_memory_;  // by key
  mutable std::atomic<int> compiled_ = 0, loaded_ = 0, reused_ = 0, rejected_ = 0;
};

}  // namespace ltx::xla
