// `ltx verify DIR... [--precision validation|production] [--verbose]`: runs every golden case below the folders.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "verify/components.h"
#include "verify/runner.h"

namespace ltx::cli {
namespace {

const char* status_name(TensorComparison::Status s) {
  switch (s) {
    case TensorComparison::Status::Ok:
      return "ok";
    case TensorComparison::Status::Fail:
      return "FAIL";
    case TensorComparison::Status::ShapeMismatch:
      return "SHAPE";
    case TensorComparison::Status::MissingInB:
      return "MISSING";
    case TensorComparison::Status::ExtraInB:
      return "EXTRA";
  }
  return "?";
}

double worst_ratio(const CaseResult& r) {
  double w = 0;
  for (const auto& t : r.tensors) w = std::max(w, t.worst_ratio);
  return w;
}

void print_tensors(const CaseResult& r, bool all) {
  for (const auto& t : r.tensors) {
    if (t.ok() && !all) continue;
    std::printf("    %-7s %-48s max_abs %.3e  mean_abs %.3e  rel_l2 %.3e  mismatched %lld  worst %.2f of tol %.2g\n",
                status_name(t.status), t.name.c_str(), t.max_abs, t.mean_abs, t.rel_l2,
                static_cast<long long>(t.n_mismatched), t.worst_ratio, t.tolerance);
  }
}

}  // namespace

int verify(Args args) {
  std::vector<std::string> roots;
  Precision precision = Precision::Validation;
  bool verbose = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--precision") {
      LTX_CHECK(i + 1 < args.size(), "verify", "--precision needs a value");
      precision = precision_from_name(args[++i]);
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a.rfind("--", 0) == 0) {
      fail("verify", "unknown option " + a);
    } else {
      roots.push_back(a);
    }
  }
  LTX_CHECK(!roots.empty(), "verify", "usage: ltx verify DIR... [--precision validation|production] [--verbose]");

  ComponentRegistry registry;
  register_builtin_components(registry);
  int passed = 0, failed = 0, missing = 0;
  for (const std::string& dir : find_golden_cases(roots)) {
    const CaseResult r = run_golden_case(dir, precision, registry);
    switch (r.status) {
      case CaseResult::Status::Passed:
        ++passed;
        std::printf("PASS  %s  (worst %.2f of tolerance)\n", dir.c_str(), worst_ratio(r));
        if (verbose) print_tensors(r, true);
        break;
      case CaseResult::Status::Failed:
        ++failed;
        std::printf("FAIL  %s%s%s\n", dir.c_str(), r.error.empty() ? "" : ": ", r.error.c_str());
        print_tensors(r, verbose);
        break;
      case CaseResult::Status::NotImplemented:
        ++missing;
        std::printf("N/I   %s (component '%s' not implemented)\n", dir.c_str(), r.component.c_str());
        break;
    }
  }
  std::printf("verify: %d passed, %d failed, %d not implemented\n", passed, failed, missing);
  return failed == 0 ? 0 : 1;
}

}  // namespace ltx::cli
