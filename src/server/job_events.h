// What GET /v1/videos/{id}/events streams: each job's events in order (one per stage begin and end, denoising or
// decode step, and status change), kept in memory while the job runs and for the most recent finished jobs, so a
// client that connects late still gets the whole story. Readers wait on a condition variable, never poll.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "io/json.h"

namespace ltx::server {

struct JobEvent {
  std::string name;  // the SSE event name: "status", "stage", "step", "done"
  Json data;
};

class JobEvents {
 public:
  // How many finished jobs keep their events (older ones answer with their final status only).
  explicit JobEvents(size_t kept_finished = 64) : kept_finished_(kept_finished) {}

  void open(const std::string& id);
  void append(const std::string& id, JobEvent event);
  // The job ended: readers get what is left and stop.
  void close(const std::string& id);

  struct Read {
    std::vector<JobEvent> events;
    bool known = false;   // the job has a log here
    bool closed = false;  // nothing will follow `events`
  };
  // The events from index `from` on; waits up to `timeout` for one when there is none yet.
  Read read(const std::string& id, size_t from, std::chrono::milliseconds timeout);
  // The server is stopping: every reader returns at once, as if its job's log were closed.
  void stop();

 private:
  struct Log {
    std::vector<JobEvent> events;
    bool closed = false;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Log> logs_;
  std::deque<std::string> finished_;  // closed logs, oldest first
  size_t kept_finished_;
  bool stopping_ = false;
};

}  // namespace ltx::server
