#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace ltx::io {

AtomicFile::AtomicFile(std::string path, Durability durability)
    : path_(std::move(path)), temp_path_(path_ + ".tmp-XXXXXX"), durability_(durability) {
  std::vector<char> name(temp_path_.begin(), temp_path_.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  LTX_CHECK(fd_ >= 0, "file", path_, ": cannot create a temporary file beside it: ", std::strerror(errno));
  temp_path_ = name.data();
  ::fchmod(fd_, 0644);  // mkstemp makes 0600; outputs should be readable like any other file
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    LTX_CHECK(n > 0, "file", path_, ": write failed: ", std::strerror(errno));
    p += n;
    bytes -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (durability_ == Durability::Synced)
    LTX_CHECK(::fsync(fd_) == 0, "file", path_, ": fsync failed: ", std::strerror(errno));
  const int rc = ::close(fd_);
  fd_ = -1;
  LTX_CHECK(rc == 0, "file", path_, ": close failed: ", std::strerror(errno));
  LTX_CHECK(std::rename(temp_path_.c_str(), path_.c_str()) == 0, "file", path_,
            ": cannot rename the temporary file into place: ", std::strerror(errno));
  committed_ = true;
}

}  // namespace ltx::io
