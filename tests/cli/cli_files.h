// The files CLI tests make and read: a fresh folder per test and process, a whole file's bytes, and ffprobe's count
// of a video's frames and of a stream's duration.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ltx {

// An empty folder <tmp>/<prefix><name>_<pid>, made anew.
inline std::filesystem::path fresh_temp_dir(const std::string& prefix, const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / (prefix + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// ffprobe's count of the first video stream's decoded frames, or -1 without ffprobe.
inline int count_video_frames(const std::filesystem::path& video) {
  const std::string cmd =
      "ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames "
      "-of csv=p=0 " +
      video.string() + " 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  int n = -1;
  if (std::fscanf(pipe, "%d", &n) != 1) n = -1;
  ::pclose(pipe);
  return n;
}

// ffprobe's duration in seconds of the file's first stream of `type` ("v" or "a"), or -1 without one.
inline double stream_seconds(const std::filesystem::path& file, const std::string& type) {
  const std::string cmd = "ffprobe -v error -select_streams " + type + ":0 -show_entries stream=duration -of csv=p=0 " +
                          file.string() + " 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  double seconds = -1;
  if (std::fscanf(pipe, "%lf", &seconds) != 1) seconds = -1;
  ::pclose(pipe);
  return seconds;
}

}  // namespace ltx
