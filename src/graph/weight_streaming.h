// Streaming a plan's weights from their mapped files when they do not all fit the memory budget. The weights a plan
// reads are its Constant slots; those whose bytes lie in a mapped file (core/mapped_file.h) are either resident (kept
// in memory across runs) or streamed: read in on a helper thread up to `read_ahead_bytes` ahead of the step that
// first reads them, and dropped after the step that last reads them. Which is which follows the order steps read
// them: the first `resident_bytes` stay. A table only gathered from (an embedding: a few rows of it read) is never
// read ahead, whatever its size: its step faults in the rows it reads. Weights the plan holds elsewhere (prepared
// copies, small vectors) are not affected. Results do not change: only where the bytes come from.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace ltx {

struct Slot;
struct Step;

struct StreamingPolicy {
  size_t resident_bytes = SIZE_MAX;           // mapped weight bytes kept in memory, in the order steps read them
  size_t read_ahead_bytes = size_t{1} << 30;  // streamed bytes read in before the step that needs them
  bool operator==(const StreamingPolicy&) const = default;
};

class WeightStreamer {
 public:
  WeightStreamer(std::span<const Step> steps, std::span<const Slot> slots, const StreamingPolicy& policy);
  ~WeightStreamer();
  WeightStreamer(const WeightStreamer&) = delete;
  WeightStreamer& operator=(const WeightStreamer&) = delete;

  const StreamingPolicy& policy() const { return policy_; }
  size_t resident_bytes() const { return resident_bytes_; }  // mapped weight bytes kept
  size_t streamed_bytes() const { return streamed_bytes_; }  // mapped weight bytes read in on every run

  // Plan::execute calls these around each step s.
  void before_step(size_t s);
  void after_step(size_t s);

 private:
  struct Region {
    const void* data;
    size_t bytes;
    size_t first_step, last_step;
    bool resident;  // kept after its last step (read ahead on the first run only)
    bool gathered;  // only read by Gather steps as their table: never read ahead
  };
  void read_ahead_loop();

  StreamingPolicy policy_;
  std::vector<Region> regions_;                       // every mapped weight region, by first_step
  std::vector<std::pair<const void*, size_t>> kept_;  // the resident regions' (data, bytes)
  std::vector<std::vector<size_t>> drops_;            // per step: the streamed regions whose last reader it is
  size_t resident_bytes_ = 0, streamed_bytes_ = 0;
  size_t runs_ = 0;  // runs begun (guarded by mutex_, like first_run_)
  bool first_run_ = true;

  // The read-ahead thread loads regions_[next_load_] onward while it is below `load_until_` (a region index).
  static constexpr size_t kNone = SIZE_MAX;
  std::mutex mutex_;
  std::condition_variable wake_, loaded_;
  size_t next_load_ = 0, load_until_ = 0;
  size_t loading_ = kNone;  // the region being read in
  bool stop_ = false;
  std::thread reader_;
};

}  // namespace ltx
