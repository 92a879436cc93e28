#include "server/job.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <chrono>

#include "ltx/error.hpp"

namespace ltx::server {
namespace {

constexpr std::string_view kIdPrefix = "video_";
constexpr size_t kIdHexDigits = 32;

constexpr std::array<std::pair<JobStatus, const char*>, 5> kStatusNames = {{{JobStatus::Queued, "queued"},
                                                                            {JobStatus::InProgress, "in_progress"},
                                                                            {JobStatus::Completed, "completed"},
                                                                            {JobStatus::Failed, "failed"},
                                                                            {JobStatus::Cancelled, "cancelled"}}};

Json seconds_or_null(int64_t t) { return t > 0 ? Json(t) : Json(nullptr); }

int64_t seconds_from(const Json& j, const char* field) {
  const Json& v = j.at(field);
  return v.is_null() ? 0 : v.get<int64_t>();
}

}  // namespace

const char* status_name(JobStatus status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "unknown";
}

bool is_finished(JobStatus status) {
  return status == JobStatus::Completed || status == JobStatus::Failed || status == JobStatus::Cancelled;
}

Json job_to_json(const Job& job) {
  Json j = {{"id", job.id},
            {"object", "video"},
            {"model", job.model},
            {"status", status_name(job.status)},
            {"progress", job.progress},
            {"stage", job.stage.empty() ? Json(nullptr) : Json(job.stage)},
            {"created_at", job.created_at},
            {"started_at", seconds_or_null(job.started_at)},
            {"completed_at", seconds_or_null(job.completed_at)},
            {"videos", job.videos},
            {"error", nullptr}};
  // The request's fields sit beside the status, as the OpenAI videos object has prompt, size and seconds.
  for (const auto& [key, value] : job.request.items()) j[key] = value;
  if (job.error) j["error"] = {{"code", job.error->code}, {"message", job.error->message}};
  return j;
}

Job job_from_json(const Json& j) {
  try {
    Job job;
    job.id = j.at("id").get<std::string>();
    if (!is_job_id(job.id)) throw Error("serve", "a job record has the id '" + job.id + "'");
    job.model = j.at("model").get<std::string>();
    const std::string status = j.at("status").get<std::string>();
    bool known = false;
    for (const auto& [s, name] : kStatusNames)
      if (status == name) job.status = s, known = true;
    if (!known) throw Error("serve", "job " + job.id + " has the status '" + status + "'");
    job.progress = j.at("progress").get<int>();
    job.created_at = j.at("created_at").get<int64_t>();
    job.started_at = seconds_from(j, "started_at");
    job.completed_at = seconds_from(j, "completed_at");
    job.videos = j.at("videos").get<int64_t>();
    if (!j.at("error").is_null())
      job.error = JobError{j["error"].at("code").get<std::string>(), j["error"].at("message").get<std::string>()};
    static const std::set<std::string> own = {"id",         "object",     "model",        "status", "progress", "stage",
                                              "created_at", "started_at", "completed_at", "videos", "error"};
    job.request = Json::object();
    for (const auto& [key, value] : j.items())
      if (!own.count(key)) job.request[key] = value;
    return job;
  } catch (const Json::exception& e) {
    throw Error("serve", std::string("a job record is malformed: ") + e.what());
  }
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_job_id(std::string_view id) {
  if (id.size() != kIdPrefix.size() + kIdHexDigits || id.substr(0, kIdPrefix.size()) != kIdPrefix) return false;
  for (const char c : id.substr(kIdPrefix.size()))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string new_job_id() {
  std::array<unsigned char, kIdHexDigits / 2> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("serve", "the system's random source failed", ErrorCategory::Internal);
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(kIdPrefix);
  for (const unsigned char b : bytes) {
    id += kHex[b >> 4];
    id += kHex[b & 15];
  }
  return id;
}

}  // namespace ltx::server
