// Goldens for the matmul, attention, rope and conv op tests, made by tools/reference/make_op_goldens_b.py:
// tests/golden/ops/b/<family>.safetensors holds "<case>.<input>" and "<case>.out" (torch's result).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/tensor.h"
#include "io/safetensors.h"
#include "op_test_util.h"

namespace ltx::test {

inline Tensor golden_b(const std::string& family, const std::string& name) {
  static std::map<std::string, SafetensorsFile> files;  // gtest runs tests on one thread
  auto it = files.find(family);
  if (it == files.end())
    it = files
             .emplace(family, SafetensorsFile::open(std::string(LTX_SOURCE_DIR) + "/tests/golden/ops/b/" + family +
                                                    ".safetensors"))
             .first;
  return it->second.get(name);
}

// Tolerances against torch. f32: the same products summed in a different order differ by a few ulp of the
// partial sums (values here are O(1..10)). bf16: both sides round an f32 result that differs only in summation
// order, so the two roundings can land one bf16 ulp apart: at most 2^-7 of the magnitude (8 significant bits),
// plus the f32 discrepancy where cancellation leaves a value near zero.
inline constexpr float kF32Atol = 1e-5f;
inline constexpr float kF32Rtol = 1e-5f;
inline constexpr float kBf16Atol = 1e-5f;
inline constexpr float kBf16Rtol = 1.0f / 128.0f;

// Shape inference of `kind` must reject these inputs with an "[op] <name>: ..." error containing `fragment`.
inline void expect_op_error(OpKind kind, const OpAttrs& attrs, std::vector<TensorMeta> metas,
                            const std::string& fragment) {
  try {
    infer_output(kind, attrs, metas);
    ADD_FAILURE() << op_name(kind) << ": shape inference accepted invalid inputs (expected '" << fragment << "')";
  } catch (const Error& e) {
    const std::string msg = e.what();
    const std::string prefix = "[op] " + std::string(op_name(kind));
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << msg;
  }
}

}  // namespace ltx::test
