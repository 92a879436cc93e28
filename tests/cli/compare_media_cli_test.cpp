// `ltx compare-media`: figures with known values on files written here (PNG sequences, 16-bit WAVs), --check's exit
// code, and a clear error for a file that is not media.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "io/png_write.h"
#include "io/test_files.h"
#include "io/wav_write.h"
#include "run_ltx.h"

namespace ltx {
namespace {

// Three 24x20 frames of one value each, as dir/frame_%05d.png.
std::string constant_frames(test::TempDir& dir, const std::string& name, uint8_t value) {
  const std::vector<uint8_t> rgb(24 * 20 * 3, value);
  for (int f = 0; f < 3; ++f) io::write_png(dir.file(name + "_" + std::to_string(f) + ".png"), 20, 24, rgb);
  return dir.file(name + "_%d.png");
}

std::string sine_wav(test::TempDir& dir, const std::string& name, float gain) {
  std::vector<float> planar(2 * 4800);
  for (size_t i = 0; i < planar.size(); ++i) planar[i] = gain * 0.5f * std::sin(0.05f * static_cast<float>(i));
  io::write_wav(dir.file(name), 48000, 2, planar);
  return dir.file(name);
}

TEST(CliCompareMedia, FramesHaveTheirKnownPsnrAndSsim) {
  test::TempDir dir;
  const std::string a = constant_frames(dir, "a", 100), b = constant_frames(dir, "b", 110);
  const CliRun same = run_ltx("compare-media '" + a + "' '" + a + "'");
  EXPECT_EQ(same.code, 0) << same.output;
  EXPECT_TRUE(has(same.output, "video  3 frames 24x20: PSNR inf dB, SSIM 1.000000")) << same.output;
  // MSE (10/255)^2: PSNR 20·log10(25.5) = 28.13 dB; constant planes: SSIM = (2ab + C1) / (a² + b² + C1).
  const CliRun r = run_ltx("compare-media '" + a + "' '" + b + "'");
  EXPECT_EQ(r.code, 0) << r.output;
  const double x = 100.0 / 255, y = 110.0 / 255, ssim = (2 * x * y + 1e-4) / (x * x + y * y + 1e-4);
  char want[64];
  std::snprintf(want, sizeof want, "PSNR 28.13 dB, SSIM %.6f", ssim);
  EXPECT_TRUE(has(r.output, want)) << r.output << " wanted " << want;
  const CliRun checked = run_ltx("compare-media '" + a + "' '" + b + "' --check");
  EXPECT_EQ(checked.code, 1) << checked.output;  // 28 dB misses the 40 dB gate
  EXPECT_TRUE(has(checked.output, "(gates FAIL)")) << checked.output;
}

TEST(CliCompareMedia, WaveformsHaveTheirKnownRelativeL2AndCosine) {
  test::TempDir dir;
  const std::string a = sine_wav(dir, "a.wav", 1.0f), b = sine_wav(dir, "b.wav", 1.05f);
  const CliRun r = run_ltx("compare-media " + a + " " + b + " --check");
  EXPECT_EQ(r.code, 0) << r.output;  // rel L2 0.05/1.05 = 0.0476 (within 16-bit rounding), cosine 1
  EXPECT_TRUE(has(r.output, "audio  4800 samples x 2 channels at 48000 Hz: rel L2 0.047")) << r.output;
  EXPECT_TRUE(has(r.output, "cosine 1.00000000")) << r.output;
  EXPECT_TRUE(has(r.output, "(gates pass)")) << r.output;
}

TEST(CliCompareMedia, NotMediaIsAClearError) {
  test::TempDir dir;
  std::ofstream(dir.file("x.txt")) << "not media";
  const CliRun r = run_ltx("compare-media " + dir.file("x.txt") + " " + dir.file("x.txt"));
  EXPECT_NE(r.code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "cannot read the video of " + dir.file("x.txt"))) << r.output;
  const CliRun one = run_ltx("compare-media " + dir.file("x.txt"));
  EXPECT_NE(one.code, 0);
  EXPECT_TRUE(has(one.output, "needs two files")) << one.output;
}

}  // namespace
}  // namespace ltx
