// Common subexpression elimination: a forward sweep keyed on each node's kind, attributes
// (their definition's key) and (already merged) operands. Constants merge by value when small and ready, else by buffer.
#include <cstring>
#include <string>
#include <unordered_map>

#include "../ops/op_def.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

constexpr size_t kMaxKeyedConstantBytes = 1024;

template <typename T>
void put(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_ints(std::string& key, const std::vector<int64_t>& v) {
  put(key, v.size());
  key.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
}

// The identity of a node for merging, or "" when it must stay distinct.
std::string node_key(const Node& n) {
  if (n.kind == OpKind::parameter || has_side_effects(n)) return "";
  std::string key;
  put(key, n.kind);
  put(key, n.inputs.size());
  key.append(reinterpret_cast<const char*>(n.inputs.data()), n.inputs.size() * sizeof(ValueId));
  ops::op_def(n.kind).append_key(n.attrs, key);
  if (n.body) put(key, n.body.get());  // a region: equal only with the same body
  if (n.kind == OpKind::constant) {
    const Array& c = n.constant;
    put(key, c.dtype());
    put_ints(key, c.shape());
    if (c.nbytes() <= kMaxKeyedConstantBytes && c.is_ready() && !c.event()->has_error()) {
      std::string bytes(c.nbytes(), '\0');
      c.copy_to_host(bytes.data());
      key += 'v';
      key += bytes;
    } else {
      key += 'b';
      put(key, c.buffer().get());
      put(key, c.offset());
      put_ints(key, c.strides());
    }
  }
  if (n.kind == OpKind::fused) put(key, n.body.get());
  return key;
}

}  // namespace

Graph cse(const Graph& g) {
  Graph out;
  std::vector<ValueId> map(size_t(g.num_values()), -1);
  std::unordered_map<std::string, ValueId> seen;
  for (const Node& old : g.nodes()) {
    Node n = remap(old, map);
    std::string key = node_key(n);
    auto it = key.empty() ? seen.end() : seen.find(key);
    ValueId first;
    if (it != seen.end()) {
      first = it->second;
    } else {
      std::vector<ValueType> types;
      for (int r = 0; r < n.num_results; ++r) types.push_back(g.type(old.first_result + r));
      first = out.add_node(std::move(n), std::move(types));
      if (!key.empty()) seen.emplace(std::move(key), first);
    }
    for (int r = 0; r < old.num_results; ++r) map[size_t(old.first_result + r)] = first + r;
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outputs));
  return out;
}

}  // namespace tinyxla::passes
