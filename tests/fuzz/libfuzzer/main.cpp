// One fuzz target as a libFuzzer binary (built with LTX_FUZZ=ON by clang: scripts/fuzz): the target is named by
// LTX_FUZZ_TARGET_NAME at compile time.
#include "fuzz/targets/fuzz_target.h"

#define LTX_FUZZ_FUNCTION_(name) ltx_fuzz_##name
#define LTX_FUZZ_FUNCTION(name) LTX_FUZZ_FUNCTION_(name)

int LTX_FUZZ_FUNCTION(LTX_FUZZ_TARGET_NAME)(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return LTX_FUZZ_FUNCTION(LTX_FUZZ_TARGET_NAME)(data, size);
}
