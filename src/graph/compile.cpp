#include "graph/compile.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <regex>

#include "core/error.h"
#include "graph/arena_memory.h"
#include "graph/memory_plan.h"
#include "graph/step_plan.h"

namespace ltx {

CompileOptions CompileOptions::from_env() {
  CompileOptions o;
  if (const char* re = std::getenv("LTX_DUMP")) o.dump_regex = re;
  if (const char* path = std::getenv("LTX_DUMP_FILE")) o.dump_path = path;
  return o;
}

// Builds a StepPlan from a graph in passes; one instance per compile.
class PlanBuilder {
 public:
  PlanBuilder(const Graph& g, const StepBackend& backend, const CompileOptions& o)
      : g_(g), backend_(backend), opt_(o), n_(static_cast<int>(g.nodes().size())) {}

  std::unique_ptr<Plan> build() {
    plan_ = std::make_unique<StepPlan>(backend_);
    plan_->stats_.n_nodes = n_;
    mark_live();
    list_readers();
    mark_observed();
    mark_absorbed();
    mark_leading_ops();
    make_slots_and_steps();
    lay_out_arena();
    if (opt_.allocate) bind_views();
    return std::move(plan_);
  }

 private:
  const Node& node(int id) const { return g_.node(id); }

  void mark_live() {
    live_.assign(static_cast<size_t>(n_), false);
    uses_.assign(static_cast<size_t>(n_), 0);
    is_output_.assign(static_cast<size_t>(n_), false);
    LTX_CHECK(!g_.outputs().empty(), "graph", "compiling a graph with no outputs");
    std::vector<int> stack;
    for (const auto& [id, name] : g_.outputs()) {
      is_output_[static_cast<size_t>(id)] = true;
      stack.push_back(id);
    }
    while (!stack.empty()) {
      const int id = stack.back();
      stack.pop_back();
      if (live_[static_cast<size_t>(id)]) continue;
      live_[static_cast<size_t>(id)] = true;
      for (int in : node(id).inputs) stack.push_back(in);
    }
    for (int id = 0; id < n_; ++id) {
      if (!live_[static_cast<size_t>(id)]) continue;
      ++plan_->stats_.n_live;
      for (int in : node(id).inputs) ++uses_[static_cast<size_t>(in)];
    }
  }

  // readers_: every live node's readers, one entry per operand that reads it.
  void list_readers() {
    readers_.resize(static_cast<size_t>(n_));
    for (int r = 0; r < n_; ++r)
      if (live_[static_cast<size_t>(r)])
        for (size_t a = 0; a < node(r).inputs.size(); ++a)
          readers_[static_cast<size_t>(node(r).inputs[a])].emplace_back(r, static_cast<int>(a));
  }

  void mark_observed() {
    observed_.assign(static_cast<size_t>(n_), false);
    if (opt_.dump_regex.empty()) return;
    std::regex re;
    try {
      re = std::regex(opt_.dump_regex);
    } catch (const std::regex_error& e) {
      fail("graph", "LTX_DUMP is not a valid regular expression: " + opt_.dump_regex);
    }
    for (int id = 0; id < n_; ++id) {
      const Node& nd = node(id);
      if (live_[static_cast<size_t>(id)] && nd.kind == NodeKind::Op && !nd.name.empty() &&
          std::regex_search(nd.name, re))
        observed_[static_cast<size_t>(id)] = true;
    }
  }

  // An elementwise node folds into its only consumer when that consumer is elementwise with the same element
  // count and dtype, and nobody else needs the node's value (not an output, not dumped).
  void mark_absorbed() {
    absorbed_.assign(static_cast<size_t>(n_), false);
    if (!opt_.fuse) return;
    for (int id = 0; id < n_; ++id) {
      const Node& c = node(id);
      if (!live_[static_cast<size_t>(id)] || c.kind != NodeKind::Op || !op_is_elementwise(c.op)) continue;
      for (size_t arg = 0; arg < c.inputs.size(); ++arg) {
        const int in = c.inputs[arg];
        const Node& e = node(in);
        const bool channel_operand = (c.op == OpKind::Snake || c.op == OpKind::SnakeBeta) && arg > 0;
        if (e.kind == NodeKind::Op && op_is_elementwise(e.op) && uses_[static_cast<size_t>(in)] == 1 &&
            !is_output_[static_cast<size_t>(in)] && !observed_[static_cast<size_t>(in)] && !channel_operand &&
            e.meta.shape.numel() == c.meta.shape.numel() && e.meta.dtype == c.meta.dtype)
          absorbed_[static_cast<size_t>(in)] = true;
      }
    }
    // A Cast of an f32 elementwise chain's only use becomes that chain's store: the chain computes in f32, so
    // storing its result in the cast's dtype rounds exactly once, as the separate Cast would.
    for (int id = 0; id < n_; ++id) {
      const Node& c = node(id);
      if (!live_[static_cast<size_t>(id)] || c.kind != NodeKind::Op || c.op != OpKind::Cast) continue;
      const int in = c.inputs[0];
      const Node& e = node(in);
      if (e.kind == NodeKind::Op && op_is_elementwise(e.op) && e.meta.dtype == DType::F32 &&
          dtype_is_float(c.meta.dtype) && uses_[static_cast<size_t>(in)] == 1 && !is_output_[static_cast<size_t>(in)] &&
          !observed_[static_cast<size_t>(in)])
        absorbed_[static_cast<size_t>(in)] = true;
    }
  }

  // A MatMul, or an RmsNorm/LayerNorm without weight or bias, whose only reader is an elementwise chain (not an
  // output, not dumped) becomes that chain's first instruction (ops/fused.h): the matmul kernels hand their f32
  // sums to the chain, a norm each row normalized in f32, so the value is neither stored, reloaded nor rounded to
  // its own dtype. At most one per chain, with the chain's dtype and the shape of the chain's output (so its
  // elements are the output's, in order). A norm whose readers are all such chains leads each of them: it is
  // computed again per chain (reading x once per chain instead of writing the normalized tensor and reading it
  // back per chain; the DiT's A<->V snapshot norms, each read by two modulations).
  void mark_leading_ops() {
    leading_op_.assign(static_cast<size_t>(n_), -1);
    if (!opt_.fuse) return;
    std::vector<int> roots;
    for (int id = 0; id < n_; ++id) {
      const Node& lead = node(id);
      const auto i = static_cast<size_t>(id);
      if (!live_[i] || lead.kind != NodeKind::Op || !can_lead(lead) || uses_[i] < 1 || is_output_[i] || observed_[i])
        continue;
      if (uses_[i] > 1 && lead.op == OpKind::MatMul) continue;  // a product is never computed twice
      roots.clear();
      for (const auto& reader : readers_[i]) {
        const int c = reader.first;
        const Node& cn = node(c);
        const bool channel_operand = (cn.op == OpKind::Snake || cn.op == OpKind::SnakeBeta) && cn.inputs[0] != id;
        if (cn.kind != NodeKind::Op || !op_is_elementwise(cn.op) || cn.meta.dtype != lead.meta.dtype ||
            channel_operand) {
          roots.clear();
          break;
        }
        int root = c;  // absorbed nodes have one reader, up to the chain's own step
        while (absorbed_[static_cast<size_t>(root)]) root = readers_[static_cast<size_t>(root)][0].first;
        if (node(root).meta.shape != lead.meta.shape || leading_op_[static_cast<size_t>(root)] >= 0) {
          roots.clear();
          break;
        }
        roots.push_back(root);  // twice when one chain reads it twice: instruction 0 serves both
      }
      for (int root : roots) leading_op_[static_cast<size_t>(root)] = id;
      if (!roots.empty()) absorbed_[i] = true;
    }
  }

  // An op a fused program may start with (ops/fused.h leads_fused_program), in a form the kernels take there.
  static bool can_lead(const Node& nd) {
    if (!leads_fused_program(nd.op)) return false;
    if (nd.op == OpKind::MatMul) return true;
    const auto& a = std::get<NormAttrs>(nd.attrs);
    return a.weight == NormWeight::None && !a.bias;
  }

  int slot_of(int id) {
    auto& s = slot_[static_cast<size_t>(id)];
    LTX_CHECK(s >= 0, "graph", "internal: node ", id, " has no slot");
    return s;
  }

  // Appends node `id`'s computation to the fused program, returning its value index there.
  int emit_fused(int id, FusedProgram& prog, std::vector<int>& leaf_nodes, bool channel) {
    if (id == emitted_lead_) return -1;  // the leading op, instruction 0
    if (absorbed_[static_cast<size_t>(id)] && !channel) {
      const Node& e = node(id);
      FusedInstr ins;
      ins.kind = e.op;
      ins.attrs = e.attrs;
      ins.n_args = static_cast<int8_t>(e.inputs.size());
      for (size_t a = 0; a < e.inputs.size(); ++a) {
        const bool ch = (e.op == OpKind::Snake || e.op == OpKind::SnakeBeta) && a > 0;
        ins.args[a] = static_cast<int16_t>(emit_fused(e.inputs[a], prog, leaf_nodes, ch));
      }
      prog.instrs.push_back(ins);
      ++plan_->stats_.n_fused_ops;
      // Leaf count is not final yet: refer to instruction k as -(k+1) and renumber after the walk.
      return -static_cast<int>(prog.instrs.size());
    }
    for (size_t l = 0; l < leaf_nodes.size(); ++l)
      if (leaf_nodes[l] == id) {
        LTX_CHECK(((prog.channel_leaves >> l) & 1u) == static_cast<uint32_t>(channel), "graph",
                  "a value used both per channel and elementwise in one fused chain");
        return static_cast<int>(l);
      }
    LTX_CHECK(leaf_nodes.size() < 31, "graph", "fused chain has too many operands");
    if (channel) prog.channel_leaves |= 1u << leaf_nodes.size();
    leaf_nodes.push_back(id);
    return static_cast<int>(leaf_nodes.size()) - 1;
  }

  // The fused step computing node `id`: an elementwise node, or a Cast whose input chain was absorbed into it
  // (the chain's last instruction is then the cast's input, stored in the cast's dtype).
  void make_fused_step(int id, Step& step) {
    FusedProgram prog;
    std::vector<int> leaf_nodes;
    emitted_lead_ = -1;
    if (const int lead = leading_op_[static_cast<size_t>(id)]; lead >= 0) {  // first, so it is instruction 0
      emit_fused(lead, prog, leaf_nodes, false);
      emitted_lead_ = lead;
    }
    if (node(id).op == OpKind::Cast) {
      emit_fused(node(id).inputs[0], prog, leaf_nodes, false);
    } else {
      // The root itself is an instruction even though it is not absorbed.
      absorbed_[static_cast<size_t>(id)] = true;
      emit_fused(id, prog, leaf_nodes, false);
      absorbed_[static_cast<size_t>(id)] = false;
      --plan_->stats_.n_fused_ops;  // the root is materialized
    }
    // Renumber: leaves keep 0..L-1, instruction k becomes L+k.
    prog.n_leaves = static_cast<int>(leaf_nodes.size());
    for (auto& ins : prog.instrs)
      for (int a = 0; a < ins.n_args; ++a)
        if (ins.args[a] < 0) ins.args[a] = static_cast<int16_t>(prog.n_leaves + (-ins.args[a] - 1));
    LTX_CHECK(prog.n_leaves + static_cast<int>(prog.instrs.size()) <= 64, "graph", "fused chain too long");
    std::vector<TensorMeta> leaves;
    for (int leaf : leaf_nodes) leaves.push_back(node(leaf).meta);
    LTX_CHECK(backend_.supports(prog, leaves, node(id).meta), "graph", "the ", backend_.name(),
              " backend cannot run the fused chain computing ", describe_node(id));
    step.scratch_bytes = backend_.scratch_bytes(prog, leaves, node(id).meta);
    step.kind = Step::Kind::Fused;
    step.program = std::move(prog);
    for (int leaf : leaf_nodes) step.in_slots.push_back(slot_of(leaf));
    // Led by an op (a MatMul, a norm) whose operands after the first are the plan's constants: a prepared slot for
    // them, as that op's unfused step gets.
    const FusedInstr& first = step.program.instrs.front();
    if (opt_.prepare_weights && leading_op_[static_cast<size_t>(id)] >= 0 && first.n_args >= 2) {
      step.constant_weights = true;
      for (int a = 1; a < first.n_args; ++a)
        step.constant_weights &=
            first.args[a] < step.program.n_leaves &&
            plan_->slots_[static_cast<size_t>(step.in_slots[static_cast<size_t>(first.args[a])])].kind ==
                Slot::Kind::Constant;
    }
  }

  void make_slots_and_steps() {
    slot_.assign(static_cast<size_t>(n_), -1);
    auto& slots = plan_->slots_;
    for (size_t i = 0; i < g_.input_ids().size(); ++i) {
      const Node& nd = node(g_.input_ids()[i]);
      plan_->input_metas_.push_back(nd.meta);
      plan_->input_names_.push_back(nd.name);
    }
    plan_->mark_persistent_inputs(opt_.persistent_inputs, opt_.inputs_in_arena);
    for (int id = 0; id < n_; ++id) {
      if (!live_[static_cast<size_t>(id)] || absorbed_[static_cast<size_t>(id)]) continue;
      const Node& nd = node(id);
      Slot s;
      s.name = nd.name;
      if (nd.kind == NodeKind::Input && opt_.inputs_in_arena) {
        hold_input(id);
        continue;
      }
      if (nd.kind == NodeKind::Input) {
        s.kind = Slot::Kind::Input;
        for (size_t i = 0; i < g_.input_ids().size(); ++i)
          if (g_.input_ids()[i] == id) s.input_index = static_cast<int>(i);
        slot_[static_cast<size_t>(id)] = static_cast<int>(slots.size());
        slots.push_back(std::move(s));
        continue;
      }
      if (nd.kind == NodeKind::Constant) {
        s.kind = Slot::Kind::Constant;
        s.tensor = nd.constant;
        slot_[static_cast<size_t>(id)] = static_cast<int>(slots.size());
        slots.push_back(std::move(s));
        continue;
      }
      // A reshape of a buffer we lay out ourselves is a view of it, not a copy.
      if (nd.op == OpKind::Reshape && !observed_[static_cast<size_t>(id)]) {
        const int src = slot_of(nd.inputs[0]);
        const Slot::Kind sk = slots[static_cast<size_t>(src)].kind;
        if (sk == Slot::Kind::Arena || sk == Slot::Kind::Alias ||
            (sk == Slot::Kind::Constant && slots[static_cast<size_t>(src)].tensor.is_contiguous())) {
          s.kind = Slot::Kind::Alias;
          s.input_index = src;  // the slot it views
          slot_[static_cast<size_t>(id)] = static_cast<int>(slots.size());
          slots.push_back(std::move(s));
          alias_meta_.emplace_back(static_cast<int>(slots.size()) - 1, nd.meta);
          ++plan_->stats_.n_aliases;
          continue;
        }
      }
      if (permute_is_view(id)) {
        add_permute_view(id, std::move(s));
        continue;
      }
      const int out = add_arena_slot(id, std::move(s));

      Step step;
      step.out_slot = out;
      step.dump = observed_[static_cast<size_t>(id)];
      if (op_is_elementwise(nd.op) || (nd.op == OpKind::Cast && absorbed_[static_cast<size_t>(nd.inputs[0])])) {
        make_fused_step(id, step);
      } else {
        step.op = nd.op;
        step.attrs = nd.attrs;
        for (int in : nd.inputs) step.in_slots.push_back(slot_of(in));
        step.constant_weights = opt_.prepare_weights && step.in_slots.size() >= 2;  // all after the first constant
        for (size_t a = 1; a < step.in_slots.size(); ++a)
          step.constant_weights &= slots[static_cast<size_t>(step.in_slots[a])].kind == Slot::Kind::Constant;
        std::vector<TensorMeta> in;
        for (int i : nd.inputs) in.push_back(node(i).meta);
        LTX_CHECK(backend_.supports(nd.op, in, nd.meta), "graph", "the ", backend_.name(), " backend cannot run ",
                  describe_node(id));
        step.scratch_bytes = backend_.scratch_bytes(nd.op, nd.attrs, in, nd.meta);
      }
      plan_->steps_.push_back(std::move(step));
    }
    if (opt_.inputs_in_arena)
      for (int id : g_.input_ids())
        if (slot_[static_cast<size_t>(id)] < 0) hold_input(id);  // read by no live node: the caller still writes it
    for (const auto& [id, name] : g_.outputs()) {
      plan_->output_slots_.push_back(slot_of(id));
      plan_->output_names_.push_back(name);
    }
    plan_->stats_.n_steps = static_cast<int>(plan_->steps_.size());
  }

  // Node `id`'s value as an arena buffer of its dtype and shape (laid out by lay_out_arena): returns its slot.
  int add_arena_slot(int id, Slot s) {
    const Node& nd = node(id);
    auto& slots = plan_->slots_;
    s.kind = Slot::Kind::Arena;
    s.bytes = dtype_bytes_for(nd.meta.dtype, nd.meta.shape.numel());
    const int slot = static_cast<int>(slots.size());
    slot_[static_cast<size_t>(id)] = slot;
    slots.push_back(std::move(s));
    arena_meta_.emplace_back(slot, nd.meta);
    return slot;
  }

  // CompileOptions::inputs_in_arena: input node `id` becomes an arena slot that no step writes (the caller does,
  // through Plan::input); lay_out_arena gives it a buffer live from before the first step to its last reader.
  void hold_input(int id) {
    Slot s;
    s.name = node(id).name;
    const int slot = add_arena_slot(id, std::move(s));
    const auto& ids = g_.input_ids();
    plan_->holds_inputs_ = true;
    plan_->input_slots_.resize(ids.size(), -1);
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == id) plan_->input_slots_[i] = slot;
    plan_->stats_.input_bytes += plan_->slots_[static_cast<size_t>(slot)].bytes;
  }

  // The held inputs' buffers (first = 0: they are written before the first step, so no step's output shares
  // their space while they are live; a persistent one lives to the end, so none ever does), appended to the
  // steps' buffers.
  void add_input_buffers(std::vector<int>& buffer_of, std::vector<BufferLifetime>& buffers) const {
    const int end = static_cast<int>(plan_->steps_.size());
    for (size_t i = 0; i < plan_->input_slots_.size(); ++i) {
      const int slot = plan_->input_slots_[i];
      buffer_of[static_cast<size_t>(slot)] = static_cast<int>(buffers.size());
      buffers.push_back({plan_->slots_[static_cast<size_t>(slot)].bytes, 0, plan_->persistent_[i] ? end : 0});
    }
  }

  // A Permute of a buffer the plan lays out becomes a strided view of it (no copy) when the backend says each
  // reader's kernel reads that operand as fast strided (Backend::permute_may_be_view; on the CPU, attention's q and
  // v: the DiT's head splits, nn::split_heads). Not an output or dumped.
  bool permute_is_view(int id) {
    const Node& nd = node(id);
    const auto i = static_cast<size_t>(id);
    if (nd.kind != NodeKind::Op || nd.op != OpKind::Permute || observed_[i] || is_output_[i]) return false;
    const Slot::Kind src = plan_->slots_[static_cast<size_t>(slot_of(nd.inputs[0]))].kind;
    if (src != Slot::Kind::Arena && src != Slot::Kind::Alias) return false;
    for (const auto& [r, arg] : readers_[i]) {
      const Node& reader = node(r);
      const bool strided_ok = reader.kind == NodeKind::Op && !absorbed_[static_cast<size_t>(r)] &&
                              backend_.permute_may_be_view(reader.op, arg);
      if (!strided_ok) return false;
    }
    return !readers_[i].empty();
  }

  void add_permute_view(int id, Slot s) {
    auto& slots = plan_->slots_;
    s.kind = Slot::Kind::Alias;
    s.input_index = slot_of(node(id).inputs[0]);  // the slot it views
    const int slot = static_cast<int>(slots.size());
    slot_[static_cast<size_t>(id)] = slot;
    slots.push_back(std::move(s));
    const auto& attrs = std::get<PermuteAttrs>(node(id).attrs);
    permute_views_.emplace_back(slot, std::vector<int>(attrs.perm.begin(), attrs.perm.begin() + attrs.rank));
    ++plan_->stats_.n_aliases;
  }

  // The arena slot a slot's memory belongs to (following views), or -1 when it is not in the arena.
  int arena_root(int slot) const {
    const auto& slots = plan_->slots_;
    while (slots[static_cast<size_t>(slot)].kind == Slot::Kind::Alias)
      slot = slots[static_cast<size_t>(slot)].input_index;
    return slots[static_cast<size_t>(slot)].kind == Slot::Kind::Arena ? slot : -1;
  }

  void lay_out_arena() {
    auto& slots = plan_->slots_;
    const auto& steps = plan_->steps_;
    std::vector<int> buffer_of(slots.size(), -1);
    std::vector<BufferLifetime> buffers;
    for (size_t s = 0; s < steps.size(); ++s) {
      const int out = steps[s].out_slot;
      buffer_of[static_cast<size_t>(out)] = static_cast<int>(buffers.size());
      buffers.push_back({slots[static_cast<size_t>(out)].bytes, static_cast<int>(s), static_cast<int>(s)});
    }
    add_input_buffers(buffer_of, buffers);
    // Each step's kernel scratch: live while the step runs, beside its inputs and output.
    std::vector<int> scratch_buffer(steps.size(), -1);
    for (size_t s = 0; s < steps.size(); ++s) {
      if (steps[s].scratch_bytes == 0) continue;
      scratch_buffer[s] = static_cast<int>(buffers.size());
      buffers.push_back({steps[s].scratch_bytes, static_cast<int>(s), static_cast<int>(s)});
      plan_->stats_.scratch_bytes = std::max(plan_->stats_.scratch_bytes, steps[s].scratch_bytes);
    }
    const int end = static_cast<int>(steps.size());
    for (size_t s = 0; s < steps.size(); ++s)
      for (int in : steps[s].in_slots) {
        const int root = arena_root(in);
        if (root >= 0) {
          auto& b = buffers[static_cast<size_t>(buffer_of[static_cast<size_t>(root)])];
          b.last = std::max(b.last, static_cast<int>(s));
        }
      }
    for (int out : plan_->output_slots_) {
      const int root = arena_root(out);
      if (root >= 0) buffers[static_cast<size_t>(buffer_of[static_cast<size_t>(root)])].last = end;
    }
    // Dumped intermediates are written after the run, so they must outlive it like outputs.
    for (const Step& step : steps)
      if (step.dump) buffers[static_cast<size_t>(buffer_of[static_cast<size_t>(step.out_slot)])].last = end;
    const MemoryLayout layout = plan_memory(buffers);
    size_t naive = 0;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (buffer_of[s] < 0) continue;
      slots[s].offset = layout.offsets[static_cast<size_t>(buffer_of[s])];
      naive += slots[s].bytes;
    }
    for (size_t s = 0; s < steps.size(); ++s)
      if (scratch_buffer[s] >= 0)
        plan_->steps_[s].scratch_offset = layout.offsets[static_cast<size_t>(scratch_buffer[s])];
    plan_->stats_.arena_bytes = layout.total;
    plan_->stats_.naive_bytes = naive;
    if (opt_.allocate) plan_->arena_ = allocate_arena(layout.total);  // arena_memory.cpp: large ones mmap-ed, zero
  }

  void bind_views() {
    auto& slots = plan_->slots_;
    for (const auto& [slot, meta] : arena_meta_)
      slots[static_cast<size_t>(slot)].tensor =
          Tensor::view_of(plan_->arena_, slots[static_cast<size_t>(slot)].offset, meta.dtype, meta.shape);
    for (const auto& [slot, meta] : alias_meta_)  // in creation order, so a view's source is bound first
      slots[static_cast<size_t>(slot)].tensor =
          slots[static_cast<size_t>(slots[static_cast<size_t>(slot)].input_index)].tensor.reshape(meta.shape);
    for (const auto& [slot, perm] : permute_views_)  // their sources are reshape views or buffers, bound above
      slots[static_cast<size_t>(slot)].tensor =
          slots[static_cast<size_t>(slots[static_cast<size_t>(slot)].input_index)].tensor.permute(perm);
    for (size_t s = 0; s < plan_->steps_.size(); ++s) {
      Step& step = plan_->steps_[s];
      for (size_t a = 0; a < step.in_slots.size(); ++a) {
        const Slot& in = slots[static_cast<size_t>(step.in_slots[a])];
        step.in_tensors.push_back(in.tensor);
        if (in.kind == Slot::Kind::Input) plan_->input_refs_.emplace_back(static_cast<int>(s), static_cast<int>(a));
      }
    }
    plan_->outputs_.resize(plan_->output_slots_.size());
    for (size_t i = 0; i < plan_->output_slots_.size(); ++i)
      plan_->outputs_[i] = slots[static_cast<size_t>(plan_->output_slots_[i])].tensor;
    plan_->dump_path_ = opt_.dump_path;
  }

  // "MatMul 'dit.blk.0.ff.in' -> bf16[1,1536,16384]": for the error when the backend cannot run a node.
  std::string describe_node(int id) const {
    const Node& nd = node(id);
    return std::string(op_name(nd.op)) + (nd.name.empty() ? "" : " '" + nd.name + "'") + " -> " +
           std::string(dtype_name(nd.meta.dtype)) + nd.meta.shape.str();
  }

  const Graph& g_;
  const StepBackend& backend_;
  const CompileOptions& opt_;
  const int n_;
  std::unique_ptr<StepPlan> plan_;
  std::vector<bool> live_, is_output_, observed_, absorbed_;
  std::vector<int> uses_, slot_;
  std::vector<int> leading_op_;  // per fused step's root: the op fused in as its first instruction, or -1
  int emitted_lead_ = -1;        // that op while its step's program is being emitted
  std::vector<std::pair<int, TensorMeta>> arena_meta_, alias_meta_;
  std::vector<std::pair<int, std::vector<int>>> permute_views_;  // (alias slot, permutation)
  std::vector<std::vector<std::pair<int, int>>> readers_;        // per node: (live reader, operand index)
};

std::unique_ptr<Plan> compile(const Graph& graph, const Backend& backend, const CompileOptions& options) {
  if (const StepBackend* steps = backend.steps()) return PlanBuilder(graph, *steps, options).build();
  std::unique_ptr<Plan> plan = backend.compile_graph(graph, options);
  LTX_CHECK(plan != nullptr, "graph", "the ", backend.name(), " backend neither runs steps nor compiles graphs");
  return plan;
}

}  // namespace ltx
