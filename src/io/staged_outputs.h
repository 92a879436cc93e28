// Several output files written all-or-nothing: each is written under a temporary name beside its target (a
// folder that does not exist yet is built as a temporary folder), and commit() renames them all into place. A
// run that fails before commit leaves nothing: the destructor removes every temporary, and a commit that fails
// half way removes what it had already renamed.
#pragma once

#include <string>
#include <vector>

namespace ltx::io {

class StagedOutputs {
 public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;
  ~StagedOutputs();

  // The path to write the content of `path` to.
  std::string file(const std::string& path);
  // The paths to write files `names` of folder `dir` to: inside a temporary folder renamed to `dir` on commit
  // when `dir` does not exist, else temporary names inside `dir`. Throws when `dir` is something else.
  std::vector<std::string> files_in(const std::string& dir, const std::vector<std::string>& names);

  // Renames everything into place, in the order staged; throws ltx::Error("output", ...) naming the file.
  void commit();

 private:
  struct Entry {
    std::string temp, target;
    bool folder = false;
  };
  std::string temp_name(const std::string& path);
  std::vector<Entry> entries_;
  bool committed_ = false;
};

}  // namespace ltx::io
