// The jobs' one worker: a bounded FIFO of queued jobs and a thread that runs them one at a time on the engine,
// reporting each stage and step to the job's record and event log, writing the results into the job's folder and
// cancelling through the engine's CancellationToken.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "ltx/engine.hpp"
#include "server/job_events.h"
#include "server/job_store.h"

namespace ltx::server {

// The result files of item `index` in a job's folder: video.mp4, audio.wav, thumbnail.png (video_0.mp4, ... for
// a batch: ltx::item_path's numbering).
std::string result_path(const std::string& job_dir, const std::string& variant, int64_t index, int64_t items);

class JobRunner {
 public:
  JobRunner(Engine& engine, JobStore& store, JobEvents& events, size_t capacity);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Adds the job to the store and the queue; false (and nothing added) when `capacity` jobs already wait.
  bool submit(const Job& job, GenerateRequest request);

  // Cancels a queued or running job: its record says cancelled at once. A queued job leaves the queue and its
  // folder goes now; the running one's token is cancelled, the engine stops at its next stage or step boundary and
  // the worker then removes its files. False when the job is neither queued nor running.
  bool cancel(const std::string& id);

  size_t waiting() const;
  bool busy() const;
  size_t capacity() const { return capacity_; }
  // Seconds until a place in the queue is likely to free up: the recent jobs' mean duration (5 before any).
  int retry_after_seconds() const;

  // Takes no more jobs, cancels the running one and fails the waiting ones ("the server stopped"); joins the worker.
  void stop();

 private:
  struct Queued {
    std::string id;
    GenerateRequest request;
  };
  bool stopping() const;
  void work();
  void run(const Queued& job, const CancellationToken& token);
  void finish(const std::string& id, JobStatus status, std::optional<JobError> error, int64_t videos);

  Engine& engine_;
  JobStore& store_;
  JobEvents& events_;
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  std::string running_id_;
  CancellationToken running_token_;
  bool stopping_ = false;
  double mean_job_seconds_ = 0;  // exponential moving average of the finished jobs' wall time
  std::thread worker_;
};

}  // namespace ltx::server
