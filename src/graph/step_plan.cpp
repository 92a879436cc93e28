#include "graph/step_plan.h"

#include <chrono>
#include <sstream>

#include "core/error.h"
#include "core/mapped_file.h"
#include "graph/arena_memory.h"
#include "graph/dump.h"
#include "graph/profile.h"

namespace ltx {
namespace {

// "MatMul" or "fused[Mul Add]": what a step runs.
std::string step_ops(const Step& step) {
  if (step.kind != Step::Kind::Fused) return std::string(op_name(step.op));
  std::string text = "fused[";
  for (size_t i = 0; i < step.program.instrs.size(); ++i) {
    if (i > 0) text += ' ';
    text += op_name(step.program.instrs[i].kind);
  }
  return text + "]";
}

// "MatMul f32,bf16->f32" or "fused[Mul Add] f32->bf16": what LTX_PROFILE accumulates time under.
std::string profile_label(const Step& step, const Tensor& out) {
  std::ostringstream text;
  text << step_ops(step) << " ";
  for (size_t i = 0; i < step.in_tensors.size(); ++i)
    text << (i ? "," : "") << (step.in_tensors[i].defined() ? dtype_name(step.in_tensors[i].dtype()) : "-");
  text << "->" << dtype_name(out.dtype());
  if (profile::by_shape()) {
    for (size_t i = 0; i < step.in_tensors.size(); ++i)
      text << (i ? "," : " ") << (step.in_tensors[i].defined() ? step.in_tensors[i].shape().str() : "-");
    text << "->" << out.shape().str();
  }
  return text.str();
}

// 2·M·N·K summed over the batch for a MatMul step or a fused step led by a MatMul (ops/fused.h: the matmul's result
// has the output's shape; out [..., M, N]; K from a and the attributes); 0 otherwise.
double profile_flops(const Step& step, const Tensor& out) {
  const bool fused_matmul =
      step.kind == Step::Kind::Fused && !step.program.instrs.empty() && step.program.instrs[0].kind == OpKind::MatMul;
  if (step.kind == Step::Kind::Fused ? !fused_matmul : step.op != OpKind::MatMul) return 0;
  const size_t a_index = fused_matmul ? static_cast<size_t>(step.program.instrs[0].args[0]) : 0;
  if (a_index >= step.in_tensors.size() || !step.in_tensors[a_index].defined()) return 0;
  const Tensor& a = step.in_tensors[a_index];
  const auto& attrs = std::get<MatMulAttrs>(fused_matmul ? step.program.instrs[0].attrs : step.attrs);
  const int64_t k = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  return 2.0 * static_cast<double>(out.numel()) * static_cast<double>(k);
}

}  // namespace

void StepPlan::release_arena_pages() const {
  if (arena_) ltx::release_arena_pages(*arena_);
  forget_persistent_inputs();
}

std::span<const Tensor> StepPlan::run(std::span<const Tensor> inputs) {
  LTX_CHECK(arena_ != nullptr, "plan", "this plan was compiled with allocate = false (for its peak only)");
  check_inputs(inputs);
  if (holds_inputs_) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Tensor dst = input(i);
      if (inputs[i].raw() != dst.raw()) dst.copy_from(inputs[i]);
    }
    forget_persistent_inputs();  // written here: no longer the values their versions named
    return execute();
  }
  for (const auto& [step, arg] : input_refs_) {
    const Slot& s = slots_[static_cast<size_t>(steps_[static_cast<size_t>(step)].in_slots[static_cast<size_t>(arg)])];
    steps_[static_cast<size_t>(step)].in_tensors[static_cast<size_t>(arg)] = inputs[static_cast<size_t>(s.input_index)];
  }
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    const Slot& s = slots_[static_cast<size_t>(output_slots_[i])];
    if (s.kind == Slot::Kind::Input) outputs_[i] = inputs[static_cast<size_t>(s.input_index)];
  }
  execute();
  // Drop the steps' references to the caller's inputs: held until the next run they would keep the previous
  // call's inputs alive beside the next one's.
  for (const auto& [step, arg] : input_refs_)
    steps_[static_cast<size_t>(step)].in_tensors[static_cast<size_t>(arg)] = Tensor{};
  return outputs_;
}

const Tensor& StepPlan::input(size_t i) const {
  LTX_CHECK(holds_inputs_, "plan",
            "input(): this plan reads its inputs from the caller (compile with inputs_in_arena)");
  LTX_CHECK(i < input_slots_.size(), "plan", "input ", i, " of ", input_slots_.size());
  return slots_[static_cast<size_t>(input_slots_[i])].tensor;
}

std::span<const Tensor> StepPlan::run() {
  LTX_CHECK(arena_ != nullptr, "plan", "this plan was compiled with allocate = false (for its peak only)");
  LTX_CHECK(holds_inputs_ || input_metas_.empty(), "plan", "run() without inputs: this plan reads ",
            input_metas_.size(), " inputs from the caller (compile with inputs_in_arena, or pass them)");
  return execute();
}

std::span<const Tensor> StepPlan::execute() {
  const StepBackend& kernels = *backend_->steps();  // a StepPlan is built for a step backend only
  const bool profiling = profile::enabled();
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (streamer_) streamer_->before_step(s);
    const Tensor& out = slots_[static_cast<size_t>(step.out_slot)].tensor;
    const auto start = profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    const StepContext context{
        {step.scratch_bytes > 0 ? arena_->data() + step.scratch_offset : nullptr, step.scratch_bytes},
        step.constant_weights ? &step.prepared : nullptr};
    if (step.kind == Step::Kind::Fused)
      kernels.run(step.program, step.in_tensors, out, context);
    else
      kernels.run(step.op, step.attrs, step.in_tensors, out, context);
    if (streamer_) streamer_->after_step(s);
    if (profiling)
      profile::add(profile_label(step, out), std::chrono::steady_clock::now() - start, profile_flops(step, out));
  }
  if (!dump_path_.empty()) {
    bool any = false;
    for (const Step& step : steps_) any = any || step.dump;
    if (any) write_dump();
  }
  return outputs_;
}

void StepPlan::set_streaming(const std::optional<StreamingPolicy>& policy) {
  if (!policy) {
    streamer_.reset();
    return;
  }
  if (streamer_ && streamer_->policy() == *policy) return;
  streamer_.reset();  // its read-ahead thread stops before the next one starts
  streamer_ = std::make_unique<WeightStreamer>(steps_, slots_, *policy);
}

size_t StepPlan::mapped_weight_bytes() const {
  size_t bytes = 0;
  for (const Slot& slot : slots_)
    if (slot.kind == Slot::Kind::Constant && slot.tensor.is_contiguous())
      bytes += file_mapped_bytes(slot.tensor.raw(), dtype_bytes_for(slot.tensor.dtype(), slot.tensor.numel()));
  return bytes;
}

void StepPlan::write_dump() const {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const Step& step : steps_) {
    if (!step.dump) continue;
    const Slot& s = slots_[static_cast<size_t>(step.out_slot)];
    tensors.emplace_back(s.name, s.tensor);
  }
  dump_tensors(dump_path_, tensors);
}

std::string StepPlan::describe() const {
  std::ostringstream out;
  out << "plan: " << steps_.size() << " steps, arena " << stats_.arena_bytes << " bytes (without reuse "
      << stats_.naive_bytes << ")\n";
  for (const Step& step : steps_) {
    const Slot& o = slots_[static_cast<size_t>(step.out_slot)];
    out << "  " << step_ops(step) << " -> " << o.tensor.describe() << " @" << o.offset;
    if (!o.name.empty()) out << " '" << o.name << "'";
    out << "\n";
  }
  return out.str();
}

}  // namespace ltx
