// Writing what Engine::generate returned: an MP4 (H.264 + AAC), a WAV (16-bit PCM), PNG frames, the JSON sidecar.
// Each writes under a temporary name and renames into place, so a failure leaves nothing behind.
#pragma once

#include <string>
#include <vector>

#include "ltx/result.hpp"

namespace ltx {

void write_mp4(const std::string& path, const Video& video);
void write_wav(const std::string& path, const Video& video);
// DIR/frame_00000.png, DIR/frame_00001.png, ... (DIR is made; an existing folder gets the files added)
void write_frames(const std::string& dir, const Video& video);
// Frame `frame` (0-based) as one PNG, e.g. a thumbnail; written under a temporary name and renamed into place.
void write_png_frame(const std::string& path, const Video& video, int64_t frame = 0);

// Every output of a result, as `ltx generate` writes them. With several items each path gets the item's number
// before its extension (out.mp4 -> out_0.mp4, out_1.mp4; frames -> frames_0, ...). Empty paths are skipped.
struct OutputFiles {
  std::string mp4, wav, frames_dir, sidecar;
  std::string noise_recording;  // the result's noise recording (GenerateRequest::record_noise), one file
};

// The record of item `item`: prompts, seed, model files and sizes, every parameter after defaults, version,
// seconds per stage, peak memory, and its files (`files` as given to save(), numbered here for the item).
std::string sidecar_json(const GenerateResult& result, size_t item, const OutputFiles& files);

// Whether `files` can be written, before any work: every folder they go into exists, frames_dir is not a file.
// Throws one ltx::Error (Io) naming each problem.
void check_outputs(const OutputFiles& files);

// Writes every file of every item, all or nothing: all are staged under temporary names and renamed into place
// together only when every one is complete. Returns the paths written, item 0's MP4 first.
std::vector<std::string> save(const GenerateResult& result, const OutputFiles& files);

// The path item `item` of `items` is written to (see OutputFiles).
std::string item_path(const std::string& path, size_t item, size_t items);

}  // namespace ltx
