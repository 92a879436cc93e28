#include "io/media_read.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "io/ffmpeg_util.h"

extern "C" {
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswresample/swresample.h>
}

namespace ltx::io {
namespace {

constexpr const char* kDomain = "media";
// The most a read holds: 16 GiB of RGB frames (a 257-frame 4K clip is 6.4 GB) and 2^28 audio samples (a GiB of
// float: 46 minutes of 48 kHz stereo).
constexpr size_t kMaxVideoBytes = size_t{16} << 30;
constexpr int64_t kMaxAudioSamples = int64_t{1} << 28;

struct SwrFree {
  void operator()(SwrContext* s) const { swr_free(&s); }
};

// Feeds the packets of `stream` to its decoder and hands each decoded frame to `on_frame`, the decoder drained at
// the end; stops early when `on_frame` returns false.
template <typename OnFrame>
void decode_stream(AVFormatContext* ic, int stream, AVCodecContext* c, const std::string& what, OnFrame on_frame) {
  ff::FramePtr frame(av_frame_alloc());
  ff::PacketPtr pkt(av_packet_alloc());
  while (av_read_frame(ic, pkt.get()) >= 0) {
    const bool ours = pkt->stream_index == stream;
    if (ours) ff::check_av(avcodec_send_packet(c, pkt.get()), kDomain, what);
    av_packet_unref(pkt.get());
    if (!ours) continue;
    while (ff::receive_frame(c, frame.get(), kDomain, what))
      if (!on_frame(frame.get())) return;
  }
  ff::check_av(avcodec_send_packet(c, nullptr), kDomain, what);
  while (ff::receive_frame(c, frame.get(), kDomain, what))
    if (!on_frame(frame.get())) return;
}

// The file opened and its best stream of `type`; stream -1 when it has none.
struct BestStream {
  ff::InputPtr input;
  int stream = -1;
};
BestStream open_best_stream(const std::string& path, AVMediaType type, const std::string& what) {
  BestStream b{ff::open_input(path, kDomain, what)};
  const int stream = av_find_best_stream(b.input.get(), type, -1, -1, nullptr, 0);
  if (stream == AVERROR_STREAM_NOT_FOUND) return b;
  ff::check_av(stream, kDomain, what);
  b.stream = stream;
  return b;
}

}  // namespace

std::optional<VideoInfo> probe_video(const std::string& path) {
  const std::string what = "cannot read the video of " + path;
  const BestStream best = open_best_stream(path, AVMEDIA_TYPE_VIDEO, what);
  if (best.stream < 0) return std::nullopt;
  AVFormatContext* ic = best.input.get();
  const int stream = best.stream;
  const AVStream* s = ic->streams[stream];
  VideoInfo info;
  info.fps = s->avg_frame_rate.den != 0 ? av_q2d(s->avg_frame_rate) : 0.0;
  info.height = s->codecpar->height;
  info.width = s->codecpar->width;
  info.frames = s->nb_frames;
  if (info.frames <= 0) {  // the container does not say: its packets, one frame each
    info.frames = 0;
    ff::PacketPtr pkt(av_packet_alloc());
    while (av_read_frame(ic, pkt.get()) >= 0) {
      if (pkt->stream_index == stream) ++info.frames;
      av_packet_unref(pkt.get());
    }
  }
  return info;
}

std::optional<DecodedVideo> read_video(const std::string& path, std::optional<int64_t> max_frames) {
  const std::string what = "cannot read the video of " + path;
  const BestStream best = open_best_stream(path, AVMEDIA_TYPE_VIDEO, what);
  if (best.stream < 0) return std::nullopt;
  AVFormatContext* ic = best.input.get();
  const int stream = best.stream;
  ff::check_picture_size(ic, stream, kDomain, what);
  const ff::CodecPtr c = ff::open_decoder(ic, stream, kDomain, what);
  DecodedVideo v;
  const AVRational rate = ic->streams[stream]->avg_frame_rate;
  v.fps = rate.den != 0 ? av_q2d(rate) : 0.0;
  decode_stream(ic, stream, c.get(), what, [&](const AVFrame* f) {
    const RgbImage rgb = ff::frame_to_rgb(f, kDomain, what);
    if (v.frames == 0) {
      v.height = rgb.height;
      v.width = rgb.width;
    }
    LTX_CHECK(rgb.height == v.height && rgb.width == v.width, kDomain, what, ": frame ", v.frames, " is ", rgb.width,
              "x", rgb.height, ", the first was ", v.width, "x", v.height);
    LTX_CHECK(v.rgb.size() + rgb.rgb.size() <= kMaxVideoBytes, kDomain, what, ": more than ", kMaxVideoBytes >> 30,
              " GiB of frames (", v.frames, " of ", v.width, "x", v.height, "); cut the clip shorter");
    v.rgb.insert(v.rgb.end(), rgb.rgb.begin(), rgb.rgb.end());
    ++v.frames;
    return !max_frames || v.frames < *max_frames;
  });
  LTX_CHECK(v.frames > 0, kDomain, what, ": no frame decoded");
  return v;
}

std::optional<DecodedAudio> read_audio(const std::string& path, std::optional<double> max_seconds) {
  const std::string what = "cannot read the audio of " + path;
  const BestStream best = open_best_stream(path, AVMEDIA_TYPE_AUDIO, what);
  if (best.stream < 0) return std::nullopt;
  AVFormatContext* ic = best.input.get();
  const int stream = best.stream;
  const ff::CodecPtr c = ff::open_decoder(ic, stream, kDomain, what);
  DecodedAudio a;
  int64_t wanted = 0;  // the samples per channel kept: max_seconds' worth, or all (up to kMaxAudioSamples)
  // Every decoded frame converted to planar float at its own rate and layout (no resampling), the converter set up
  // from the first frame; a stream whose later frames change format, layout or rate is refused (a converter fed
  // another layout than it was made for reads past the frame).
  std::unique_ptr<SwrContext, SwrFree> swr;
  AVSampleFormat format = AV_SAMPLE_FMT_NONE;
  struct Layout {
    AVChannelLayout l{};
    ~Layout() { av_channel_layout_uninit(&l); }
  } first;
  AVChannelLayout& layout = first.l;
  std::vector<std::vector<float>> planes;
  std::vector<float*> out;
  decode_stream(ic, stream, c.get(), what, [&](const AVFrame* f) {
    if (!swr) {
      a.sample_rate = f->sample_rate;
      a.channels = f->ch_layout.nb_channels;
      LTX_CHECK(a.sample_rate > 0 && a.channels > 0, kDomain, what, ": no sample rate or channel count");
      const double bound = max_seconds ? std::ceil(*max_seconds * static_cast<double>(a.sample_rate)) : 0.0;
      wanted = max_seconds && bound < 0x1p62 ? std::max<int64_t>(static_cast<int64_t>(bound), 1)
                                             : std::numeric_limits<int64_t>::max();
      format = static_cast<AVSampleFormat>(f->format);
      ff::check_av(av_channel_layout_copy(&layout, &f->ch_layout), kDomain, what);
      SwrContext* raw = nullptr;
      ff::check_av(swr_alloc_set_opts2(&raw, &layout, AV_SAMPLE_FMT_FLTP, f->sample_rate, &layout, format,
                                       f->sample_rate, 0, nullptr),
                   kDomain, what);
      swr.reset(raw);
      ff::check_av(swr_init(swr.get()), kDomain, what);
      planes.resize(static_cast<size_t>(a.channels));
      out.resize(planes.size());
    }
    LTX_CHECK(f->format == format && f->sample_rate == a.sample_rate &&
                  av_channel_layout_compare(&f->ch_layout, &layout) == 0,
              kDomain, what, ": the stream changes sample format, rate or channels after ", planes[0].size(),
              " samples");
    const int n = f->nb_samples;
    for (size_t ch = 0; ch < planes.size(); ++ch) {
      planes[ch].resize(planes[ch].size() + static_cast<size_t>(n));
      out[ch] = planes[ch].data() + planes[ch].size() - static_cast<size_t>(n);
    }
    const int got = swr_convert(swr.get(), reinterpret_cast<uint8_t**>(out.data()), n,
                                const_cast<const uint8_t**>(f->extended_data), n);
    ff::check_av(got, kDomain, what);
    for (auto& p : planes) p.resize(p.size() - static_cast<size_t>(n - got));
    const auto held = static_cast<int64_t>(planes[0].size());
    LTX_CHECK(std::min(held, wanted) * a.channels <= kMaxAudioSamples, kDomain, what, ": longer than ",
              kMaxAudioSamples / a.channels / a.sample_rate, " s at ", a.sample_rate, " Hz and ", a.channels,
              " channels (", kMaxAudioSamples, " samples are read at most); give a shorter clip or a maximum duration");
    if (held < wanted) return true;
    for (auto& p : planes) p.resize(static_cast<size_t>(wanted));
    return false;
  });
  for (const auto& p : planes) a.samples.insert(a.samples.end(), p.begin(), p.end());
  LTX_CHECK(a.length() > 0, kDomain, what, ": no sample decoded");
  return a;
}

}  // namespace ltx::io
