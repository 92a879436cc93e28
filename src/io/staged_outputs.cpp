#include "io/staged_outputs.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "core/error.h"

namespace ltx::io {

namespace fs = std::filesystem;

std::string StagedOutputs::temp_name(const std::string& path) {
  static std::atomic<int> counter{0};
  return path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

std::string StagedOutputs::file(const std::string& path) {
  entries_.push_back({temp_name(path), path, false});
  return entries_.back().temp;
}

std::vector<std::string> StagedOutputs::files_in(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    LTX_CHECK(fs::is_directory(dir, ec), "output", dir, " exists and is not a folder");
    for (const std::string& n : names) out.push_back(file((fs::path(dir) / n).string()));
    return out;
  }
  const std::string temp = temp_name(dir);
  LTX_CHECK(fs::create_directory(temp, ec), "output", "cannot create the folder ", temp, ": ", ec.message());
  entries_.push_back({temp, dir, true});
  for (const std::string& n : names) out.push_back((fs::path(temp) / n).string());
  return out;
}

void StagedOutputs::commit() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    std::error_code ec;
    fs::rename(entries_[i].temp, entries_[i].target, ec);
    if (!ec) continue;
    for (size_t j = 0; j < i; ++j) fs::remove_all(entries_[j].target, ec);  // undo: all or nothing
    fail("output", "cannot move " + entries_[i].temp + " to " + entries_[i].target + ": " + ec.message());
  }
  committed_ = true;
}

StagedOutputs::~StagedOutputs() {
  if (committed_) return;
  std::error_code ec;
  for (const Entry& e : entries_) fs::remove_all(e.temp, ec);
}

}  // namespace ltx::io
