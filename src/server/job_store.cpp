#include "server/job_store.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "io/atomic_file.h"
#include "ltx/error.hpp"
#include "server/api_error.h"

namespace ltx::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kIndexName = "index.json";

}  // namespace

JobStore::JobStore(std::string results_dir) : results_dir_(std::move(results_dir)) {
  std::error_code ec;
  fs::create_directories(results_dir_, ec);
  if (!fs::is_directory(results_dir_))
    throw Error("serve", "--results-dir " + results_dir_ + " is not a folder that can be made or used",
                ErrorCategory::Io);
  recover();
}

std::string JobStore::job_dir(const std::string& id) const { return (fs::path(results_dir_) / id).string(); }

void JobStore::recover() {
  const fs::path index = fs::path(results_dir_) / kIndexName;
  if (fs::exists(index)) {
    const Json records = read_json_file(index.string(), "serve");
    if (!records.is_array()) throw Error("serve", index.string() + " is not a JSON array of jobs", ErrorCategory::Io);
    const int64_t now = unix_seconds();
    for (const Json& record : records) {
      Job job = job_from_json(record);
      if (!is_finished(job.status)) {
        job.error = JobError{"server_restarted", std::string("the server stopped while this job was ") +
                                                     status_name(job.status) + "; submit it again"};
        job.status = JobStatus::Failed;
        job.stage.clear();
        job.completed_at = now;
        std::error_code ec;
        fs::remove_all(job_dir(job.id), ec);
      } else if (job.status == JobStatus::Completed && !fs::is_directory(job_dir(job.id))) {
        job.status = JobStatus::Failed;
        job.videos = 0;
        job.error = JobError{"files_missing", "the job's files are gone from the results folder"};
      }
      if (jobs_.count(job.id)) continue;
      order_.push_back(job.id);
      jobs_.emplace(job.id, std::move(job));
    }
  }
  // A job folder the index does not name was being made when the server stopped.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(results_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && is_job_id(name) && !jobs_.count(name)) fs::remove_all(entry.path(), ec);
  }
  std::lock_guard lock(mutex_);
  write_index();
}

void JobStore::write_index(Persist persist) const {
  Json records = Json::array();
  for (const std::string& id : order_) records.push_back(job_to_json(jobs_.at(id)));
  const std::string text = to_text(records);
  io::AtomicFile file((fs::path(results_dir_) / kIndexName).string(), persist == Persist::Synced
                                                                          ? io::AtomicFile::Durability::Synced
                                                                          : io::AtomicFile::Durability::Unsynced);
  file.write(text.data(), text.size());
  file.commit();
}

void JobStore::add(const Job& job) {
  std::lock_guard lock(mutex_);
  jobs_[job.id] = job;
  order_.push_back(job.id);
  write_index();
}

std::optional<Job> JobStore::get(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return std::nullopt;
  return it->second;
}

bool JobStore::update(const std::string& id, const std::function<void(Job&)>& change, Persist persist) {
  std::lock_guard lock(mutex_);
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return false;
  change(it->second);
  if (persist != Persist::No) write_index(persist);
  return true;
}

bool JobStore::remove(const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    if (!jobs_.erase(id)) return false;
    order_.erase(std::find(order_.begin(), order_.end(), id));
    write_index();
  }
  std::error_code ec;
  fs::remove_all(job_dir(id), ec);
  return true;
}

JobStore::Page JobStore::list(size_t limit, const std::string& after, bool newest_first) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> ids = order_;
  if (newest_first) std::reverse(ids.begin(), ids.end());
  auto it = ids.begin();
  if (!after.empty()) {
    it = std::find(ids.begin(), ids.end(), after);
    if (it != ids.end()) ++it;
  }
  Page page;
  for (; it != ids.end() && page.jobs.size() < limit; ++it) page.jobs.push_back(jobs_.at(*it));
  page.has_more = it != ids.end();
  return page;
}

size_t JobStore::size() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

}  // namespace ltx::server
