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

// The number ffprobe prints for `entries` ("-show_entries ...") of `file`'s first stream of `type` ("v" or "a"),
// with `options` before them; -1 without ffprobe, that stream or a number.
inline double ffprobe_number(const std::filesystem::path& file, const std::string& type, const std::string& entries,
                             const std::string& options = "") {
  const std::string cmd = "ffprobe -v error " + options + "-select_streams " + type + ":0 -show_entries " + entries +
                          " -of csv=p=0 " + file.string() + " 2>/dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  double value = -1;
  if (std::fscanf(pipe, "%lf", &value) != 1) value = -1;
  ::pclose(pipe);
  return value;
}

// ffprobe's count of the first video stream's decoded frames, or -1 without ffprobe.
inline int count_video_frames(const std::filesystem::path& video) {
  return static_cast<int>(ffprobe_number(video, "v", "stream=nb_read_frames", "-count_frames "));
}

// ffprobe's duration in seconds of the file's first stream of `type` ("v" or "a"), or -1 without one.
inline double stream_seconds(const std::filesystem::path& file, const std::string& type) {
  return ffprobe_number(file, type, "stream=duration");
}

}  // namespace ltx
