// A golden case (tests/golden/README.md): a manifest, the official weights, inputs and expected tensors.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "io/json.h"
#include "ltx/options.hpp"
#include "verify/compare.h"

namespace ltx {

// Precision (Validation: f32 everywhere; Production: the engine's bf16) is the public API's (ltx/options.hpp).
Precision precision_from_name(const std::string& name);  // "validation" | "production"
// The dtype a runner loads a component's matrices in for that precision.
inline DType compute_dtype(Precision p) { return p == Precision::Validation ? DType::F32 : DType::BF16; }

struct GoldenCase {
  std::string dir;
  std::string component;  // e.g. "dit", "gemma3_text"
  std::string name;       // the case directory's name
  nlohmann::json manifest;
  std::vector<std::string> outputs;
  std::vector<std::string> intermediates;

  std::string weights_path() const;
  std::string inputs_path() const;
  std::string expected_path() const;
  const nlohmann::json& params() const { return manifest.at("params"); }
  // The case's tolerance; in production a tensor listed in tolerance.production_per_tensor (each tensor's own
  // bound, measured against the reference's bf16 run by tools/reference/golden_case.py) gets its own.
  CompareOptions tolerance(Precision p) const;
  CompareOptions tolerance(Precision p, const std::string& tensor) const;
};

// Reads and validates dir/manifest.json; throws ltx::Error naming the file on a malformed manifest.
GoldenCase load_golden_case(const std::string& dir);

// Every directory holding a manifest.json below the given roots (a root may itself be a case), sorted.
std::vector<std::string> find_golden_cases(const std::vector<std::string>& roots);

}  // namespace ltx
