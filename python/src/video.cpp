#include "video.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "ltx/error.hpp"
#include "ltx/outputs.hpp"

namespace nb = nanobind;

namespace ltx::python {
namespace {

using Frames = nb::ndarray<nb::numpy, const uint8_t, nb::ndim<4>, nb::c_contig>;
using Audio = nb::ndarray<nb::numpy, const float, nb::ndim<2>, nb::c_contig>;

// A capsule owning one more reference to `video`: the arrays' owner, so the buffers outlive the arrays however
// long Python keeps them.
nb::capsule owner_of(const std::shared_ptr<const Video>& video) {
  using Ref = std::shared_ptr<const Video>;
  auto ref = std::make_unique<Ref>(video);
  nb::capsule owner(ref.get(), [](void* p) noexcept { delete static_cast<Ref*>(p); });
  static_cast<void>(ref.release());  // the capsule owns it now
  return owner;
}

PyVideo to_video(Video&& v, const GenerateResult& result) {
  const auto samples = static_cast<size_t>(v.audio_samples());
  const auto channels = static_cast<size_t>(v.channels);
  if (v.frames < 0 || v.height < 0 || v.width < 0 ||
      v.rgb.size() != static_cast<size_t>(v.frames * v.height * v.width * 3) || v.audio.size() != channels * samples)
    throw Error("python", "the engine returned buffers of the wrong size (a bug: please report it)",
                ErrorCategory::Internal);
  PyVideo out;
  out.video = std::make_shared<const Video>(std::move(v));
  const Video& video = *out.video;
  const nb::capsule owner = owner_of(out.video);
  out.frames = Frames(video.rgb.data(),
                      {static_cast<size_t>(video.frames), static_cast<size_t>(video.height),
                       static_cast<size_t>(video.width), size_t{3}},
                      owner)
                   .cast();
  out.audio = Audio(video.audio.data(), {channels, samples}, owner).cast();
  out.seed = result.request.seed;
  out.steps = result.request.steps;
  out.seconds = result.seconds;
  for (const StageTime& s : result.stages) out.stages.emplace_back(s.stage, s.seconds);
  return out;
}

void save(const PyVideo& v, const std::filesystem::path& path, const std::optional<std::filesystem::path>& wav) {
  nb::gil_scoped_release release;  // H.264 and AAC encoding
  write_mp4(path.string(), *v.video);
  if (wav) write_wav(wav->string(), *v.video);
}

std::string repr(const PyVideo& pv) {
  const Video& v = *pv.video;
  std::string prompt = v.prompt;
  if (prompt.size() > 40) {
    size_t cut = 40;
    while (cut > 0 && (static_cast<unsigned char>(prompt[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
    prompt = prompt.substr(0, cut) + "...";
  }
  std::ostringstream os;
  os << "<ltx.Video '" << prompt << "': " << v.frames << " frames " << v.width << "x" << v.height << " at " << v.fps
     << " fps, audio " << v.channels << "x" << v.audio_samples() << " at " << v.sample_rate << " Hz, seed " << pv.seed
     << ", " << pv.steps << " steps>";
  return os.str();
}

}  // namespace

std::vector<PyVideo> to_videos(GenerateResult&& result) {
  std::vector<PyVideo> out;
  for (Video& v : result.videos) out.push_back(to_video(std::move(v), result));
  return out;
}

void bind_video(nb::module_& m) {
  nb::class_<PyVideo>(m, "Video", "One generated video with its audio, as Engine.generate returns it.")
      .def_ro("frames", &PyVideo::frames,
              "numpy uint8 [frames, height, width, 3] RGB, read-only, over the video's own memory (no copy)")
      .def_ro("audio", &PyVideo::audio, "numpy float32 [channels, samples] in [-1, 1], read-only, no copy")
      .def_prop_ro("fps", [](const PyVideo& v) { return v.video->fps; })
      .def_prop_ro("sample_rate", [](const PyVideo& v) { return v.video->sample_rate; })
      .def_prop_ro("prompt", [](const PyVideo& v) { return v.video->prompt; })
      .def_ro("seed", &PyVideo::seed)
      .def_ro("steps", &PyVideo::steps, "denoising steps, after the model's default")
      .def_ro("seconds", &PyVideo::seconds, "the call's wall time (the first call's includes the engine's load)")
      .def_ro("stages", &PyVideo::stages, "(stage, seconds) of the call, in order")
      .def("save", &save, nb::arg("path"), nb::arg("wav") = nb::none(),
           "Writes the MP4 (H.264 + AAC) at `path` and, with `wav`, the audio as a 16-bit WAV there too.")
      .def("__repr__", &repr);
}

}  // namespace ltx::python
