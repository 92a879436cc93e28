// What the FFmpeg readers and writers share: owners for FFmpeg's objects, error messages, and decoding to RGB.
#pragma once

#include <memory>
#include <string>

#include "io/image_read.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

namespace ltx::io::ff {

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
using InputPtr = std::unique_ptr<AVFormatContext, FormatCloser>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;

std::string av_message(int code);
// Throws ltx::Error(domain, what + ": " + FFmpeg's message) when code < 0.
void check_av(int code, const char* domain, const std::string& what);

// The containers and image formats the readers open (FFmpeg demuxer names): video and audio files, single images and
// image sequences. Not the demuxers that open other files or URLs named in the input (HLS and DASH playlists,
// concat lists, ...): a hostile "video" must not make the engine read, and put into its output, another file.
extern const char* const kReadableFormats;

// Opens a file (or an image-sequence pattern such as dir/frame_%05d.png) of one of kReadableFormats through the
// file protocol only, and reads its stream info. A file of another format is refused naming the format it is. The
// first call caps any one FFmpeg allocation at 512 MiB for the process (headers claim sizes before they are read)
// and quiets FFmpeg's log to fatal messages (the thrown errors say what went wrong).
InputPtr open_input(const std::string& path, const char* domain, const std::string& what);
// Refuses the picture `stream` of `ic` states before anything is decoded at that size: larger than 16384 a side or
// 2^25 pixels (8K UHD fits), or over a megapixel from a file of less than a byte per 1024 pixels (no real encoding
// compresses that far). A decoder allocates what a hostile header claims (a 100-byte BMP may claim 2053x49411).
void check_picture_size(const AVFormatContext* ic, int stream, const char* domain, const std::string& what);
// A decoder opened for `stream` of `ic`.
CodecPtr open_decoder(const AVFormatContext* ic, int stream, const char* domain, const std::string& what);

// Any decoded frame -> RGB24 through swscale (bilinear, swscale's default BT.601 matrix, as PyAV's reformat).
RgbImage frame_to_rgb(const AVFrame* f, const char* domain, const std::string& what);
// Receives the next decoded frame; false when the decoder needs more input or is drained.
bool receive_frame(AVCodecContext* c, AVFrame* f, const char* domain, const std::string& what);

}  // namespace ltx::io::ff
