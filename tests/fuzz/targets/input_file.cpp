#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "fuzz_target.h"

namespace ltx::fuzz {

InputFile::InputFile(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
  path_ = (dir / ("ltx_fuzz_" + target + "_" + std::to_string(::getpid()))).string();
}

InputFile::~InputFile() { std::remove(path_.c_str()); }

const std::string& InputFile::write(const uint8_t* data, size_t size) {
  std::ofstream f(path_, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path_;
}

}  // namespace ltx::fuzz
