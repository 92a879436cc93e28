// The jobs of `ltx serve` and their folder: every job's record in memory, the index of all of them written
// atomically to RESULTS/index.json at each change of status, each job's files in RESULTS/<id>/. Opening a folder
// that a stopped server left recovers it: jobs it had queued or running are marked failed (their partial files
// removed), never lost silently; completed jobs whose files are gone are marked failed too.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/job.h"

namespace ltx::server {

class JobStore {
 public:
  // Makes the folder when it does not exist; throws ltx::Error naming it when it cannot be used.
  explicit JobStore(std::string results_dir);

  const std::string& results_dir() const { return results_dir_; }
  // RESULTS/<id>; only ids that pass is_job_id() ever reach here.
  std::string job_dir(const std::string& id) const;

  void add(const Job& job);
  std::optional<Job> get(const std::string& id) const;
  // How a change reaches the index: not at all (progress), rewritten without waiting for the disk (a state a
  // crash may lose because recovery treats it like the one before: queued -> in progress), or rewritten and
  // synced before the call returns.
  enum class Persist { No, Unsynced, Synced };
  // Applies `change` to the job under the store's lock. False when the job no longer exists (deleted meanwhile).
  bool update(const std::string& id, const std::function<void(Job&)>& change, Persist persist = Persist::Synced);
  // Removes the record and the job's folder.
  bool remove(const std::string& id);

  struct Page {
    std::vector<Job> jobs;
    bool has_more = false;
  };
  // Newest first (or oldest first), starting after job `after` when it is given.
  Page list(size_t limit, const std::string& after, bool newest_first) const;
  size_t size() const;

 private:
  void recover();
  void write_index(Persist persist = Persist::Synced) const;  // caller holds mutex_

  std::string results_dir_;
  mutable std::mutex mutex_;
  std::map<std::string, Job> jobs_;
  std::vector<std::string> order_;  // ids by creation
};

}  // namespace ltx::server
