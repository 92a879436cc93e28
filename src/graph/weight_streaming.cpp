#include "graph/weight_streaming.h"

#include <algorithm>
#include <map>

#include "core/mapped_file.h"
#include "graph/step_plan.h"

namespace ltx {

WeightStreamer::WeightStreamer(std::span<const Step> steps, std::span<const Slot> slots, const StreamingPolicy& policy)
    : policy_(policy), drops_(steps.size()) {
  // Each mapped constant's first and last reading step, in the order of first reads, and whether every read is a
  // Gather's of its table (input 0).
  struct Use {
    size_t first, last;
    bool gathered;
  };
  std::map<int, Use> uses;  // slot -> its reads
  std::vector<int> order;
  for (size_t s = 0; s < steps.size(); ++s)
    for (size_t k = 0; k < steps[s].in_slots.size(); ++k) {
      const int i = steps[s].in_slots[k];
      const Slot& slot = slots[static_cast<size_t>(i)];
      if (slot.kind != Slot::Kind::Constant || !slot.tensor.is_contiguous()) continue;
      const bool gather = steps[s].kind == Step::Kind::Op && steps[s].op == OpKind::Gather && k == 0;
      auto [it, fresh] = uses.try_emplace(i, Use{s, s, gather});
      if (fresh) order.push_back(i);
      it->second.last = s;
      it->second.gathered = it->second.gathered && gather;
    }
  for (const int i : order) {
    const Tensor& t = slots[static_cast<size_t>(i)].tensor;
    const size_t bytes = dtype_bytes_for(t.dtype(), t.numel());
    if (file_mapped_bytes(t.raw(), bytes) != bytes) continue;
    const Use& use = uses.at(i);
    const bool resident = resident_bytes_ + bytes <= policy_.resident_bytes;
    (resident ? resident_bytes_ : streamed_bytes_) += bytes;
    if (!resident) drops_[use.last].push_back(regions_.size());
    regions_.push_back({t.raw(), bytes, use.first, use.last, resident, use.gathered});
  }
  for (const Region& r : regions_)
    if (r.resident) kept_.emplace_back(r.data, r.bytes);
  if (!regions_.empty()) reader_ = std::thread([this] { read_ahead_loop(); });
}

WeightStreamer::~WeightStreamer() {
  if (!reader_.joinable()) return;
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  reader_.join();
}

void WeightStreamer::before_step(size_t s) {
  if (regions_.empty()) return;
  // Regions first read from step s onward, up to read_ahead_bytes of them; a new run starts over at step 0.
  size_t from = 0;
  while (from < regions_.size() && regions_[from].first_step < s) ++from;
  std::unique_lock lock(mutex_);
  if (s == 0) {
    // A run that streams starts with only its resident regions' pages in memory: another plan's run (the other
    // stage, with its LoRA; another shape) may have left pages this one streams or never reads. The reader is
    // stopped first (a cancelled run may have left it loads), so that no page it maps survives the drop.
    if (streamed_bytes_ > 0) {
      load_until_ = next_load_;
      loaded_.wait(lock, [&] { return loading_ == kNone; });
      drop_file_pages_except(kept_);
    }
    first_run_ = runs_++ == 0;
    next_load_ = 0;
  }
  // What the reader will load: streamed regions, and resident ones on the first run; never a gathered table.
  const auto loaded = [&](const Region& r) { return r.gathered || (r.resident && !first_run_) ? size_t{0} : r.bytes; };
  size_t until = from, bytes = 0;
  while (until < regions_.size() && (until == from || bytes + loaded(regions_[until]) <= policy_.read_ahead_bytes))
    bytes += loaded(regions_[until++]);
  next_load_ = std::max(next_load_, from);
  load_until_ = until;
  wake_.notify_all();
}

void WeightStreamer::after_step(size_t s) {
  if (drops_[s].empty()) return;
  {
    // A region the reader has not reached is skipped; one it is reading is waited for, so that no page it maps
    // after this drop stays in memory.
    std::unique_lock lock(mutex_);
    for (const size_t r : drops_[s]) next_load_ = std::max(next_load_, r + 1);
    loaded_.wait(lock, [&] { return std::find(drops_[s].begin(), drops_[s].end(), loading_) == drops_[s].end(); });
  }
  for (const size_t r : drops_[s]) drop_file_pages(regions_[r].data, regions_[r].bytes);
}

void WeightStreamer::read_ahead_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || next_load_ < load_until_; });
    if (stop_) return;
    loading_ = next_load_++;
    const Region r = regions_[loading_];
    // Resident regions are read ahead on the first run only (after it their pages stay); streamed ones every run.
    const bool load = (!r.resident || first_run_) && !r.gathered;
    lock.unlock();
    if (load) load_file_pages(r.data, r.bytes);
    lock.lock();
    loading_ = kNone;
    loaded_.notify_all();
  }
}

}  // namespace ltx
