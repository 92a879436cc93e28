#include "server/job_events.h"

namespace ltx::server {

void JobEvents::open(const std::string& id) {
  std::lock_guard lock(mutex_);
  logs_[id];
}

void JobEvents::append(const std::string& id, JobEvent event) {
  {
    std::lock_guard lock(mutex_);
    const auto it = logs_.find(id);
    if (it == logs_.end() || it->second.closed) return;
    it->second.events.push_back(std::move(event));
  }
  changed_.notify_all();
}

void JobEvents::close(const std::string& id) {
  {
    std::lock_guard lock(mutex_);
    const auto it = logs_.find(id);
    if (it == logs_.end() || it->second.closed) return;
    it->second.closed = true;
    finished_.push_back(id);
    while (finished_.size() > kept_finished_) {
      logs_.erase(finished_.front());
      finished_.pop_front();
    }
  }
  changed_.notify_all();
}

JobEvents::Read JobEvents::read(const std::string& id, size_t from, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  const auto ready = [&] {
    const auto it = logs_.find(id);
    return stopping_ || it == logs_.end() || it->second.closed || it->second.events.size() > from;
  };
  changed_.wait_for(lock, timeout, ready);
  Read out;
  const auto it = logs_.find(id);
  if (it == logs_.end()) return out;
  out.known = true;
  out.closed = it->second.closed || stopping_;
  for (size_t i = from; i < it->second.events.size(); ++i) out.events.push_back(it->second.events[i]);
  return out;
}

void JobEvents::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

}  // namespace ltx::server
