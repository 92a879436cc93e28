#include "io/png_write.h"

#include <cstring>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
}

#include "core/error.h"
#include "io/atomic_file.h"

namespace ltx::io {
namespace {

struct EncoderState {
  AVCodecContext* ctx = nullptr;
  AVFrame* frame = nullptr;
  AVPacket* packet = nullptr;
  ~EncoderState() {
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&ctx);
  }
};

void check(int code, const char* what) {
  if (code >= 0) return;
  char buf[128];
  av_strerror(code, buf, sizeof buf);
  fail("png", std::string(what) + ": " + buf);
}

}  // namespace

std::vector<uint8_t> encode_png(int64_t height, int64_t width, std::span<const uint8_t> rgb) {
  LTX_CHECK(height > 0 && width > 0 && height < (1 << 16) && width < (1 << 16), "png", "bad image size ", width, "x",
            height);
  LTX_CHECK(rgb.size() == static_cast<size_t>(height * width * 3), "png", "expected ", height * width * 3,
            " RGB bytes, got ", rgb.size());
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
  LTX_CHECK(codec != nullptr, "png", "this FFmpeg has no PNG encoder");
  EncoderState s;
  s.ctx = avcodec_alloc_context3(codec);
  s.frame = av_frame_alloc();
  s.packet = av_packet_alloc();
  LTX_CHECK(s.ctx && s.frame && s.packet, "png", "out of memory");
  s.ctx->width = static_cast<int>(width);
  s.ctx->height = static_cast<int>(height);
  s.ctx->pix_fmt = AV_PIX_FMT_RGB24;
  s.ctx->time_base = {1, 1};
  check(avcodec_open2(s.ctx, codec, nullptr), "opening the PNG encoder");
  s.frame->format = AV_PIX_FMT_RGB24;
  s.frame->width = s.ctx->width;
  s.frame->height = s.ctx->height;
  check(av_frame_get_buffer(s.frame, 0), "allocating a frame");
  for (int64_t y = 0; y < height; ++y)
    std::memcpy(s.frame->data[0] + y * s.frame->linesize[0], rgb.data() + y * width * 3,
                static_cast<size_t>(width * 3));
  check(avcodec_send_frame(s.ctx, s.frame), "encoding");
  check(avcodec_send_frame(s.ctx, nullptr), "flushing");
  std::vector<uint8_t> out;
  while (true) {
    const int r = avcodec_receive_packet(s.ctx, s.packet);
    if (r == AVERROR_EOF || r == AVERROR(EAGAIN)) break;
    check(r, "receiving the PNG");
    out.insert(out.end(), s.packet->data, s.packet->data + s.packet->size);
    av_packet_unref(s.packet);
  }
  LTX_CHECK(!out.empty(), "png", "the encoder produced nothing");
  return out;
}

void write_png(const std::string& path, int64_t height, int64_t width, std::span<const uint8_t> rgb) {
  const std::vector<uint8_t> bytes = encode_png(height, width, rgb);
  AtomicFile out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace ltx::io
