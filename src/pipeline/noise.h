// Noise: a bit-exact copy of torch's CPU generator stream (torch.manual_seed + torch.randn), and record/replay
// of every noise tensor a pipeline draws. Reference: shared/reference/torch-randn-notes.md; behaviour pinned by
// goldens from torch 2.15 (tools/reference/make_noise_goldens.py, tests/data/noise/).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace ltx {

// torch.Generator()'s seed before anyone seeds it (c10/core/GeneratorImpl.h, default_rng_seed_val).
inline constexpr uint64_t kTorchDefaultSeed = 67280421310721ULL;

// The Box-Muller maths of torch's vector path (numel >= 16). x86 builds run the AVX2 kernel (Cephes polynomials
// from avx_mathfun.h, compiled with FMA contraction) on every AVX2 or AVX-512 CPU; ATEN_CPU_CAPABILITY=default
// and non-x86 builds run the scalar one (libm logf/cosf/sinf). Both are emulated here in portable code.
enum class RandnMath { Avx2, Scalar };

// Avx2 on x86-64 (what torch picks on any CPU made since 2013), Scalar elsewhere.
RandnMath default_randn_math();

// The standard 32-bit Mersenne Twister, seeded as torch seeds it (only the seed's low 32 bits count).
class Mt19937 {
 public:
  explicit Mt19937(uint64_t seed);
  uint32_t next();

 private:
  void twist();
  std::array<uint32_t, 624> state_{};
  size_t index_ = 624;
};

// A CPU torch.Generator: same seed, same draws, same values as torch for randn of any shape, in any order of
// calls, in f32, bf16 and f16. Copying it forks the stream.
class TorchGenerator {
 public:
  TorchGenerator() : TorchGenerator(kTorchDefaultSeed) {}
  explicit TorchGenerator(uint64_t seed, RandnMath math = default_randn_math());

  // torch.manual_seed / Generator.manual_seed: restarts the engine and forgets the cached normal.
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }
  RandnMath math() const { return math_; }

  uint32_t random() { return engine_.next(); }
  uint64_t random64();  // torch's order: the first draw is the high word

  // torch.randn(shape, dtype=dtype, generator=this): f32, bf16 or f16.
  Tensor randn(const Shape& shape, DType dtype = DType::F32);
  // The same as randn into caller memory: n contiguous elements.
  void fill_randn(float* out, int64_t n);
  void fill_randn_bf16(uint16_t* out, int64_t n);
  void fill_randn_f16(uint16_t* out, int64_t n);
  // torch.randn(n, dtype=torch.float64, generator=this) (no f64 Tensor dtype: the res_2s sampler's SDE noise).
  void fill_randn_f64(double* out, int64_t n);

 private:
  void fill_randn_16bit(uint16_t* out, int64_t n, uint16_t (*round)(float));
  void fill_vector_f32(float* out, int64_t n);
  double next_scalar_normal();

  Mt19937 engine_;
  uint64_t seed_ = 0;
  RandnMath math_ = RandnMath::Avx2;
  // The sin half of the last Box-Muller pair of the scalar (double) path; survives across calls
  // (CPUGeneratorImpl next_double_normal_sample_).
  std::optional<double> cached_normal_;
};

// Anything that hands out noise tensors in order: a live generator, a recorder around one, or a replay.
class NoiseSource {
 public:
  virtual ~NoiseSource() = default;
  virtual Tensor randn(const Shape& shape, DType dtype) = 0;
};

class TorchNoise : public NoiseSource {
 public:
  explicit TorchNoise(TorchGenerator& generator) : generator_(generator) {}
  Tensor randn(const Shape& shape, DType dtype) override { return generator_.randn(shape, dtype); }

 private:
  TorchGenerator& generator_;
};

// Name of the i-th drawn noise tensor in a recording: "noise.0000", "noise.0001", ...
std::string noise_tensor_name(size_t index);

// Passes draws through from a source and keeps each tensor, in order, under noise_tensor_name(i).
class NoiseRecorder : public NoiseSource {
 public:
  explicit NoiseRecorder(NoiseSource& source) : source_(source) {}
  Tensor randn(const Shape& shape, DType dtype) override;
  const std::vector<std::pair<std::string, Tensor>>& entries() const { return entries_; }
  // Writes every recorded tensor to a safetensors file (atomically), with the given metadata.
  void save(const std::string& path, const std::map<std::string, std::string>& metadata = {}) const;

 private:
  NoiseSource& source_;
  std::vector<std::pair<std::string, Tensor>> entries_;
};

// Hands back recorded tensors in order. Each request must ask for exactly the recorded shape and dtype; asking
// for more than was recorded is an error. Entries may come in any order (a file's tensor map) but their names
// must be noise.0000 .. noise.<n-1>, each once.
class NoiseReplayer : public NoiseSource {
 public:
  explicit NoiseReplayer(std::span<const std::pair<std::string, Tensor>> entries);
  // Every noise.NNNN tensor of a safetensors file written by NoiseRecorder::save (other tensors are an error).
  static NoiseReplayer load(const std::string& path);
  Tensor randn(const Shape& shape, DType dtype) override;
  size_t size() const { return tensors_.size(); }
  size_t remaining() const { return tensors_.size() - next_; }

 private:
  std::vector<Tensor> tensors_;
  size_t next_ = 0;
};

namespace detail {
// One 16-element Box-Muller block in place: uniforms in [0,1) in, normals out (torch normal_fill_16 and
// normal_fill_16_AVX2). Element j < 8 takes its radius from u[j] and its angle from u[j+8].
void box_muller_16(float* data, RandnMath math);
}  // namespace detail

}  // namespace ltx
