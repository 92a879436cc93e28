// One graph compiled by XLA: a PJRT executable whose parameters are the graph's inputs, then its weights (resident on
// the device). Inputs are staged on the host (run(inputs), or input(i) then run()) and uploaded per run, except
// persistent ones, uploaded once per value; outputs stay on the device, where a later XlaPlan takes them
// (take_input) without a trip through the host, and are copied to host views when asked (outputs()).
#pragma once

#include <memory>
#include <vector>

#include "backend/xla/pjrt_runtime.h"
#include "graph/compile.h"

namespace ltx::xla {

class XlaBackend;

class XlaPlan final : public Plan {
 public:
  XlaPlan(const XlaBackend& backend, const Graph& graph, const CompileOptions& options);

  std::span<const Tensor> run(std::span<const Tensor> inputs) override;
  const Tensor& input(size_t i) const override;
  std::span<const Tensor> run() override;
  std::span<const Tensor> outputs() override;
  void take_input(size_t i, Plan& producer, size_t output) override;
  std::string describe() const override;
  void release_arena_pages() const override;
  size_t mapped_weight_bytes() const override { return 0; }  // the weights live in the device's buffers

 private:
  // Runs with device_inputs_ set; returns the host outputs.
  std::span<const Tensor> execute();

  const XlaBackend& xla_;
  std::shared_ptr<const Executable> executable_;
  std::vector<TensorMeta> output_metas_;
  std::vector<Tensor> constants_;      // host weights (kept alive: a device buffer may alias them)
  std::vector<DeviceTensor> weights_;  // their device copies, the parameters after the inputs
  std::vector<Tensor> host_inputs_;    // inputs_in_arena: what the caller writes
  mutable std::vector<DeviceTensor> device_inputs_;
  std::vector<bool> taken_;                                // input i was handed over by take_input for the next run
  mutable std::vector<std::optional<uint64_t>> uploaded_;  // per persistent input: the version on the device
  mutable std::vector<DeviceTensor> device_outputs_;
  mutable std::vector<Tensor> host_outputs_;
  mutable bool outputs_on_host_ = false;
  std::string what_;  // names the program in messages: its outputs
};

}  // namespace ltx::xla
