// The graph passes jit runs, in the order compile() applies them. Each takes a verified
// graph and returns an equivalent one; none recurses over the graph.
#pragma once
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla::passes {

// Folds small constant subgraphs, applies exact algebraic identities (x*1, x-0, x+(-0.0),
// integer x+0, double negation, lossless convert chains) and collapses reshape, transpose
// and no-op layout chains.
Graph simplify(const Graph& g);
// Merges nodes with the same op, attributes and operands (and equal small constants).
Graph cse(const Graph& g);
// Drops nodes whose results no output needs; parameters stay.
Graph dce(const Graph& g);

// What the target that runs fused kernels can do (the compiler passes its own: the CPU's
// is compiler/cpu_target.h), so that the pass itself knows no kernels.
class FusionTarget {
 public:
  virtual ~FusionTarget() = default;
  // Whether a fused kernel computes elementwise node `n` of `g`.
  virtual bool can_fuse_elementwise(const Node& n, const Graph& g) const = 0;
  // Whether a fused kernel reduces `operand` over `axes` with `op`.
  virtual bool can_fuse_reduce(ReduceOp op, DType dtype, const Shape& operand,
                               const std::vector<int64_t>& axes) const = 0;
  // Whether recomputing elementwise node `n` costs more than a memory round trip.
  virtual bool is_expensive(const Node& n) const = 0;
  // Whether node `n` (an is_anchor op) should run its elementwise consumers as an epilogue
  // on each part of its result as its kernel writes it.
  virtual bool can_anchor(const Node& n) const = 0;
};

struct FusionOptions {
  int max_inputs = 24;        // operands per fused kernel
  int max_duplicates = 32;    // cheap producers recomputed inside one kernel
};
// Groups elementwise chains into fused nodes that `target` can run, with elementwise
// prologues of reductions and multi-output kernels (see fusion.cc for the rules).
Graph fuse(const Graph& g, const FusionTarget& target, const FusionOptions& options = {});

// Moves an elementwise consumer (a fused node without reduces, or a lone elementwise
// node) into the anchor op that produces its operand, when it is that value's first reader:
// one fused node whose body starts with the anchor (see check_fused_body), which also
// returns the anchor's result when others read it, so the epilogue reads it from cache.
Graph fuse_epilogues(const Graph& g, const FusionTarget& target);

// Lifetimes: which values die after each node, and which inputs a node may overwrite.
struct MemoryPlan {
  // release[i]: values whose last use is node i; the executor drops its reference to them
  // after running node i (graph outputs are never released).
  std::vector<std::vector<ValueId>> release;
  // inplace[i]: (input position, result index) pairs where result may take the input's
  // buffer when the input is dense, dead after node i and held by nobody else (graph
  // outputs only for update nodes, which swap storage with the preallocated output).
  std::vector<std::vector<std::pair<int, int>>> inplace;
  // output_donors[k]: the parameters whose buffer output k may take when the caller
  // donates them (each is read only by the node computing the output, element for element).
  std::vector<std::vector<int>> output_donors;
};
MemoryPlan plan_memory(const Graph& g);
// Nodes whose result is their first operand with some elements replaced: the result may
// take that operand's buffer and write only the replaced elements.
bool is_update(OpKind kind);

// A copy of `n` with inputs renamed through `map` (old value id -> new value id).
Node remap(const Node& n, const std::vector<ValueId>& map);

}  // namespace tinyxla::passes
