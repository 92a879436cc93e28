// Image files (io/image_read.h, FFmpeg's decoders: PNG, JPEG, WebP, BMP, ...) as `--image` and enhance_i2v read
// them, then the image path's resizes (gemma3/image_preprocess.h) on whatever size came out.
#include "core/error.h"
#include "fuzz_target.h"
#include "io/image_read.h"
#include "models/gemma3/image_preprocess.h"

LTX_FUZZ_TARGET(image) {
  static ltx::fuzz::InputFile file("image");
  try {
    const ltx::io::RgbImage image = ltx::io::read_image(file.write(data, size));
    (void)ltx::gemma3::enhance_image_pixels(image, 56, 28);
  } catch (const ltx::Error&) {
  }
  return 0;
}
