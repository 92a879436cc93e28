#include "verify/golden_case.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ltx {
namespace fs = std::filesystem;

Precision precision_from_name(const std::string& name) {
  if (name == "validation") return Precision::Validation;
  if (name == "production") return Precision::Production;
  fail("verify", "unknown precision '" + name + "' (validation or production)");
}

std::string GoldenCase::weights_path() const {
  return (fs::path(dir) / manifest.at("weights").get<std::string>()).string();
}
std::string GoldenCase::inputs_path() const {
  return (fs::path(dir) / manifest.at("inputs").get<std::string>()).string();
}
std::string GoldenCase::expected_path() const {
  return (fs::path(dir) / manifest.at("expected").get<std::string>()).string();
}

CompareOptions GoldenCase::tolerance(Precision p) const {
  const auto& t = manifest.at("tolerance").at(p == Precision::Validation ? "validation" : "production");
  return {t.at("atol").get<double>(), t.at("rtol").get<double>()};
}

CompareOptions GoldenCase::tolerance(Precision p, const std::string& tensor) const {
  const auto& t = manifest.at("tolerance");
  if (p == Precision::Production && t.contains("production_per_tensor")) {
    const auto& per = t.at("production_per_tensor");
    if (per.contains(tensor)) return {per.at(tensor).at("atol").get<double>(), per.at(tensor).at("rtol").get<double>()};
  }
  return tolerance(p);
}

GoldenCase load_golden_case(const std::string& dir) {
  const std::string path = (fs::path(dir) / "manifest.json").string();
  std::ifstream in(path);
  LTX_CHECK(in.good(), "verify", path, ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  GoldenCase c;
  c.dir = dir;
  try {
    c.manifest = nlohmann::json::parse(text.str());
    LTX_CHECK(c.manifest.at("format").get<int>() == 1, "verify", path, ": unsupported format ",
              c.manifest.at("format").dump());
    c.component = c.manifest.at("component").get<std::string>();
    c.name = c.manifest.at("case").get<std::string>();
    c.outputs = c.manifest.at("outputs").get<std::vector<std::string>>();
    c.intermediates = c.manifest.value("intermediates", std::vector<std::string>{});
    for (const char* key : {"weights", "inputs", "expected"}) c.manifest.at(key).get<std::string>();
    for (Precision p : {Precision::Validation, Precision::Production}) c.tolerance(p);
    if (c.manifest.at("tolerance").contains("production_per_tensor"))
      for (const auto& [name, t] : c.manifest.at("tolerance").at("production_per_tensor").items())
        c.tolerance(Precision::Production, name);
  } catch (const nlohmann::json::exception& e) {
    fail("verify", path + ": malformed manifest: " + e.what());
  }
  return c;
}

std::vector<std::string> find_golden_cases(const std::vector<std::string>& roots) {
  std::vector<std::string> dirs;
  for (const auto& root : roots) {
    LTX_CHECK(fs::exists(root), "verify", root, ": no such file or directory");
    if (fs::exists(fs::path(root) / "manifest.json")) {
      dirs.push_back(root);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.is_regular_file() && entry.path().filename() == "manifest.json")
        dirs.push_back(entry.path().parent_path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

}  // namespace ltx
