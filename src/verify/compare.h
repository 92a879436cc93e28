// Per-tensor numerical comparison of two tensor sets (an engine dump against a reference dump).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ltx {

class SafetensorsFile;

struct CompareOptions {
  double atol = 1e-5;
  double rtol = 1e-4;
};

struct TensorComparison {
  enum class Status { Ok, Fail, ShapeMismatch, MissingInB, ExtraInB };
  std::string name;
  Status status = Status::Ok;
  std::optional<DType> dtype_a, dtype_b;  // absent for the side that lacks the tensor
  Shape shape_a, shape_b;
  // Filled when the shapes match; computed in f64.
  double max_abs = 0;        // max |a - b|
  double mean_abs = 0;       // mean |a - b|
  double rel_l2 = 0;         // ||a - b|| / ||b||; 0 when both are zero, inf when only b is
  int64_t n_mismatched = 0;  // elements outside atol + rtol * |b| (NaN anywhere counts)
  double worst_ratio = 0;    // max |a - b| / (atol + rtol * |b|): 1 is at the bound (NaN when any value is)
  double tolerance = 0;      // the atol this tensor was compared with (rtol when atol is 0)
  bool ok() const { return status == Status::Ok; }
  bool dtype_differs() const { return dtype_a && dtype_b && *dtype_a != *dtype_b; }
};

// Compares values with allclose semantics: |a - b| <= atol + rtol * |b| for every element, as torch.allclose
// (equal_nan=False). Shapes must match for values to be compared; dtypes may differ (both convert to f64).
TensorComparison compare_tensors(const std::string& name, const Tensor& a, const Tensor& b,
                                 const CompareOptions& options = {});

struct CompareReport {
  std::vector<TensorComparison> tensors;  // in name order: tensors of A, then those only in B
  int n_ok = 0;
  int n_failed = 0;   // value or shape failures
  int n_missing = 0;  // in A, not in B
  int n_extra = 0;    // in B, not in A
  bool passed() const { return n_failed == 0 && n_missing == 0; }
};

// Compares every tensor of `a` with the tensor of the same name in `b`.
CompareReport compare_files(const SafetensorsFile& a, const SafetensorsFile& b, const CompareOptions& options = {});

}  // namespace ltx
