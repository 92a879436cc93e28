#include "io/mp4_writer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include "core/error.h"

namespace ltx::io {
namespace {

std::string av_error(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

void check_av(int code, const std::string& what) { LTX_CHECK(code >= 0, "mp4", what, ": ", av_error(code)); }

// Owns every FFmpeg object of one write and the temporary file until it is renamed.
struct Writer {
  std::string temp_path;
  AVFormatContext* oc = nullptr;
  AVCodecContext* video = nullptr;
  AVCodecContext* audio = nullptr;
  AVStream* video_stream = nullptr;
  AVStream* audio_stream = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  SwsContext* sws = nullptr;
  bool renamed = false;

  ~Writer() {
    sws_freeContext(sws);
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&video);
    avcodec_free_context(&audio);
    if (oc) {
      if (oc->pb) avio_closep(&oc->pb);
      avformat_free_context(oc);
    }
    if (!renamed && !temp_path.empty()) std::remove(temp_path.c_str());
  }

  // Sends a frame (or nullptr to flush) and writes every packet the encoder hands back.
  void encode(AVCodecContext* ctx, AVStream* st, AVFrame* f) {
    check_av(avcodec_send_frame(ctx, f), "encoding");
    while (true) {
      const int r = avcodec_receive_packet(ctx, packet);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return;
      check_av(r, "encoding");
      av_packet_rescale_ts(packet, ctx->time_base, st->time_base);
      packet->stream_index = st->index;
      check_av(av_interleaved_write_frame(oc, packet), "writing a packet");
    }
  }
};

std::string temp_name(const std::string& path) {
  static std::atomic<int> counter{0};
  return path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

void open_video(Writer& w, const Mp4VideoTrack& v) {
  const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
  if (!codec) codec = avcodec_find_encoder(AV_CODEC_ID_H264);
  LTX_CHECK(codec != nullptr, "mp4", "this FFmpeg has no H.264 encoder");
  w.video = avcodec_alloc_context3(codec);
  AVCodecContext* c = w.video;
  c->width = static_cast<int>(v.width);
  c->height = static_cast<int>(v.height);
  c->pix_fmt = AV_PIX_FMT_YUV420P;
  c->framerate = av_d2q(v.fps, 100000);
  c->time_base = av_inv_q(c->framerate);
  c->colorspace = AVCOL_SPC_BT709;
  c->color_primaries = AVCOL_PRI_BT709;
  c->color_trc = AVCOL_TRC_BT709;
  c->color_range = AVCOL_RANGE_MPEG;
  if (w.oc->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  av_opt_set(c->priv_data, "crf", std::to_string(v.crf).c_str(), 0);
  check_av(avcodec_open2(c, codec, nullptr), "opening the H.264 encoder");
  w.video_stream = avformat_new_stream(w.oc, nullptr);
  LTX_CHECK(w.video_stream != nullptr, "mp4", "cannot add the video stream");
  w.video_stream->time_base = c->time_base;
  w.video_stream->avg_frame_rate = c->framerate;
  check_av(avcodec_parameters_from_context(w.video_stream->codecpar, c), "video stream parameters");
}

void open_audio(Writer& w, const Mp4AudioTrack& a) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_AAC);
  LTX_CHECK(codec != nullptr, "mp4", "this FFmpeg has no AAC encoder");
  w.audio = avcodec_alloc_context3(codec);
  AVCodecContext* c = w.audio;
  c->sample_fmt = AV_SAMPLE_FMT_FLTP;
  c->sample_rate = static_cast<int>(a.sample_rate);
  av_channel_layout_default(&c->ch_layout, static_cast<int>(a.channels));
  c->bit_rate = 192000;
  c->time_base = AVRational{1, c->sample_rate};
  if (w.oc->oformat->flags & AVFMT_GLOBALHEADER) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  check_av(avcodec_open2(c, codec, nullptr), "opening the AAC encoder");
  w.audio_stream = avformat_new_stream(w.oc, nullptr);
  LTX_CHECK(w.audio_stream != nullptr, "mp4", "cannot add the audio stream");
  w.audio_stream->time_base = c->time_base;
  check_av(avcodec_parameters_from_context(w.audio_stream->codecpar, c), "audio stream parameters");
}

void write_video_frames(Writer& w, const Mp4VideoTrack& v) {
  AVCodecContext* c = w.video;
  w.sws = sws_getContext(c->width, c->height, AV_PIX_FMT_RGB24, c->width, c->height, AV_PIX_FMT_YUV420P, SWS_BICUBIC,
                         nullptr, nullptr, nullptr);
  LTX_CHECK(w.sws != nullptr, "mp4", "cannot create the RGB -> YUV converter");
  // BT.709 matrix, full-range RGB in, limited-range YUV out (media_io.py converts the same way).
  const int* bt709 = sws_getCoefficients(SWS_CS_ITU709);
  sws_setColorspaceDetails(w.sws, bt709, 1, bt709, 0, 0, 1 << 16, 1 << 16);
  const size_t frame_bytes = static_cast<size_t>(v.height * v.width * 3);
  for (int64_t i = 0; i < v.frames; ++i) {
    av_frame_unref(w.frame);
    w.frame->format = c->pix_fmt;
    w.frame->width = c->width;
    w.frame->height = c->height;
    check_av(av_frame_get_buffer(w.frame, 0), "allocating a video frame");
    const uint8_t* src[1] = {v.rgb.data() + static_cast<size_t>(i) * frame_bytes};
    const int src_stride[1] = {static_cast<int>(v.width * 3)};
    sws_scale(w.sws, src, src_stride, 0, c->height, w.frame->data, w.frame->linesize);
    w.frame->pts = i;
    w.encode(c, w.video_stream, w.frame);
  }
  w.encode(c, w.video_stream, nullptr);
}

void write_audio_frames(Writer& w, const Mp4AudioTrack& a) {
  AVCodecContext* c = w.audio;
  const int64_t n = static_cast<int64_t>(a.samples.size()) / a.channels;
  const int64_t chunk = c->frame_size > 0 ? c->frame_size : 1024;
  for (int64_t start = 0; start < n; start += chunk) {
    const int64_t count = std::min(chunk, n - start);
    av_frame_unref(w.frame);
    w.frame->format = c->sample_fmt;
    w.frame->sample_rate = c->sample_rate;
    w.frame->nb_samples = static_cast<int>(count);
    check_av(av_channel_layout_copy(&w.frame->ch_layout, &c->ch_layout), "audio channel layout");
    check_av(av_frame_get_buffer(w.frame, 0), "allocating an audio frame");
    for (int64_t ch = 0; ch < a.channels; ++ch) {
      auto* dst = reinterpret_cast<float*>(w.frame->data[ch]);
      const float* src = a.samples.data() + ch * n + start;
      for (int64_t i = 0; i < count; ++i) dst[i] = std::clamp(src[i], -1.0f, 1.0f);
    }
    w.frame->pts = start;
    w.encode(c, w.audio_stream, w.frame);
  }
  w.encode(c, w.audio_stream, nullptr);
}

void check_tracks(const Mp4VideoTrack& v, const std::optional<Mp4AudioTrack>& a) {
  LTX_CHECK(v.frames > 0 && v.height > 0 && v.width > 0 && v.height % 2 == 0 && v.width % 2 == 0, "mp4",
            "video must have frames and an even height and width, got ", v.frames, "x", v.height, "x", v.width);
  LTX_CHECK(static_cast<int64_t>(v.rgb.size()) == v.frames * v.height * v.width * 3, "mp4", "video holds ",
            v.rgb.size(), " bytes, expected ", v.frames * v.height * v.width * 3);
  LTX_CHECK(v.fps > 0, "mp4", "fps must be positive");
  if (a) {
    LTX_CHECK(a->channels > 0 && a->sample_rate > 0 && a->samples.size() % static_cast<size_t>(a->channels) == 0, "mp4",
              "audio needs channels, a sample rate and whole frames of samples");
  }
}

}  // namespace

void write_mp4(const std::string& path, const Mp4VideoTrack& video, const std::optional<Mp4AudioTrack>& audio) {
  check_tracks(video, audio);
  // libx264 and the AAC encoder report statistics at the default level; errors still come through.
  if (av_log_get_level() > AV_LOG_ERROR) av_log_set_level(AV_LOG_ERROR);
  Writer w;
  w.temp_path = temp_name(path);
  check_av(avformat_alloc_output_context2(&w.oc, nullptr, "mp4", w.temp_path.c_str()), "creating the MP4 muxer");
  open_video(w, video);
  if (audio) open_audio(w, *audio);
  check_av(avio_open(&w.oc->pb, w.temp_path.c_str(), AVIO_FLAG_WRITE), "cannot write " + w.temp_path);
  check_av(avformat_write_header(w.oc, nullptr), "writing the MP4 header");
  w.frame = av_frame_alloc();
  w.packet = av_packet_alloc();
  LTX_CHECK(w.frame && w.packet, "mp4", "out of memory");
  write_video_frames(w, video);
  if (audio) write_audio_frames(w, *audio);
  check_av(av_write_trailer(w.oc), "writing the MP4 trailer");
  check_av(avio_closep(&w.oc->pb), "closing " + w.temp_path);
  std::error_code ec;
  std::filesystem::rename(w.temp_path, path, ec);
  LTX_CHECK(!ec, "mp4", "cannot rename ", w.temp_path, " to ", path, ": ", ec.message());
  w.renamed = true;
}

Mp4Info probe_mp4(const std::string& path) {
  AVFormatContext* ic = nullptr;
  check_av(avformat_open_input(&ic, path.c_str(), nullptr, nullptr), "cannot open " + path);
  struct Closer {
    AVFormatContext*& ic;
    ~Closer() { avformat_close_input(&ic); }
  } closer{ic};
  check_av(avformat_find_stream_info(ic, nullptr), "reading " + path);
  Mp4Info info;
  info.duration_s = ic->duration > 0 ? static_cast<double>(ic->duration) / AV_TIME_BASE : 0;
  int video_index = -1;
  for (unsigned i = 0; i < ic->nb_streams; ++i) {
    const AVStream* st = ic->streams[i];
    const AVCodecParameters* p = st->codecpar;
    if (p->codec_type == AVMEDIA_TYPE_VIDEO && video_index < 0) {
      video_index = static_cast<int>(i);
      info.video_codec = avcodec_get_name(p->codec_id);
      info.width = p->width;
      info.height = p->height;
    } else if (p->codec_type == AVMEDIA_TYPE_AUDIO && info.audio_codec.empty()) {
      info.audio_codec = avcodec_get_name(p->codec_id);
      info.sample_rate = p->sample_rate;
      info.channels = p->ch_layout.nb_channels;
      if (st->duration > 0) info.audio_duration_s = static_cast<double>(st->duration) * av_q2d(st->time_base);
    }
  }
  // Every H.264 packet of our files is one frame.
  AVPacket* pkt = av_packet_alloc();
  while (av_read_frame(ic, pkt) >= 0) {
    if (pkt->stream_index == video_index) ++info.frames;
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  return info;
}

}  // namespace ltx::io
