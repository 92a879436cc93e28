#include "io/image_read.h"

#include <cstring>
#include <memory>

#include "core/error.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

namespace ltx::io {
namespace {

struct FormatCloser {
  void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
};
struct CodecFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

std::string av_message(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

void check_av(int code, const std::string& what) {
  if (code < 0) fail("image", what + ": " + av_message(code));
}

// Any decoded frame -> RGB24 through swscale (bilinear, swscale's default BT.601 matrix, as PyAV's reformat).
RgbImage frame_to_rgb(const AVFrame* f, const std::string& what) {
  std::unique_ptr<SwsContext, SwsFree> sws(sws_getContext(f->width, f->height, static_cast<AVPixelFormat>(f->format),
                                                          f->width, f->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr,
                                                          nullptr, nullptr));
  LTX_CHECK(sws != nullptr, "image", what, ": cannot convert pixel format ",
            av_get_pix_fmt_name(static_cast<AVPixelFormat>(f->format)), " to RGB");
  // swscale's vector code writes whole blocks past a row's end: convert into rows padded to 64 bytes (plus a spare
  // row), then copy the pixels out.
  const int stride = (f->width * 3 + 63) / 64 * 64;
  std::vector<uint8_t> padded(static_cast<size_t>(stride) * (f->height + 1));
  uint8_t* dst[1] = {padded.data()};
  const int dst_stride[1] = {stride};
  sws_scale(sws.get(), f->data, f->linesize, 0, f->height, dst, dst_stride);
  RgbImage out{f->height, f->width, std::vector<uint8_t>(static_cast<size_t>(f->height) * f->width * 3)};
  for (int y = 0; y < f->height; ++y)
    std::memcpy(out.rgb.data() + static_cast<size_t>(y) * f->width * 3, padded.data() + static_cast<size_t>(y) * stride,
                static_cast<size_t>(f->width) * 3);
  return out;
}

// Receives the next decoded frame; false when the decoder needs more input or is drained.
bool receive(AVCodecContext* c, AVFrame* f, const std::string& what) {
  const int r = avcodec_receive_frame(c, f);
  if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return false;
  check_av(r, what);
  return true;
}

}  // namespace

RgbImage read_image(const std::string& path) {
  const std::string what = "cannot read image " + path;
  AVFormatContext* raw = nullptr;
  check_av(avformat_open_input(&raw, path.c_str(), nullptr, nullptr), what);
  std::unique_ptr<AVFormatContext, FormatCloser> ic(raw);
  check_av(avformat_find_stream_info(ic.get(), nullptr), what);
  const AVCodec* codec = nullptr;
  const int stream = av_find_best_stream(ic.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  check_av(stream, what + " (no image in it)");
  CodecPtr c(avcodec_alloc_context3(codec));
  check_av(avcodec_parameters_to_context(c.get(), ic->streams[stream]->codecpar), what);
  check_av(avcodec_open2(c.get(), codec, nullptr), what);
  FramePtr frame(av_frame_alloc());
  PacketPtr pkt(av_packet_alloc());
  while (av_read_frame(ic.get(), pkt.get()) >= 0) {
    const bool ours = pkt->stream_index == stream;
    if (ours) check_av(avcodec_send_packet(c.get(), pkt.get()), what);
    av_packet_unref(pkt.get());
    if (ours && receive(c.get(), frame.get(), what)) return frame_to_rgb(frame.get(), what);
  }
  check_av(avcodec_send_packet(c.get(), nullptr), what);
  if (receive(c.get(), frame.get(), what)) return frame_to_rgb(frame.get(), what);
  fail("image", what + ": no frame decoded");
}

RgbImage h264_roundtrip(const RgbImage& image, int crf) {
  const std::string what = "H.264 round trip of a conditioning image";
  // libx264 reports its statistics at the default level (on stderr even under --quiet); errors still come through.
  if (av_log_get_level() > AV_LOG_ERROR) av_log_set_level(AV_LOG_ERROR);
  const int h = static_cast<int>(image.height / 2 * 2), w = static_cast<int>(image.width / 2 * 2);
  LTX_CHECK(h > 0 && w > 0, "image", what, ": image ", image.width, "x", image.height, " is too small");
  const AVCodec* enc_codec = avcodec_find_encoder_by_name("libx264");
  LTX_CHECK(enc_codec != nullptr, "image", "this FFmpeg has no libx264 encoder");
  CodecPtr enc(avcodec_alloc_context3(enc_codec));
  enc->width = w;
  enc->height = h;
  enc->pix_fmt = AV_PIX_FMT_YUV420P;
  enc->time_base = AVRational{1, 1};  // PyAV add_stream(rate=1)
  enc->framerate = AVRational{1, 1};
  av_opt_set(enc->priv_data, "crf", std::to_string(crf).c_str(), 0);
  av_opt_set(enc->priv_data, "preset", "veryfast", 0);
  check_av(avcodec_open2(enc.get(), enc_codec, nullptr), what + ": opening libx264");

  // RGB (the top-left even crop, as encode_single_frame slices) -> yuv420p.
  FramePtr yuv(av_frame_alloc());
  yuv->format = AV_PIX_FMT_YUV420P;
  yuv->width = w;
  yuv->height = h;
  check_av(av_frame_get_buffer(yuv.get(), 0), what);
  std::unique_ptr<SwsContext, SwsFree> to_yuv(
      sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nullptr, nullptr, nullptr));
  LTX_CHECK(to_yuv != nullptr, "image", what, ": cannot create the RGB -> YUV converter");
  // The top-left w x h of the image in rows padded to 64 bytes (swscale reads whole blocks past a row's end).
  const int src_row = (w * 3 + 63) / 64 * 64;
  std::vector<uint8_t> padded(static_cast<size_t>(src_row) * (h + 1));
  for (int y = 0; y < h; ++y)
    std::memcpy(padded.data() + static_cast<size_t>(y) * src_row,
                image.rgb.data() + static_cast<size_t>(y) * image.width * 3, static_cast<size_t>(w) * 3);
  const uint8_t* src[1] = {padded.data()};
  const int src_stride[1] = {src_row};
  sws_scale(to_yuv.get(), src, src_stride, 0, h, yuv->data, yuv->linesize);
  yuv->pts = 0;

  const AVCodec* dec_codec = avcodec_find_decoder(AV_CODEC_ID_H264);
  LTX_CHECK(dec_codec != nullptr, "image", "this FFmpeg has no H.264 decoder");
  CodecPtr dec(avcodec_alloc_context3(dec_codec));
  check_av(avcodec_open2(dec.get(), dec_codec, nullptr), what + ": opening the H.264 decoder");
  FramePtr out(av_frame_alloc());
  PacketPtr pkt(av_packet_alloc());
  check_av(avcodec_send_frame(enc.get(), yuv.get()), what);
  check_av(avcodec_send_frame(enc.get(), nullptr), what);
  while (true) {
    const int r = avcodec_receive_packet(enc.get(), pkt.get());
    if (r == AVERROR_EOF) break;
    check_av(r, what);
    check_av(avcodec_send_packet(dec.get(), pkt.get()), what);
    av_packet_unref(pkt.get());
    if (receive(dec.get(), out.get(), what)) return frame_to_rgb(out.get(), what);
  }
  check_av(avcodec_send_packet(dec.get(), nullptr), what);
  if (receive(dec.get(), out.get(), what)) return frame_to_rgb(out.get(), what);
  fail("image", what + ": no frame came back");
}

}  // namespace ltx::io
