// Epilogue fusion (see passes.h fuse_epilogues): runs after fusion, which has grouped the
// elementwise consumers of an anchor's result; the group (or lone elementwise node) that
// reads the result first becomes one fused node whose body starts with the anchor, with
// the result as an extra output when later nodes (or the graph's outputs) read it too.
#include <vector>

#include "../ir/fused_body.h"
#include "../ops/structural.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

// The operand position of `consumer` (node `at`) reading the result of an anchor it can
// take, or -1: it must be the result's first reader (later readers and the graph's
// outputs then read the result as an extra output of the fused node).
int anchored_operand(const Graph& g, int at, const std::vector<int>& first_reader,
                     const std::vector<int>& taken, const FusionTarget& target) {
  const Node& consumer = g.node(at);
  Shape space;
  if (consumer.kind == OpKind::fused) {
    const FusedBodyInfo info = check_fused_body(*consumer.body);
    if (info.has_reduce || info.anchor >= 0) return -1;
    space = info.iter_shape;
  } else if (is_elementwise(consumer.kind) && target.can_fuse_elementwise(consumer, g)) {
    space = g.type(consumer.first_result).shape;
  } else {
    return -1;
  }
  for (size_t k = 0; k < consumer.inputs.size(); ++k) {
    const ValueId v = consumer.inputs[k];
    const Node& p = g.node(g.defining_node(v));
    if (!is_anchor(p.kind) || p.num_results != 1 || first_reader[size_t(v)] != at ||
        taken[size_t(g.defining_node(v))] >= 0 || g.type(v).shape != space ||
        !target.can_anchor(p))
      continue;
    return int(k);
  }
  return -1;
}

// The body of anchor `a` followed by `consumer` reading its result at operand `k`:
// parameters for the anchor's operands, then for the consumer's other operands; the
// anchor's result is a last output when `exported`.
std::shared_ptr<const Graph> anchored_body(const Graph& g, const Node& a, const Node& consumer,
                                           int k, bool exported, std::vector<ValueId>& inputs) {
  auto body = std::make_shared<Graph>();
  auto param = [&](ValueId v) {
    inputs.push_back(v);
    const ValueType& t = g.type(v);
    return body->add_node(ops::make_node(OpKind::parameter, ops::ParameterAttrs{0, t.shape, t.dtype}),
                          {t});
  };
  Node anchor = a;
  for (ValueId& v : anchor.inputs) v = param(v);
  // The consumer's operands as the body names them (the anchored one: the anchor's result).
  std::vector<ValueId> operands(consumer.inputs.size(), -1);
  for (size_t j = 0; j < consumer.inputs.size(); ++j) {
    if (consumer.inputs[j] == consumer.inputs[size_t(k)]) continue;
    for (size_t i = 0; i < j && operands[j] < 0; ++i)  // an operand read twice: one parameter
      if (consumer.inputs[i] == consumer.inputs[j]) operands[j] = operands[i];
    if (operands[j] < 0) operands[j] = param(consumer.inputs[j]);
  }
  operands[size_t(k)] = body->add_node(std::move(anchor), {g.type(a.first_result)});
  for (size_t j = 0; j < operands.size(); ++j)
    if (consumer.inputs[j] == consumer.inputs[size_t(k)]) operands[j] = operands[size_t(k)];
  const ValueId anchor_value = operands[size_t(k)];
  if (consumer.kind != OpKind::fused) {
    Node c = consumer;
    c.inputs = operands;
    std::vector<ValueId> outs{body->add_node(std::move(c), {g.type(consumer.first_result)})};
    if (exported) outs.push_back(anchor_value);
    body->set_outputs(std::move(outs));
    return body;
  }
  const Graph& inner = *consumer.body;
  std::vector<ValueId> map(size_t(inner.num_values()), -1);
  for (const Node& n : inner.nodes()) {
    if (n.kind == OpKind::parameter) {
      map[size_t(n.first_result)] = operands[size_t(n.attr<ops::ParameterAttrs>().index)];
      continue;
    }
    Node c = n;
    for (ValueId& v : c.inputs) v = map[size_t(v)];
    map[size_t(n.first_result)] = body->add_node(std::move(c), {inner.type(n.first_result)});
  }
  std::vector<ValueId> outs;
  for (ValueId v : inner.outputs()) outs.push_back(map[size_t(v)]);
  if (exported) outs.push_back(anchor_value);
  body->set_outputs(std::move(outs));
  return body;
}

}  // namespace

Graph fuse_epilogues(const Graph& g, const FusionTarget& target) {
  // first_reader[v]: the first node reading v; needed[v]: whether anything else needs v.
  std::vector<int> first_reader(size_t(g.num_values()), -1);
  std::vector<char> needed(size_t(g.num_values()), 0);
  for (int i = 0; i < g.num_nodes(); ++i)
    for (ValueId v : g.node(i).inputs) {
      if (first_reader[size_t(v)] < 0) first_reader[size_t(v)] = i;
      else if (first_reader[size_t(v)] != i) needed[size_t(v)] = 1;
    }
  for (ValueId v : g.outputs()) needed[size_t(v)] = 1;
  // taken[i]: node i's anchor moves into consumer node taken[i].
  std::vector<int> taken(size_t(g.num_nodes()), -1), anchored(size_t(g.num_nodes()), -1);
  bool any = false;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const int k = anchored_operand(g, i, first_reader, taken, target);
    if (k < 0) continue;
    const int a = g.defining_node(g.node(i).inputs[size_t(k)]);
    taken[size_t(a)] = i;
    anchored[size_t(i)] = k;
    any = true;
  }
  if (!any) return g;
  Graph out;
  std::vector<ValueId> map(size_t(g.num_values()), -1);
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    if (taken[size_t(i)] >= 0) continue;
    std::vector<ValueType> types;
    for (int r = 0; r < n.num_results; ++r) types.push_back(g.type(n.first_result + r));
    ValueId first;
    if (anchored[size_t(i)] >= 0) {
      const int k = anchored[size_t(i)];
      const ValueId v = n.inputs[size_t(k)];
      const Node& a = g.node(g.defining_node(v));
      Node f;
      f.kind = OpKind::fused;
      std::vector<ValueId> inputs;
      f.body = anchored_body(g, a, n, k, needed[size_t(v)] != 0, inputs);
      for (ValueId in : inputs) f.inputs.push_back(map[size_t(in)]);
      if (needed[size_t(v)]) types.push_back(g.type(v));
      first = out.add_node(std::move(f), std::move(types));
      if (needed[size_t(v)]) map[size_t(v)] = first + n.num_results;
    } else {
      first = out.add_node(remap(n, map), std::move(types));
    }
    for (int r = 0; r < n.num_results; ++r) map[size_t(n.first_result + r)] = first + r;
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outputs));
  return out;
}

}  // namespace tinyxla::passes
