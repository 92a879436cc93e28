// TorchGenerator against torch 2.15's own randn output (tests/data/noise, made by
// tools/reference/make_noise_goldens.py): every draw of every case must match bit for bit, f64 draws included.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/noise.h"

namespace ltx {
namespace {

struct GoldenDraw {
  DType dtype = DType::F32;
  bool f64 = false;  // a float64 draw (no Tensor dtype): TorchGenerator::fill_randn_f64
  Shape shape;
  uint64_t fnv = 0;
  int64_t count = 0;
  std::vector<uint64_t> head, tail;
};

struct GoldenCase {
  std::string name, gen;
  uint64_t seed = 0;
  std::vector<GoldenDraw> draws;
};

struct GoldenFile {
  std::string cpu_capability;
  uint64_t fresh_generator_seed = 0;
  std::vector<GoldenCase> cases;
};

Shape parse_shape(const std::string& text) {
  Shape shape;
  if (text == "scalar") return shape;
  std::stringstream in(text);
  std::string dim;
  while (std::getline(in, dim, 'x')) shape.push_back(std::stoll(dim));
  return shape;
}

std::vector<uint64_t> read_hex_until(std::istringstream& in, const std::string& stop) {
  std::vector<uint64_t> out;
  std::string word;
  while (in >> word && word != stop) out.push_back(std::stoull(word, nullptr, 16));
  return out;
}

GoldenFile load_golden(const std::string& file_name) {
  const std::string path = std::string(LTX_SOURCE_DIR) + "/tests/data/noise/" + file_name;
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << "missing golden " << path;
  GoldenFile golden;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "info") {
      std::string key, value;
      in >> key >> value;
      if (key == "cpu_capability") golden.cpu_capability = value;
      if (key == "fresh_generator_seed") golden.fresh_generator_seed = std::stoull(value);
    } else if (kind == "case") {
      GoldenCase c;
      std::string seed;
      in >> c.name >> c.gen >> seed;
      c.seed = std::stoull(seed);
      golden.cases.push_back(c);
    } else if (kind == "draw") {
      GoldenDraw d;
      std::string dtype, shape, fnv, head_word;
      in >> dtype >> shape >> fnv >> d.count >> head_word;
      d.f64 = dtype == "f64";
      if (!d.f64) d.dtype = *dtype_from_name(dtype);
      d.shape = parse_shape(shape);
      d.fnv = std::stoull(fnv, nullptr, 16);
      d.head = read_hex_until(in, "tail");
      d.tail = read_hex_until(in, "");
      golden.cases.back().draws.push_back(d);
    }
  }
  return golden;
}

// Bit patterns in element order: int32 words for f32, int16 for bf16/f16 (as the script dumps them).
std::vector<uint64_t> bit_patterns(const Tensor& t) {
  std::vector<uint64_t> bits(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = t.dtype() == DType::F32 ? t.data<uint32_t>()[i] : t.data<uint16_t>()[i];
  return bits;
}

// A float64 draw's int64 words.
std::vector<uint64_t> draw_f64(TorchGenerator& gen, const Shape& shape) {
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  gen.fill_randn_f64(v.data(), shape.numel());
  std::vector<uint64_t> bits(v.size());
  std::memcpy(bits.data(), v.data(), v.size() * sizeof(double));
  return bits;
}

uint64_t fnv1a64(const std::vector<uint64_t>& words) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t w : words) h = (h ^ w) * 0x100000001b3ull;
  return h;
}

// Draws every case's stream from a fresh TorchGenerator and compares every draw, counting the draws checked.
// "manual" and "object" cases both seed a new generator; "fresh" ones never seed it.
void check_golden_file(const GoldenFile& golden, RandnMath math, int& checked) {
  for (const GoldenCase& c : golden.cases) {
    TorchGenerator gen = c.gen == "fresh" ? TorchGenerator(kTorchDefaultSeed, math) : TorchGenerator(c.seed, math);
    EXPECT_EQ(gen.initial_seed(), c.seed) << c.name;
    for (size_t k = 0; k < c.draws.size(); ++k) {
      const GoldenDraw& d = c.draws[k];
      const std::vector<uint64_t> bits = d.f64 ? draw_f64(gen, d.shape) : bit_patterns(gen.randn(d.shape, d.dtype));
      const std::string where = c.name + " seed " + std::to_string(c.seed) + " draw " + std::to_string(k) + " " +
                                (d.f64 ? std::string("f64") : std::string(dtype_name(d.dtype))) + d.shape.str();
      ASSERT_EQ(static_cast<int64_t>(bits.size()), d.count) << where;
      const size_t n_head = std::min<size_t>(16, bits.size());
      for (size_t i = 0; i < n_head; ++i) ASSERT_EQ(bits[i], d.head[i]) << where << " element " << i;
      for (size_t i = 0; i < n_head; ++i)
        ASSERT_EQ(bits[bits.size() - n_head + i], d.tail[i]) << where << " element " << bits.size() - n_head + i;
      ASSERT_EQ(fnv1a64(bits), d.fnv) << where << ": head and tail match, some middle element differs";
      ++checked;
    }
  }
}

TEST(NoiseGolden, Avx2MathsMatchTorchOnX86) {
  const GoldenFile golden = load_golden("randn_avx2.txt");
  ASSERT_GT(golden.cases.size(), 100u);
  int checked = 0;
  check_golden_file(golden, RandnMath::Avx2, checked);
  EXPECT_EQ(checked, 265);
}

TEST(NoiseGolden, ScalarMathsMatchTorchWithDefaultCapability) {
  const GoldenFile golden = load_golden("randn_scalar.txt");
  ASSERT_EQ(golden.cpu_capability, "DEFAULT");
  ASSERT_GT(golden.cases.size(), 100u);
  int checked = 0;
  check_golden_file(golden, RandnMath::Scalar, checked);
  EXPECT_EQ(checked, 265);
}

TEST(NoiseGolden, Float64DrawsMatchTorch) {
  const GoldenFile golden = load_golden("randn_f64.txt");
  ASSERT_GT(golden.cases.size(), 8u);
  int checked = 0;
  check_golden_file(golden, default_randn_math(), checked);  // the f32 draws among them: this CPU's maths
  EXPECT_EQ(checked, 32);
}

TEST(NoiseGolden, FreshGeneratorStartsFromTorchDefaultSeed) {
  const GoldenFile golden = load_golden("randn_avx2.txt");
  EXPECT_EQ(golden.fresh_generator_seed, kTorchDefaultSeed);
  EXPECT_EQ(TorchGenerator().initial_seed(), golden.fresh_generator_seed);
}

}  // namespace
}  // namespace ltx
