#include "io/image_read.h"

#include <cstring>
#include <memory>

#include "core/error.h"
#include "io/ffmpeg_util.h"

extern "C" {
#include <libavutil/log.h>
#include <libavutil/opt.h>
}

namespace ltx::io {
namespace {

using ff::check_av;
using ff::CodecPtr;
using ff::FramePtr;
using ff::PacketPtr;
using ff::SwsFree;

constexpr const char* kDomain = "image";

}  // namespace

RgbImage read_image(const std::string& path) {
  const std::string what = "cannot read image " + path;
  const ff::InputPtr ic = ff::open_input(path, kDomain, what);
  const int stream = av_find_best_stream(ic.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  check_av(stream, kDomain, what + " (no image in it)");
  ff::check_picture_size(ic.get(), stream, kDomain, what);
  const CodecPtr c = ff::open_decoder(ic.get(), stream, kDomain, what);
  FramePtr frame(av_frame_alloc());
  PacketPtr pkt(av_packet_alloc());
  while (av_read_frame(ic.get(), pkt.get()) >= 0) {
    const bool ours = pkt->stream_index == stream;
    if (ours) check_av(avcodec_send_packet(c.get(), pkt.get()), kDomain, what);
    av_packet_unref(pkt.get());
    if (ours && ff::receive_frame(c.get(), frame.get(), kDomain, what))
      return ff::frame_to_rgb(frame.get(), kDomain, what);
  }
  check_av(avcodec_send_packet(c.get(), nullptr), kDomain, what);
  if (ff::receive_frame(c.get(), frame.get(), kDomain, what)) return ff::frame_to_rgb(frame.get(), kDomain, what);
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
  check_av(avcodec_open2(enc.get(), enc_codec, nullptr), kDomain, what + ": opening libx264");

  // RGB (the top-left even crop, as encode_single_frame slices) -> yuv420p.
  FramePtr yuv(av_frame_alloc());
  yuv->format = AV_PIX_FMT_YUV420P;
  yuv->width = w;
  yuv->height = h;
  check_av(av_frame_get_buffer(yuv.get(), 0), kDomain, what);
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
  check_av(avcodec_open2(dec.get(), dec_codec, nullptr), kDomain, what + ": opening the H.264 decoder");
  FramePtr out(av_frame_alloc());
  PacketPtr pkt(av_packet_alloc());
  check_av(avcodec_send_frame(enc.get(), yuv.get()), kDomain, what);
  check_av(avcodec_send_frame(enc.get(), nullptr), kDomain, what);
  while (true) {
    const int r = avcodec_receive_packet(enc.get(), pkt.get());
    if (r == AVERROR_EOF) break;
    check_av(r, kDomain, what);
    check_av(avcodec_send_packet(dec.get(), pkt.get()), kDomain, what);
    av_packet_unref(pkt.get());
    if (ff::receive_frame(dec.get(), out.get(), kDomain, what)) return ff::frame_to_rgb(out.get(), kDomain, what);
  }
  check_av(avcodec_send_packet(dec.get(), nullptr), kDomain, what);
  if (ff::receive_frame(dec.get(), out.get(), kDomain, what)) return ff::frame_to_rgb(out.get(), kDomain, what);
  fail("image", what + ": no frame came back");
}

}  // namespace ltx::io
