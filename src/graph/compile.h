// compile(): a graph into a Plan for a backend. For a step backend: dead-node elimination, elementwise fusion, views
// for reshapes, liveness, and one arena laid out by greedy best-fit over lifetimes (a StepPlan); a whole-graph
// backend compiles it itself (Backend::compile_graph). PlanCache keys compiled plans by a signature of graph, shapes
// and dtypes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "graph/graph.h"
#include "graph/plan.h"

namespace ltx {

struct CompileOptions {
  // Named intermediates matching this regex are kept materialized and written to `dump_path` after each run.
  // Defaults come from the environment: LTX_DUMP=<regex>, LTX_DUMP_FILE (default ltx_dump.safetensors).
  std::string dump_regex;
  std::string dump_path = "ltx_dump.safetensors";
  bool fuse = true;
  // false: lay the arena out and report Plan::peak_bytes() without allocating it; such a plan cannot run. Memory
  // planners use it to price a candidate shape that may not fit.
  bool allocate = true;
  // true: conv steps whose weights are the plan's constants keep them converted to the kernel's layout after their
  // first run (PreparedWeights), a second copy of those weights for the plan's life. For a plan that runs
  // once there is nothing to gain and the copy only raises the peak: pass false.
  bool prepare_weights = true;
  // true: the plan holds its inputs in its arena, each live from the start of a run to its last use (its space is
  // reused after that); the caller writes them through Plan::input(i) and calls Plan::run(). Plan::peak_bytes()
  // then counts them, and nothing the caller holds needs to stay alive during the run.
  bool inputs_in_arena = false;
  // Inputs (by name) that keep their value from one run to the next, written only when it changes (Plan::reuse_input:
  // text contexts, RoPE tables, masks). Needs inputs_in_arena; each is live for the whole run.
  std::vector<std::string> persistent_inputs;
  static CompileOptions from_env();
};

// Compiles for `backend`, which the plan holds (it must outlive the plan): the engine's (models take it at load), or
// cpu_backend() where the CPU kernels themselves are what runs.
std::unique_ptr<Plan> compile(const Graph& graph, const Backend& backend,
                              const CompileOptions& options = CompileOptions::from_env());

// The structure, shapes, dtypes, attributes and bound weights of a graph, as words; equal signatures compile to
// interchangeable plans.
std::vector<uint64_t> graph_signature(const Graph& graph, const CompileOptions& options);

class PlanCache {
 public:
  // Plans for `backend` (which must outlive the cache).
  explicit PlanCache(const Backend& backend) : backend_(&backend) {}
  const Backend& backend() const { return *backend_; }
  // The plan for this graph: compiled on first sight of its signature, then reused.
  Plan& get(const Graph& graph, const CompileOptions& options = CompileOptions::from_env());
  int compiles() const { return compiles_; }
  int hits() const { return hits_; }
  size_t size() const { return n_plans_; }
  // The largest Plan::peak_bytes() among the cached plans (0 when empty): the activation memory they may need.
  size_t max_peak_bytes() const;
  void clear();
  // Plan::release_arena_pages on every cached plan: they stay compiled, their activation memory goes until they run.
  void release_arena_pages() const;

 private:
  struct Entry {
    std::vector<uint64_t> signature;
    std::unique_ptr<Plan> plan;
  };
  const Backend* backend_;
  std::unordered_map<uint64_t, std::vector<Entry>> plans_;
  size_t n_plans_ = 0;
  int compiles_ = 0;
  int hits_ = 0;
};

}  // namespace ltx
