// Memory planning: the last use of every value, so the executor drops intermediates as soon
// as they are dead, and the inputs a kernel may overwrite with its result: an elementwise
// kernel's operands, and the operand an update (dynamic_update_slice, scatter) writes into.
#include "../ir/fused_body.h"
#include "../ops/structural.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

// Whether result `r` of `n` may take the buffer of input `j`: both are read and written
// element for element in the same order, with elements of the same size.
// `fused_size` is the iteration size of a fused node's body.
bool aliasable(const Graph& g, const Node& n, size_t j, int r, int64_t fused_size) {
  if (is_update(n.kind)) return j == 0 && r == 0;
  const ValueType& in = g.type(n.inputs[j]);
  const ValueType& out = g.type(n.first_result + r);
  if (itemsize(in.dtype) != itemsize(out.dtype)) return false;
  if (is_elementwise(n.kind)) return in.shape == out.shape;
  if (n.kind != OpKind::fused) return false;
  const Graph& body = *n.body;
  const bool reduced = body.node(body.defining_node(body.outputs()[size_t(r)])).kind == OpKind::reduce;
  return !reduced && num_elements(in.shape) == fused_size;
}

}  // namespace

bool is_update(OpKind kind) {
  return kind == OpKind::dynamic_update_slice || kind == OpKind::scatter;
}

MemoryPlan plan_memory(const Graph& g) {
  const int nn = g.num_nodes();
  std::vector<int> last_use(size_t(g.num_values()), -1);
  std::vector<char> is_output(size_t(g.num_values()), 0);
  for (int i = 0; i < nn; ++i)
    for (ValueId v : g.node(i).inputs) last_use[size_t(v)] = i;
  for (ValueId v : g.outputs()) is_output[size_t(v)] = 1;
  MemoryPlan plan;
  plan.release.resize(size_t(nn));
  plan.inplace.resize(size_t(nn));
  for (int i = 0; i < nn; ++i) {
    const Node& n = g.node(i);
    const int64_t fused_size = n.kind == OpKind::fused ? check_fused_body(*n.body).size : 0;
    for (int r = 0; r < n.num_results; ++r) {
      const ValueId v = n.first_result + r;
      if (last_use[size_t(v)] < 0 && !is_output[size_t(v)]) plan.release[size_t(i)].push_back(v);
    }
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      const ValueId v = n.inputs[j];
      if (last_use[size_t(v)] != i || is_output[size_t(v)]) continue;
      bool first = true;  // an operand used twice is released once
      for (size_t k = 0; k < j; ++k) first = first && n.inputs[k] != v;
      if (!first) continue;
      plan.release[size_t(i)].push_back(v);
      // An output is preallocated: only an update, which would otherwise copy its whole
      // operand, trades storage with a dead operand (see Executable).
      for (int r = 0; r < n.num_results; ++r)
        if ((!is_output[size_t(n.first_result + r)] || is_update(n.kind)) &&
            aliasable(g, n, j, r, fused_size))
          plan.inplace[size_t(i)].push_back({int(j), r});
    }
  }
  const auto& outs = g.outputs();
  plan.output_donors.assign(outs.size(), {});
  // A donor is read by the output's node alone: nothing else (a view in particular) can
  // still see its buffer once the output is written there.
  std::vector<int> only_user(size_t(g.num_values()), -1);
  for (int i = 0; i < nn; ++i)
    for (ValueId v : g.node(i).inputs)
      only_user[size_t(v)] = only_user[size_t(v)] == -1 || only_user[size_t(v)] == i ? i : -2;
  for (size_t k = 0; k < outs.size(); ++k) {
    const ValueId v = outs[k];
    bool returned_before = false;
    for (size_t m = 0; m < k; ++m) returned_before = returned_before || outs[m] == v;
    const int i = g.defining_node(v);
    const Node& n = g.node(i);
    if (returned_before || !(is_elementwise(n.kind) || n.kind == OpKind::fused ||
                             is_update(n.kind)))
      continue;
    const int64_t fused_size = n.kind == OpKind::fused ? check_fused_body(*n.body).size : 0;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      const ValueId u = n.inputs[j];
      const Node& def = g.node(g.defining_node(u));
      if (def.kind == OpKind::parameter && only_user[size_t(u)] == i && !is_output[size_t(u)] &&
          aliasable(g, n, j, v - n.first_result, fused_size))
        plan.output_donors[k].push_back(int(def.attr<ops::ParameterAttrs>().index));
    }
  }
  return plan;
}

}  // namespace tinyxla::passes
