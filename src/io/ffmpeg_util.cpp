#include "io/ffmpeg_util.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/error.h"

extern "C" {
#include <libavutil/avstring.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/pixdesc.h>
}

namespace ltx::io::ff {

std::string av_message(int code) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, buf, sizeof buf);
  return buf;
}

void check_av(int code, const char* domain, const std::string& what) {
  if (code < 0) fail(domain, what + ": " + av_message(code));
}

const char* const kReadableFormats =
    "mov,matroska,avi,flv,mpegts,mpeg,ogg,ivf,h264,hevc,m4v,mjpeg,wav,w64,aiff,caf,mp3,flac,aac,gif,image2,"
    "png_pipe,jpeg_pipe,bmp_pipe,webp_pipe,tiff_pipe,ppm_pipe,pgm_pipe,pam_pipe,qoi_pipe";

namespace {

// 2^25 pixels: an 8K UHD frame (7680x4320) fits; its largest buffer, 16-bit RGBA, is 256 MiB.
constexpr int64_t kMaxPictureSide = 16384, kMaxPicturePixels = int64_t{1} << 25;
// Pictures up to a megapixel are read from files of any size; larger ones need a byte per 1024 pixels.
constexpr int64_t kSmallPicturePixels = int64_t{1} << 20, kMaxPixelsPerByte = 1024;
// The most one FFmpeg allocation may take (av_max_alloc, process-wide; FFmpeg's default is 2 GiB): demuxers allocate
// what a header claims before reading it (a 158-byte WAV's INFO chunk claiming 1 GiB was a gigabyte memset).
constexpr size_t kMaxFfmpegAllocation = size_t{512} << 20;

// The demuxer FFmpeg's probe would pick for the file's first bytes (nothing opened but the file); "" when none.
std::string probed_format(const std::string& path) {
  std::vector<uint8_t> head(4096 + AVPROBE_PADDING_SIZE, 0);
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) return "";
  AVProbeData probe{};
  probe.filename = path.c_str();
  probe.buf = head.data();
  probe.buf_size = static_cast<int>(std::fread(head.data(), 1, 4096, f.get()));
  const AVInputFormat* format = av_probe_input_format(&probe, 1);
  return format != nullptr ? format->name : "";
}

}  // namespace

InputPtr open_input(const std::string& path, const char* domain, const std::string& what) {
  static std::once_flag limited;
  std::call_once(limited, [] {
    av_max_alloc(kMaxFfmpegAllocation);
    // FFmpeg's own log would repeat, less clearly, what the thrown error says.
    if (av_log_get_level() > AV_LOG_FATAL) av_log_set_level(AV_LOG_FATAL);
  });
  AVFormatContext* raw = avformat_alloc_context();
  LTX_CHECK(raw != nullptr, domain, what, ": out of memory");
  AVDictionary* options = nullptr;
  av_dict_set(&options, "format_whitelist", kReadableFormats, 0);
  av_dict_set(&options, "protocol_whitelist", "file", 0);
  const int opened = avformat_open_input(&raw, path.c_str(), nullptr, &options);  // frees raw on failure
  av_dict_free(&options);
  if (opened == AVERROR(EINVAL)) {
    const std::string format = probed_format(path);
    if (!format.empty() && !av_match_list(format.c_str(), kReadableFormats, ','))
      fail(domain, what + ": it is " + format + ", not a format read here (" + kReadableFormats + ")");
  }
  check_av(opened, domain, what);
  InputPtr ic(raw);
  check_av(avformat_find_stream_info(ic.get(), nullptr), domain, what);
  return ic;
}

CodecPtr open_decoder(const AVFormatContext* ic, int stream, const char* domain, const std::string& what) {
  const AVCodecParameters* par = ic->streams[stream]->codecpar;
  const AVCodec* codec = avcodec_find_decoder(par->codec_id);
  LTX_CHECK(codec != nullptr, domain, what, ": this FFmpeg has no decoder for ", avcodec_get_name(par->codec_id));
  CodecPtr c(avcodec_alloc_context3(codec));
  check_av(avcodec_parameters_to_context(c.get(), par), domain, what);
  c->max_pixels = kMaxPicturePixels;  // the decoder refuses larger frames, whatever the header said
  check_av(avcodec_open2(c.get(), codec, nullptr), domain, what);
  return c;
}

void check_picture_size(const AVFormatContext* ic, int stream, const char* domain, const std::string& what) {
  const AVCodecParameters* par = ic->streams[stream]->codecpar;
  const int64_t width = par->width, height = par->height, pixels = width * height;
  LTX_CHECK(width <= kMaxPictureSide && height <= kMaxPictureSide && pixels <= kMaxPicturePixels, domain, what,
            ": its header states ", width, "x", height, " pixels; at most ", kMaxPictureSide, " a side and ",
            kMaxPicturePixels, " pixels are read");
  // No real encoding stores a large picture in a few bytes (deflate's best is 1032:1 on bytes, a third of
  // kMaxPixelsPerByte): a 55-byte BMP claiming 1927x12491 made FFmpeg fill 24 Mpixel from nothing.
  const int64_t bytes = ic->pb != nullptr ? avio_size(ic->pb) : -1;
  LTX_CHECK(bytes <= 0 || pixels <= kSmallPicturePixels || pixels <= bytes * kMaxPixelsPerByte, domain, what,
            ": its header states ", width, "x", height, " pixels in a file of ", bytes,
            " bytes, more than any real encoding holds (", kMaxPixelsPerByte, " pixels a byte); the file is damaged");
}

RgbImage frame_to_rgb(const AVFrame* f, const char* domain, const std::string& what) {
  std::unique_ptr<SwsContext, SwsFree> sws(sws_getContext(f->width, f->height, static_cast<AVPixelFormat>(f->format),
                                                          f->width, f->height, AV_PIX_FMT_RGB24, SWS_BILINEAR, nullptr,
                                                          nullptr, nullptr));
  LTX_CHECK(sws != nullptr, domain, what, ": cannot convert pixel format ",
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

bool receive_frame(AVCodecContext* c, AVFrame* f, const char* domain, const std::string& what) {
  const int r = avcodec_receive_frame(c, f);
  if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return false;
  check_av(r, domain, what);
  return true;
}

}  // namespace ltx::io::ff
