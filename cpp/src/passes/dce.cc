// Dead code elimination: one backward sweep marks what the outputs need.
#include "passes.h"

namespace tinyxla::passes {

Node remap(const Node& n, const std::vector<ValueId>& map) {
  Node c = n;
  for (ValueId& v : c.inputs) v = map[size_t(v)];
  return c;
}

Graph dce(const Graph& g) {
  std::vector<char> live_value(size_t(g.num_values()), 0), live_node(size_t(g.num_nodes()), 0);
  for (ValueId v : g.outputs()) live_value[size_t(v)] = 1;
  for (int i = g.num_nodes() - 1; i >= 0; --i) {
    const Node& n = g.node(i);
    bool live = n.kind == OpKind::parameter || has_side_effects(n);
    for (int r = 0; r < n.num_results && !live; ++r) live = live_value[size_t(n.first_result + r)];
    if (!live) continue;
    live_node[size_t(i)] = 1;
    for (ValueId v : n.inputs) live_value[size_t(v)] = 1;
  }
  Graph out;
  std::vector<ValueId> map(size_t(g.num_values()), -1);
  for (int i = 0; i < g.num_nodes(); ++i) {
    if (!live_node[size_t(i)]) continue;
    const Node& n = g.node(i);
    std::vector<ValueType> types;
    for (int r = 0; r < n.num_results; ++r) types.push_back(g.type(n.first_result + r));
    ValueId first = out.add_node(remap(n, map), std::move(types));
    for (int r = 0; r < n.num_results; ++r) map[size_t(n.first_result + r)] = first + r;
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outputs));
  return out;
}

}  // namespace tinyxla::passes
