// A read-only memory map of a whole file. Tensors borrow from it through Storage::borrow.
//
// Weights stay in their mapped files, so which of their pages are in memory decides a run's footprint. The page
// functions below act on any live mapping by address (a weight tensor's bytes): drop pages a run has finished with,
// or read pages in ahead of the step that needs them (graph/weight_streaming.h). Dropped pages are read from the file
// again on their next use, so dropping is always safe; addresses outside every live mapping are ignored.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ltx {

class MappedFile {
 public:
  // Maps `path` read-only; throws ltx::Error naming the file when it cannot be opened or mapped.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, std::byte* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  std::byte* data_;
  size_t size_;
};

// The bytes of [p, p + n) that lie in a live file mapping (0 when none do).
size_t file_mapped_bytes(const void* p, size_t n);
// Lets this process's pages of [p, p + n) go (MADV_DONTNEED: the resident set shrinks at once; the file's pages may
// stay in the OS cache). Whole pages: a page shared with a neighbouring tensor is read again when that one is used.
void drop_file_pages(const void* p, size_t n);
// Reads [p, p + n) in and maps it (MADV_POPULATE_READ; touching each page where the kernel lacks it), blocking until
// done: the thread that calls it takes the disk reads, not the one that computes next.
void load_file_pages(const void* p, size_t n);
// drop_file_pages over every live mapping: between phases of a run whose weights do not all fit its budget.
void drop_all_file_pages();
// drop_file_pages over every live mapping but the pages that hold any of `keep` (address, bytes): a streaming plan
// starting a run keeps only what it holds resident, whatever another plan (another stage, another shape) left.
void drop_file_pages_except(std::vector<std::pair<const void*, size_t>> keep);
// This process's resident bytes outside every live mapping (/proc/self/smaps): its anonymous memory and the program's
// code and libraries, what a run's memory plan finds already held besides the weights it plans.
size_t resident_bytes_outside_mappings();

}  // namespace ltx
