// The GGUF reader (io/gguf.h): header, metadata of every value type (arrays, strings), tensor infos of every block
// type and their data read as floats; then what the engine derives from the metadata: Gemma 3's configuration and
// tokenizer vocabulary, and an mmproj file's vision configuration.
#include "io/gguf.h"

#include "core/error.h"
#include "fuzz_target.h"
#include "models/gemma3/config.h"
#include "models/gemma3/tokenizer.h"
#include "models/gemma3/vision_config.h"

LTX_FUZZ_TARGET(gguf) {
  static ltx::fuzz::InputFile file("gguf");
  try {
    const ltx::GGUFFile f = ltx::GGUFFile::open(file.write(data, size));
    double sum = 0.0;
    for (const ltx::GGUFTensorInfo& t : f.tensors())
      if (t.dtype && t.shape.numel() <= (int64_t{1} << 20))
        for (float v : f.get(t.name).to_floats()) sum += v;
    for (const auto& parse : {+[](const ltx::GGUFFile& g) { (void)ltx::gemma3::Config::from_gguf(g); },
                              +[](const ltx::GGUFFile& g) { (void)ltx::gemma3::VisionConfig::from_mmproj(g); },
                              +[](const ltx::GGUFFile& g) { (void)ltx::gemma3::Tokenizer::from_gguf(g); }}) {
      try {
        parse(f);
      } catch (const ltx::Error&) {
      }
    }
    return sum == 0.5 ? 1 : 0;
  } catch (const ltx::Error&) {
    return 0;
  }
}
