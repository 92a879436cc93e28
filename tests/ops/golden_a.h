// Golden cases made by tools/reference/make_op_goldens_a.py: tests/golden/ops/a/<family>.safetensors holds, for
// each case, inputs "<case>.in0", "<case>.in1", ... and torch's output "<case>.out".
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "io/safetensors.h"
#include "op_test_util.h"

namespace ltx::test {

struct Tolerance {
  float atol = 0.0f;
  float rtol = 0.0f;
};

// Data movement (layout, resampling, casts): the same bytes, nothing to round.
inline constexpr Tolerance kExact{0.0f, 0.0f};
// bf16 cases: torch's expected values and ours are both f32 results on the same bf16 inputs, rounded once to
// bf16. The f32 results differ by a few f32 ulp (summation order, libm vs SLEEF), so after rounding they are
// equal or one bf16 ulp apart when they straddle a rounding boundary; one ulp is at most 2^-7 of the value.
// The atol covers results near zero, where the f32 difference itself (~1e-7 of the inputs' scale) is the limit.
inline constexpr Tolerance kBf16{1e-5f, 0.0078125f};

class GoldenFile {
 public:
  explicit GoldenFile(const std::string& family)
      : file_(SafetensorsFile::open(std::string(LTX_SOURCE_DIR) + "/tests/golden/ops/a/" + family + ".safetensors")) {}

  std::vector<Tensor> inputs(const std::string& name) const {
    std::vector<Tensor> in;
    while (file_.contains(name + ".in" + std::to_string(in.size())))
      in.push_back(file_.get(name + ".in" + std::to_string(in.size())));
    EXPECT_FALSE(in.empty()) << "golden case " << name << " has no inputs";
    return in;
  }
  Tensor output(const std::string& name) const { return file_.get(name + ".out"); }

 private:
  SafetensorsFile file_;
};

// Runs one golden case three ways and checks each against torch's output: the reference kernel on the stored
// (contiguous) inputs, the reference kernel on non-contiguous copies of them, and the dispatched kernel, which
// must also equal the reference bit for bit.
inline void check_golden(const GoldenFile& golden, const std::string& name, OpKind kind, const OpAttrs& attrs,
                         Tolerance tol) {
  SCOPED_TRACE(name);
  const std::vector<Tensor> in = golden.inputs(name);
  const Tensor expected = golden.output(name);
  const Tensor ref = run_reference(kind, attrs, in);
  EXPECT_EQ(ref.dtype(), expected.dtype());
  expect_close(ref, expected, tol.atol, tol.rtol, "contiguous");

  std::vector<Tensor> strided;
  for (const Tensor& t : in) strided.push_back(non_contiguous(t));
  expect_close(run_reference(kind, attrs, strided), expected, tol.atol, tol.rtol, "non-contiguous");

  expect_close(run_dispatched(kind, attrs, in), ref, 0.0f, 0.0f, "dispatched vs reference");
}

// Shape inference of `kind` on these metas must throw an ltx::Error whose message contains every fragment.
inline void expect_infer_error(OpKind kind, const OpAttrs& attrs, std::vector<TensorMeta> metas,
                               std::vector<std::string> fragments) {
  try {
    infer_output(kind, attrs, metas);
    ADD_FAILURE() << op_name(kind) << ": shape inference accepted invalid inputs";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[op] ", 0), 0u) << msg;
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

}  // namespace ltx::test
