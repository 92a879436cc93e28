#include "backend/xla/xla_plan.h"

#include "backend/xla/lower_graph.h"
#include "backend/xla/xla_backend.h"
#include "core/error.h"

namespace ltx::xla {

XlaPlan::XlaPlan(const XlaBackend& backend, const Graph& graph, const CompileOptions& options)
    : Plan(backend), xla_(backend) {
  for (int id : graph.input_ids()) {
    input_metas_.push_back(graph.node(id).meta);
    input_names_.push_back(graph.node(id).name);
  }
  for (const auto& [id, name] : graph.outputs()) output_names_.push_back(name);
  for (const std::string& name : output_names_) what_ += (what_.empty() ? "" : ", ") + name;
  what_ = "the program computing " + what_;
  holds_inputs_ = options.inputs_in_arena;
  mark_persistent_inputs(options.persistent_inputs, holds_inputs_);

  const LoweredGraph lowered = lower_graph(graph);
  output_metas_ = lowered.output_metas;
  executable_ = backend.executables().get(lowered.mlir, what_);
  // A plan priced but never run (allocate = false: a planner's candidate) compiles for its memory figure only.
  for (int id : lowered.constant_nodes) {
    constants_.push_back(graph.node(id).constant);
    if (options.allocate) weights_.push_back(backend.weight(constants_.back()));
  }
  if (holds_inputs_)
    for (const TensorMeta& m : input_metas_) {
      stats_.input_bytes += dtype_bytes_for(m.dtype, m.shape.numel());
      if (options.allocate) host_inputs_.push_back(Tensor::empty(m.dtype, m.shape));
    }
  device_inputs_.resize(input_metas_.size());
  taken_.assign(input_metas_.size(), false);
  uploaded_.resize(input_metas_.size());
  stats_.n_nodes = static_cast<int>(graph.nodes().size());
  stats_.n_live = lowered.n_live;
  stats_.n_steps = 1;
  stats_.scratch_bytes = executable_->temp_bytes();
  stats_.arena_bytes = stats_.input_bytes + stats_.scratch_bytes;
  for (const TensorMeta& m : output_metas_) stats_.arena_bytes += dtype_bytes_for(m.dtype, m.shape.numel());
}

std::span<const Tensor> XlaPlan::run(std::span<const Tensor> inputs) {
  check_inputs(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) device_inputs_[i] = xla_.runtime().upload(inputs[i]);
  forget_persistent_inputs();
  for (auto& u : uploaded_) u.reset();
  return execute();
}

const Tensor& XlaPlan::input(size_t i) const {
  LTX_CHECK(holds_inputs_, "plan", "input(", i, "): this plan takes its inputs in run(inputs)");
  LTX_CHECK(!host_inputs_.empty() || input_metas_.empty(), "plan", "input(", i,
            "): a plan compiled with allocate = false holds no inputs");
  LTX_CHECK(i < host_inputs_.size(), "plan", "input ", i, " of ", host_inputs_.size());
  return host_inputs_[i];
}

std::span<const Tensor> XlaPlan::run() {
  for (size_t i = 0; i < input_metas_.size(); ++i) {
    if (taken_[i]) continue;
    LTX_CHECK(holds_inputs_, "plan", "run() without inputs: input '", input_names_[i],
              "' was neither taken from another plan nor held (compile with inputs_in_arena, or pass them)");
    const bool current =
        input_is_persistent(i) && held_[i].has_value() && uploaded_[i] == held_[i] && device_inputs_[i] != nullptr;
    if (current) continue;
    device_inputs_[i] = xla_.runtime().upload(host_inputs_[i]);
    uploaded_[i] = input_is_persistent(i) ? held_[i] : std::nullopt;
  }
  return execute();
}

std::span<const Tensor> XlaPlan::execute() {
  LTX_CHECK(weights_.size() == constants_.size(), "plan",
            "a plan compiled with allocate = false (for its memory figure) cannot run");
  std::vector<const DeviceBuffer*> arguments;
  for (const DeviceTensor& d : device_inputs_) arguments.push_back(d.get());
  for (const DeviceTensor& w : weights_) arguments.push_back(w.get());
  device_outputs_ = xla_.runtime().execute(*executable_, arguments, output_metas_);
  for (size_t i = 0; i < device_inputs_.size(); ++i)
    if (!input_is_persistent(i)) device_inputs_[i].reset();  // the next run uploads or takes a new value
  taken_.assign(taken_.size(), false);
  outputs_on_host_ = false;
  return outputs();
}

std::span<const Tensor> XlaPlan::outputs() {
  if (!outputs_on_host_) {
    if (host_outputs_.empty())
      for (const TensorMeta& m : output_metas_) host_outputs_.push_back(Tensor::empty(m.dtype, m.shape));
    for (size_t i = 0; i < device_outputs_.size(); ++i) xla_.runtime().download(*device_outputs_[i], host_outputs_[i]);
    outputs_on_host_ = !device_outputs_.empty();
  }
  return host_outputs_;
}

void XlaPlan::take_input(size_t i, Plan& producer, size_t output) {
  auto* xla_producer = dynamic_cast<XlaPlan*>(&producer);
  if (xla_producer == nullptr || &xla_producer->xla_.runtime() != &xla_.runtime()) {
    Plan::take_input(i, producer, output);
    return;
  }
  LTX_CHECK(i < input_metas_.size(), "plan", "input ", i, " of ", input_metas_.size());
  LTX_CHECK(output < xla_producer->device_outputs_.size(), "plan", "output ", output, " of ",
            xla_producer->device_outputs_.size(), " (has the producer run?)");
  const DeviceTensor& buffer = xla_producer->device_outputs_[output];
  const TensorMeta& want = input_metas_[i];
  LTX_CHECK(buffer->meta().dtype == want.dtype && buffer->meta().shape == want.shape, "plan", "input '",
            input_names_[i], "' is ", dtype_name(want.dtype), want.shape.str(), " but output '",
            producer.output_names()[output], "' is ", dtype_name(buffer->meta().dtype), buffer->meta().shape.str());
  device_inputs_[i] = buffer;
  taken_[i] = true;
  if (input_is_persistent(i)) {
    held_[i].reset();
    uploaded_[i].reset();
  }
}

std::string XlaPlan::describe() const {
  return "xla: " + std::to_string(stats_.n_live) + " nodes as one executable on " + xla_.runtime().platform() + " (" +
         xla_.runtime().device_kind() + "), " + std::to_string(weights_.size()) + " weight parameters\n";
}

void XlaPlan::release_arena_pages() const {
  device_outputs_.clear();
  host_outputs_.clear();
  outputs_on_host_ = false;
  for (DeviceTensor& d : device_inputs_) d.reset();
  for (auto& u : uploaded_) u.reset();
  forget_persistent_inputs();
}

}  // namespace ltx::xla
