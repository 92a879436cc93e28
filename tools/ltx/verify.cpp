// `ltx verify DIR... [--precision validation|production] [--backend NAME [--xla-plugin FILE]] [--verbose] [--save
// DIR] [--gates]`: runs every golden case below the folders, compiled for the backend (default cpu). --save writes what
// each case computed to DIR/<case>.safetensors (for `ltx compare`); --gates holds every case that decodes media to
// issue 19's end-to-end gates, production against validation.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "io/safetensors.h"
#include "verify/components.h"
#include "verify/media_gates.h"
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

constexpr const char* kUsage =
    "usage: ltx verify DIR... [--precision validation|production] [--backend NAME [--xla-plugin FILE]] [--verbose] "
    "[--save DIR] "
    "[--gates]";

void save_produced(const CaseResult& r, const std::string& dir) {
  std::vector<std::pair<std::string, Tensor>> tensors(r.produced.begin(), r.produced.end());
  const std::string name = dir + "/" + std::filesystem::path(r.dir).filename().string() + ".safetensors";
  write_safetensors(name, tensors);
}

std::string gate_line(const MediaGateResult& r) {
  char buf[512];
  std::string line;
  if (r.frames) {
    std::snprintf(buf, sizeof buf, "video %s (gates PSNR >= %.2f dB, SSIM >= %.4f%s)", describe(*r.frames).c_str(),
                  r.gates.min_psnr_db, r.gates.min_ssim,
                  r.official_frames ? (", official bf16: " + describe(*r.official_frames)).c_str() : "");
    line += buf;
  }
  if (r.audio) {
    std::snprintf(buf, sizeof buf, "%saudio %s (gates rel L2 <= %.4f, cosine >= %.4f%s)", line.empty() ? "" : "; ",
                  describe(*r.audio).c_str(), r.gates.max_rel_l2, r.gates.min_cosine,
                  r.official_audio ? (", official bf16: " + describe(*r.official_audio)).c_str() : "");
    line += buf;
  }
  return line;
}

// --gates: every case that decodes media, production against validation.
int verify_gates(const std::vector<std::string>& roots, const ComponentRegistry& registry) {
  int passed = 0, failed = 0;
  for (const std::string& dir : find_golden_cases(roots)) {
    const std::optional<MediaGateResult> r = check_media_gates(dir, registry);
    if (!r) continue;
    (r->pass() ? passed : failed) += 1;
    std::printf("%s  %s\n      %s\n", r->pass() ? "PASS" : "FAIL", dir.c_str(), gate_line(*r).c_str());
  }
  std::printf("verify --gates: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int verify(Args args) {
  std::vector<std::string> roots;
  Precision precision = Precision::Validation;
  bool verbose = false, gates = false;
  std::string save_dir, backend_name = "cpu", xla_plugin;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string a = args[i];
    if (a == "--precision") {
      LTX_CHECK(i + 1 < args.size(), "verify", "--precision needs a value");
      precision = precision_from_name(args[++i]);
    } else if (a == "--backend") {
      LTX_CHECK(i + 1 < args.size(), "verify", "--backend needs a name");
      backend_name = args[++i];
    } else if (a == "--xla-plugin") {
      LTX_CHECK(i + 1 < args.size(), "verify", "--xla-plugin needs a file");
      xla_plugin = args[++i];
    } else if (a == "--save") {
      LTX_CHECK(i + 1 < args.size(), "verify", "--save needs a folder");
      save_dir = args[++i];
      LTX_CHECK(std::filesystem::is_directory(save_dir), "verify", "--save: ", save_dir, " is not a folder");
    } else if (a == "--gates") {
      gates = true;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (a.rfind("--", 0) == 0) {
      fail("verify", "unknown option " + a + "\n" + kUsage);
    } else {
      roots.push_back(a);
    }
  }
  LTX_CHECK(!roots.empty(), "verify", kUsage);
  use_golden_backend(backend_named(backend_name, xla_plugin));

  ComponentRegistry registry;
  register_builtin_components(registry);
  if (gates) return verify_gates(roots, registry);
  int passed = 0, failed = 0, missing = 0;
  for (const std::string& dir : find_golden_cases(roots)) {
    const CaseResult r = run_golden_case(dir, precision, registry);
    if (!save_dir.empty() && !r.produced.empty()) save_produced(r, save_dir);
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
