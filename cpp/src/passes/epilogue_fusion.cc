// Epilogue fusion (see passes.h fuse_epilogues): runs after fusion, which has grouped the
// elementwise consumers of an anchor's result; each group (or lone elementwise node) that
// is the result's only reader becomes one fused node whose body starts with the anchor.
#include <vector>

#include "../ir/fused_body.h"
#include "../ops/structural.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

// The operand position of `consumer` reading the result of an anchor it can take, or -1.
int anchored_operand(const Graph& g, const Node& consumer, const std::vector<int>& readers,
                     const std::vector<char>& is_output, const FusionTarget& target) {
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
    if (!is_anchor(p.kind) || p.num_results != 1 || readers[size_t(v)] != 1 ||
        is_output[size_t(v)] || g.type(v).shape != space || !target.can_anchor(p))
      continue;
    return int(k);
  }
  return -1;
}

// The body of anchor `a` followed by `consumer` reading its result at operand `k`:
// parameters for the anchor's operands, then for the consumer's other operands.
std::shared_ptr<const Graph> anchored_body(const Graph& g, const Node& a, const Node& consumer,
                                           int k, std::vector<ValueId>& inputs) {
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
  if (consumer.kind != OpKind::fused) {
    Node c = consumer;
    c.inputs = operands;
    body->set_outputs({body->add_node(std::move(c), {g.type(consumer.first_result)})});
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
  body->set_outputs(std::move(outs));
  return body;
}

}  // namespace

Graph fuse_epilogues(const Graph& g, const FusionTarget& target) {
  std::vector<int> readers(size_t(g.num_values()), 0);
  std::vector<char> is_output(size_t(g.num_values()), 0);
  for (const Node& n : g.nodes())
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      bool seen = false;  // a node reading a value twice is one reader
      for (size_t i = 0; i < j; ++i) seen = seen || n.inputs[i] == n.inputs[j];
      if (!seen) readers[size_t(n.inputs[j])] += 1;
    }
  for (ValueId v : g.outputs()) is_output[size_t(v)] = 1;
  // taken[i]: node i's anchor moves into consumer node taken[i].
  std::vector<int> taken(size_t(g.num_nodes()), -1), anchored(size_t(g.num_nodes()), -1);
  bool any = false;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const int k = anchored_operand(g, g.node(i), readers, is_output, target);
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
      const Node& a = g.node(g.defining_node(n.inputs[size_t(k)]));
      Node f;
      f.kind = OpKind::fused;
      std::vector<ValueId> inputs;
      f.body = anchored_body(g, a, n, k, inputs);
      for (ValueId v : inputs) f.inputs.push_back(map[size_t(v)]);
      first = out.add_node(std::move(f), std::move(types));
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
