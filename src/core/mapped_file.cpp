#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace ltx {

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  LTX_CHECK(fd >= 0, "file", path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("file", path + ": not a regular file");
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      fail("file", path + ": cannot map: " + std::strerror(err));
    }
  }
  ::close(fd);
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<std::byte*>(p), size));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

}  // namespace ltx
