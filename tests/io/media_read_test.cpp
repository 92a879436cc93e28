// read_video / read_audio / read_image on hostile and bounded reads: a playlist naming another file is refused, never
// followed; a picture its file could not hold is refused; the bounds a caller gives stop the decoding there. The clips
// are the media fuzz target's seeds (tests/fuzz/make_corpus.py: 3 frames of 32x32 at 24 fps, a tenth of a second of 440
// Hz at 16 kHz).
#include "io/media_read.h"

#include <gtest/gtest.h>

#include "io/image_read.h"
#include "test_files.h"

namespace ltx {
namespace {

std::string seed(const std::string& name) { return std::string(LTX_SOURCE_DIR) + "/tests/fuzz/corpus/media/" + name; }

TEST(MediaRead, PlaylistsAndListsAreRefusedNotFollowed) {
  test::TempDir dir;
  // An HLS playlist whose segment is a readable clip: FFmpeg would open the clip named inside.
  const std::string clip = seed("h264_aac.mp4");
  test::write_bytes(dir.file("x.m3u8"),
                    "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\n" + clip + "\n#EXT-X-ENDLIST\n");
  test::expect_error([&] { io::read_video(dir.file("x.m3u8")); }, {"[media]", "x.m3u8", "it is hls", "mov,matroska"});
  test::expect_error([&] { io::read_audio(dir.file("x.m3u8")); }, {"it is hls"});
  // An ffconcat list naming the same clip, under an innocent name.
  test::write_bytes(dir.file("list.mp4"), "ffconcat version 1.0\nfile '" + clip + "'\n");
  test::expect_error([&] { io::probe_video(dir.file("list.mp4")); }, {"list.mp4", "it is concat"});
  // The clip itself reads.
  const auto video = io::read_video(clip);
  ASSERT_TRUE(video.has_value());
  EXPECT_EQ(video->frames, 3);
}

TEST(MediaRead, BoundsStopTheDecoding) {
  const auto two = io::read_video(seed("h264_aac.mp4"), 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->frames, 2);
  EXPECT_EQ(two->rgb.size(), size_t{2 * 32 * 32 * 3});

  const auto whole = io::read_audio(seed("tone.wav"));
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->sample_rate, 16000);
  EXPECT_EQ(whole->length(), 1600);
  const auto part = io::read_audio(seed("tone.wav"), 0.03);
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->length(), 480);
  // The same samples as the whole read's first.
  for (int64_t i = 0; i < part->length(); ++i)
    ASSERT_EQ(part->samples[static_cast<size_t>(i)], whole->samples[static_cast<size_t>(i)]);
}

TEST(MediaRead, PicturesLargerThanTheirFileCouldHoldAreRefused) {
  // Fuzzing's find: 55 bytes of RLE BMP claiming 1927x12491 pixels, which FFmpeg decoded into 24 Mpixel of nothing.
  const std::string bmp = std::string(LTX_SOURCE_DIR) + "/tests/fuzz/regressions/image/bmp_rle_55_bytes_24_mpixel";
  test::expect_error([&] { io::read_image(bmp); }, {"[image]", "1927x12491", "55 bytes", "1024 pixels a byte"});
  test::expect_error([&] { io::read_video(bmp); }, {"[media]", "1927x12491"});
}

}  // namespace
}  // namespace ltx
