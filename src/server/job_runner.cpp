#include "server/job_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "ltx/outputs.hpp"

namespace ltx::server {
namespace {

namespace fs = std::filesystem;

// The job's 0-100 from the engine's stages: the prompt encode is short, denoising is most of the work, the decode
// the rest (completion alone is 100).
int overall_progress(std::string_view stage, int64_t step, int64_t total) {
  const double f = total > 0 ? static_cast<double>(step) / static_cast<double>(total) : 0.0;
  if (stage == "encode prompt") return 1 + static_cast<int>(4 * f);
  if (stage == "denoise") return 5 + static_cast<int>(85 * f);
  if (stage == "decode") return 90 + static_cast<int>(9 * f);
  return -1;  // a stage that does not move the bar
}

void remove_dir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace

std::string result_path(const std::string& job_dir, const std::string& variant, int64_t index, int64_t items) {
  const char* name = variant == "audio" ? "audio.wav" : variant == "thumbnail" ? "thumbnail.png" : "video.mp4";
  return item_path((fs::path(job_dir) / name).string(), static_cast<size_t>(index), static_cast<size_t>(items));
}

JobRunner::JobRunner(Engine& engine, JobStore& store, JobEvents& events, size_t capacity)
    : engine_(engine), store_(store), events_(events), capacity_(capacity), worker_([this] { work(); }) {}

JobRunner::~JobRunner() { stop(); }

bool JobRunner::submit(const Job& job, GenerateRequest request) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= capacity_) return false;
    store_.add(job);
    events_.open(job.id);
    events_.append(job.id, {"status", job_to_json(job)});
    queue_.push_back({job.id, std::move(request)});
  }
  wake_.notify_one();
  return true;
}

bool JobRunner::cancel(const std::string& id) {
  bool running = false, dequeued = false;
  {
    std::lock_guard lock(mutex_);
    if (running_id_ == id) {
      running_token_.cancel();
      running = true;
    }
    for (auto it = queue_.begin(); !running && it != queue_.end(); ++it)
      if (it->id == id) {
        queue_.erase(it);
        dequeued = true;
        break;
      }
  }
  const JobError cancelled{"cancelled", "the job was cancelled"};
  if (dequeued) finish(id, JobStatus::Cancelled, cancelled, 0);
  if (running) {
    store_.update(id, [&](Job& j) {
      if (is_finished(j.status)) return;
      j.status = JobStatus::Cancelled;
      j.stage.clear();
      j.completed_at = unix_seconds();
      j.error = cancelled;
    });
    if (const auto job = store_.get(id)) events_.append(id, {"status", job_to_json(*job)});
  }
  return running || dequeued;
}

bool JobRunner::stopping() const {
  std::lock_guard lock(mutex_);
  return stopping_;
}

int JobRunner::retry_after_seconds() const {
  std::lock_guard lock(mutex_);
  return mean_job_seconds_ == 0 ? 5 : std::max(1, static_cast<int>(std::ceil(mean_job_seconds_)));
}

size_t JobRunner::waiting() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool JobRunner::busy() const {
  std::lock_guard lock(mutex_);
  return !running_id_.empty();
}

void JobRunner::stop() {
  std::deque<Queued> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
    running_token_.cancel();
    abandoned.swap(queue_);
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  for (const Queued& q : abandoned)
    finish(q.id, JobStatus::Failed,
           JobError{"server_stopped", "the server stopped before this job ran; submit it again"}, 0);
}

void JobRunner::work() {
  for (;;) {
    Queued job;
    CancellationToken token;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_id_ = job.id;
      running_token_ = token;
    }
    const auto t0 = std::chrono::steady_clock::now();
    run(job, token);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard lock(mutex_);
    running_id_.clear();
    mean_job_seconds_ = mean_job_seconds_ == 0 ? seconds : 0.8 * mean_job_seconds_ + 0.2 * seconds;
  }
}

void JobRunner::run(const Queued& queued, const CancellationToken& token) {
  const std::string& id = queued.id;
  const std::string dir = store_.job_dir(id);
  store_.update(
      id,
      [](Job& j) {
        if (j.status != JobStatus::Queued) return;
        j.status = JobStatus::InProgress;
        j.started_at = unix_seconds();
      },
      JobStore::Persist::Unsynced);
  if (const auto job = store_.get(id)) events_.append(id, {"status", job_to_json(*job)});

  const ProgressCallback progress = [&](const ProgressEvent& e) {
    if (e.kind == ProgressEvent::Kind::Note) return;  // notes name server-side files; clients get stages and steps
    const std::string stage(e.stage);
    const int p = overall_progress(stage, e.kind == ProgressEvent::Kind::Begin ? 0 : e.step, e.total);
    int job_progress = 0;
    store_.update(
        id,
        [&](Job& j) {
          if (j.status == JobStatus::InProgress) {
            j.stage = e.kind == ProgressEvent::Kind::End ? "" : stage;
            if (p > j.progress) j.progress = p;
          }
          job_progress = j.progress;
        },
        JobStore::Persist::No);
    const char* kind = e.kind == ProgressEvent::Kind::Begin ? "begin"
                       : e.kind == ProgressEvent::Kind::End ? "end"
                                                            : "step";
    Json data = {{"id", id},
                 {"stage", stage},
                 {"kind", kind},
                 {"step", e.step},
                 {"total", e.total},
                 {"elapsed", e.elapsed},
                 {"progress", job_progress}};
    if (e.kind == ProgressEvent::Kind::Step) data["eta"] = e.eta >= 0 ? Json(e.eta) : Json(nullptr);
    events_.append(id, {e.kind == ProgressEvent::Kind::Step ? "step" : "stage", std::move(data)});
  };

  try {
    const GenerateResult result = engine_.generate(queued.request, progress, token);
    if (token.cancelled()) throw Error("serve", "cancelled", ErrorCategory::Cancelled);
    const int64_t items = static_cast<int64_t>(result.videos.size());
    fs::create_directories(dir);
    save(result, {result_path(dir, "video", 0, 1), result_path(dir, "audio", 0, 1), "", "", ""});
    for (int64_t i = 0; i < items; ++i)
      write_png_frame(result_path(dir, "thumbnail", i, items), result.videos[static_cast<size_t>(i)], 0);
    remove_dir((fs::path(dir) / "inputs").string());
    finish(id, JobStatus::Completed, std::nullopt, items);
  } catch (const Error& e) {
    if (stopping())
      finish(id, JobStatus::Failed,
             JobError{"server_stopped", "the server stopped while this job ran; submit it again"}, 0);
    else if (token.cancelled() || e.category() == ErrorCategory::Cancelled)
      finish(id, JobStatus::Cancelled, JobError{"cancelled", "the job was cancelled"}, 0);
    else
      finish(id, JobStatus::Failed, JobError{error_category_name(e.category()), e.what()}, 0);
  } catch (const std::exception& e) {
    finish(id, JobStatus::Failed, JobError{"internal", e.what()}, 0);
  }
}

void JobRunner::finish(const std::string& id, JobStatus status, std::optional<JobError> error, int64_t videos) {
  JobStatus final_status = status;
  store_.update(id, [&](Job& j) {
    // A job cancelled through the API while it ran already says so; its end changes nothing more.
    if (j.status == JobStatus::Cancelled) {
      final_status = j.status;
      return;
    }
    j.status = status;
    j.stage.clear();
    j.completed_at = unix_seconds();
    j.error = std::move(error);
    j.videos = videos;
    if (status == JobStatus::Completed) j.progress = 100;
  });
  if (final_status != JobStatus::Completed) remove_dir(store_.job_dir(id));
  if (const auto job = store_.get(id)) events_.append(id, {"done", job_to_json(*job)});
  events_.close(id);
}

}  // namespace ltx::server
