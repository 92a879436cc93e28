// The golden-case harness itself: a case passes only when every output matches, a perturbed expected tensor
// fails, a missing output fails, and a component the engine lacks is "not implemented", never passed.
#include "verify/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "io/safetensors.h"
#include "verify/components.h"

namespace ltx {
namespace {
namespace fs = std::filesystem;

class GoldenHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ltx_verify_test_" + std::to_string(::getpid()));
    fs::create_directories(root_);
    // A test component: y = 2·x (exact in f32), with an intermediate "x.copy".
    registry_.add("double_it", [](const GoldenCase& c, Precision) {
      const Tensor x = SafetensorsFile::open(c.inputs_path()).get("x");
      std::vector<float> v = x.to_floats();
      for (float& f : v) f *= 2.0f;
      return std::map<std::string, Tensor>{{"y", Tensor::from_floats(DType::F32, x.shape(), v)}, {"x.copy", x.clone()}};
    });
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes a case whose expected y is 2·x, optionally perturbed at one element.
  std::string make_case(const std::string& name, const std::string& component, float perturb = 0.0f,
                        bool with_y = true) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    const std::vector<float> x = {0.5f, -1.25f, 3.0f, 7.5f, -0.125f, 2.0f};
    std::vector<float> y;
    for (float f : x) y.push_back(2.0f * f);
    y[3] += perturb;
    const Tensor tx = Tensor::from_floats(DType::F32, {2, 3}, x);
    std::vector<std::pair<std::string, Tensor>> inputs = {{"x", tx}};
    std::vector<std::pair<std::string, Tensor>> expected = {{"x.copy", tx}};
    if (with_y) expected.emplace_back("y", Tensor::from_floats(DType::F32, {2, 3}, y));
    write_safetensors((dir / "inputs.safetensors").string(), inputs);
    write_safetensors((dir / "expected.safetensors").string(), expected);
    write_safetensors((dir / "weights.safetensors").string(), inputs);
    std::ofstream((dir / "manifest.json").string())
        << R"({"format": 1, "component": ")" << component << R"(", "case": ")" << name
        << R"(", "weights": "weights.safetensors", "inputs": "inputs.safetensors",
            "expected": "expected.safetensors", "params": {}, "outputs": ["y"], "intermediates": ["x.copy"],
            "tolerance": {"validation": {"atol": 1e-6, "rtol": 0}, "production": {"atol": 1e-2, "rtol": 0}}})";
    return dir.string();
  }

  fs::path root_;
  ComponentRegistry registry_;
};

TEST_F(GoldenHarness, MatchingCasePasses) {
  const CaseResult r = run_golden_case(make_case("good", "double_it"), Precision::Validation, registry_);
  EXPECT_EQ(r.status, CaseResult::Status::Passed) << r.error;
  EXPECT_EQ(r.tensors.size(), 2u);
}

TEST_F(GoldenHarness, PerturbedExpectedTensorFails) {
  const CaseResult r = run_golden_case(make_case("bad", "double_it", 1e-3f), Precision::Validation, registry_);
  EXPECT_EQ(r.status, CaseResult::Status::Failed);
  bool y_failed = false;
  for (const auto& t : r.tensors) y_failed = y_failed || (t.name == "y" && !t.ok() && t.n_mismatched == 1);
  EXPECT_TRUE(y_failed);
  // The same perturbation is inside the looser production tolerance.
  EXPECT_EQ(run_golden_case(make_case("bad2", "double_it", 1e-3f), Precision::Production, registry_).status,
            CaseResult::Status::Passed);
}

// A tensor listed in production_per_tensor is held to its own bound: the 1e-3 perturbation passes the case-wide
// 1e-2 but fails y's 1e-4, while x.copy (exact) passes its own.
TEST_F(GoldenHarness, PerTensorProductionToleranceIsUsed) {
  const std::string dir = make_case("per_tensor", "double_it", 1e-3f);
  std::ifstream in(dir + "/manifest.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = R"("production": {"atol": 1e-2, "rtol": 0})";
  ASSERT_NE(text.find(key), std::string::npos);
  text.replace(
      text.find(key), key.size(),
      key + R"(, "production_per_tensor": {"y": {"atol": 1e-4, "rtol": 0}, "x.copy": {"atol": 0, "rtol": 0}})");
  std::ofstream(dir + "/manifest.json") << text;
  const CaseResult r = run_golden_case(dir, Precision::Production, registry_);
  EXPECT_EQ(r.status, CaseResult::Status::Failed);
  for (const auto& t : r.tensors) EXPECT_EQ(t.ok(), t.name == "x.copy") << t.name;
  EXPECT_EQ(run_golden_case(dir, Precision::Validation, registry_).status, CaseResult::Status::Failed);
}

TEST_F(GoldenHarness, OutputTheComponentDoesNotProduceFails) {
  ComponentRegistry lazy;
  lazy.add("double_it", [](const GoldenCase&, Precision) { return std::map<std::string, Tensor>{}; });
  const CaseResult r = run_golden_case(make_case("lazy", "double_it"), Precision::Validation, lazy);
  EXPECT_EQ(r.status, CaseResult::Status::Failed);
}

TEST_F(GoldenHarness, UnknownComponentIsNotImplemented) {
  const CaseResult r = run_golden_case(make_case("later", "dit"), Precision::Validation, registry_);
  EXPECT_EQ(r.status, CaseResult::Status::NotImplemented);
}

TEST_F(GoldenHarness, MalformedManifestFailsWithItsPath) {
  const fs::path dir = root_ / "broken";
  fs::create_directories(dir);
  std::ofstream((dir / "manifest.json").string()) << R"({"format": 1, "component": )";
  const CaseResult r = run_golden_case(dir.string(), Precision::Validation, registry_);
  EXPECT_EQ(r.status, CaseResult::Status::Failed);
  EXPECT_NE(r.error.find("manifest.json"), std::string::npos) << r.error;
}

TEST_F(GoldenHarness, FindsCasesRecursively) {
  make_case("a", "double_it");
  make_case("b", "dit");
  EXPECT_EQ(find_golden_cases({root_.string()}).size(), 2u);
  EXPECT_THROW(find_golden_cases({(root_ / "nope").string()}), Error);
}

}  // namespace
}  // namespace ltx

namespace ltx {
namespace {
namespace fs = std::filesystem;

// The committed schedule golden passes through the built-in components, and the same case with one expected
// value nudged by 1e-5 fails: the harness can fail on real goldens.
TEST(GoldenHarnessOnCommittedCases, PerturbedScheduleGoldenFails) {
  const fs::path src = fs::path(LTX_SOURCE_DIR) / "tests/golden/schedule/ltx2_scheduler";
  ASSERT_TRUE(fs::exists(src / "manifest.json"));
  ComponentRegistry registry;
  register_builtin_components(registry);
  EXPECT_EQ(run_golden_case(src.string(), Precision::Validation, registry).status, CaseResult::Status::Passed);

  const fs::path dir = fs::temp_directory_path() / ("ltx_verify_perturbed_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(src, dir);
  std::vector<std::pair<std::string, Tensor>> tensors;
  {
    const SafetensorsFile expected = SafetensorsFile::open((dir / "expected.safetensors").string());
    for (const TensorInfo& info : expected.tensors()) tensors.emplace_back(info.name, expected.get(info.name).clone());
  }
  std::vector<float> v = tensors[0].second.to_floats();
  v[1] += 1e-5f;
  tensors[0].second = Tensor::from_floats(DType::F32, tensors[0].second.shape(), v);
  write_safetensors((dir / "expected.safetensors").string(), tensors);
  const CaseResult r = run_golden_case(dir.string(), Precision::Validation, registry);
  EXPECT_EQ(r.status, CaseResult::Status::Failed);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltx
