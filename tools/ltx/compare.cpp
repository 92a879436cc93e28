// `ltx compare A B [--atol X] [--rtol Y]`: per-tensor errors between two safetensors files (B is the reference).
#include "verify/compare.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "commands.h"
#include "core/error.h"
#include "io/safetensors.h"

namespace ltx::cli {
namespace {

constexpr const char* kUsage = "usage: ltx compare A.safetensors B.safetensors [--atol X] [--rtol Y]";

double parse_tolerance(std::string_view flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  LTX_CHECK(end != text && *end == '\0' && v >= 0, "compare", flag, " needs a non-negative number, got '", text, "'");
  return v;
}

std::string describe(const std::optional<DType>& dtype, const Shape& shape) {
  return std::string(dtype ? dtype_name(*dtype) : "?") + shape.str();
}

void print(const TensorComparison& c) {
  using S = TensorComparison::Status;
  const char* name = c.name.c_str();
  switch (c.status) {
    case S::MissingInB:
      std::printf("MISSING %s %s: not in B\n", name, describe(c.dtype_a, c.shape_a).c_str());
      return;
    case S::ExtraInB:
      std::printf("EXTRA   %s %s: only in B\n", name, describe(c.dtype_b, c.shape_b).c_str());
      return;
    case S::ShapeMismatch:
      std::printf("FAIL    %s: shape mismatch, A %s vs B %s\n", name, describe(c.dtype_a, c.shape_a).c_str(),
                  describe(c.dtype_b, c.shape_b).c_str());
      return;
    case S::Ok:
    case S::Fail:
      break;
  }
  std::printf("%-7s %s %s: max_abs %.3e mean_abs %.3e rel_l2 %.3e", c.ok() ? "OK" : "FAIL", name,
              describe(c.dtype_a, c.shape_a).c_str(), c.max_abs, c.mean_abs, c.rel_l2);
  if (c.dtype_differs()) std::printf(" (dtype differs: B is %s)", std::string(dtype_name(*c.dtype_b)).c_str());
  if (!c.ok())
    std::printf(" (%lld of %lld elements outside tolerance)", static_cast<long long>(c.n_mismatched),
                static_cast<long long>(c.shape_a.numel()));
  std::printf("\n");
}

}  // namespace

int compare(Args args) {
  std::string paths[2];
  int n_paths = 0;
  CompareOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--atol" || arg == "--rtol") {
      LTX_CHECK(i + 1 < args.size(), "compare", arg, " needs a value; ", kUsage);
      (arg == "--atol" ? options.atol : options.rtol) = parse_tolerance(arg, args[++i]);
    } else {
      LTX_CHECK(!arg.starts_with("--") && n_paths < 2, "compare", "unexpected argument '", arg, "'; ", kUsage);
      paths[n_paths++] = std::string(arg);
    }
  }
  LTX_CHECK(n_paths == 2, "compare", kUsage);

  const SafetensorsFile a = SafetensorsFile::open(paths[0]);
  const SafetensorsFile b = SafetensorsFile::open(paths[1]);
  const CompareReport report = compare_files(a, b, options);
  for (const auto& c : report.tensors) print(c);
  std::printf("%s: %d ok, %d failed, %d missing in B, %d extra in B (atol %g, rtol %g)\n",
              report.passed() ? "PASS" : "FAIL", report.n_ok, report.n_failed, report.n_missing, report.n_extra,
              options.atol, options.rtol);
  return report.passed() ? 0 : 1;
}

}  // namespace ltx::cli
