// Fusion: groups elementwise chains (with reshapes and scalar constants) into fused nodes
// that the tiled interpreter runs in one pass over memory, fuses elementwise prologues into
// reductions, and gives a kernel extra outputs when a producer inside it is needed outside.
//
// Nodes are visited consumers first (reverse topological order). Each fusible node not yet
// taken roots a group, which then pulls in its producers, latest first. A producer whose
// every reader is in the group is absorbed; one also needed elsewhere becomes an extra
// output when no outside reader leads back into the group (else a cycle), or is recomputed
// in the group when cheap. Vetoes (as XLA and tinygrad): never recompute an expensive
// producer, nor one that feeds a max/min reduction (the softmax rule); cap the inputs of
// a kernel. Groups are then ordered topologically as single nodes.
#include <algorithm>
#include <map>
#include <queue>
#include <unordered_set>

#include "../ir/fused_body.h"
#include "../ops/reductions.h"
#include "../ops/structural.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

// Steps of the reachability searches over the whole pass; past it, merges are refused.
constexpr int64_t kSearchBudget = 1 << 21;
// Elements from which a lone elementwise op may be a kernel of its own (worth_a_kernel_alone).
constexpr int64_t kLoneKernelElements = 1 << 16;

struct Group {
  int root = -1;
  int64_t size = 0;
  std::vector<int> nodes;         // members and duplicates, in graph order once finished
  std::vector<int> members;       // the nodes it computes for the graph (no duplicates)
  std::vector<ValueId> inputs;    // values read from outside, in first-use order
  std::vector<ValueId> outputs;   // the root's result first, then extra outputs
};

class Fuser {
 public:
  Fuser(const Graph& g, const FusionTarget& target, const FusionOptions& options)
      : g_(g), target_(target), opt_(options), n_(g.num_nodes()), member_of_(size_t(n_), -1),
        stamp_(size_t(n_), -1), dup_(size_t(n_), -1), processed_(size_t(n_), 0),
        emitted_(size_t(n_), 0), readers_(size_t(g.num_values())),
        live_reads_(size_t(g.num_values()), 0), group_readers_(size_t(g.num_values())) {
    for (int i = 0; i < n_; ++i)
      for (ValueId v : g.node(i).inputs) readers_[size_t(v)].push_back(i);
    for (ValueId v : g.outputs()) live_reads_[size_t(v)] += 1;
  }

  Graph run() {
    for (int i = n_ - 1; i >= 0; --i) {
      if (processed_[size_t(i)]) continue;
      const Node& n = g_.node(i);
      processed_[size_t(i)] = 1;
      if (n.kind != OpKind::parameter && !has_side_effects(n) && is_dead(n)) continue;
      if (root_size(n) > 0 && build_group(i)) continue;
      emitted_[size_t(i)] = 1;
      for (ValueId v : n.inputs) live_reads_[size_t(v)] += 1;
    }
    return assemble();
  }

 private:
  bool is_dead(const Node& n) const {
    for (int r = 0; r < n.num_results; ++r)
      if (live_reads_[size_t(n.first_result + r)] > 0) return false;
    return true;
  }

  // The iteration size of a group rooted at `n`, or 0 when `n` cannot root one.
  int64_t root_size(const Node& n) const {
    if (n.kind == OpKind::reduce) {
      const ValueType& t = g_.type(n.inputs[0]);
      const auto& reduce = n.attr<ops::ReduceAttrs>();
      if (!target_.can_fuse_reduce(reduce.op, t.dtype, t.shape, reduce.axes)) return 0;
      return num_elements(t.shape);
    }
    if (!is_elementwise(n.kind) || !target_.can_fuse_elementwise(n, g_)) return 0;
    return num_elements(g_.type(n.first_result).shape);
  }

  bool is_scalar_constant(ValueId v) const {
    const Node& p = g_.node(g_.defining_node(v));
    return p.kind == OpKind::constant && g_.type(v).shape.empty();
  }

  // Whether `p` may join a group of `size` elements as a computed value.
  bool joinable(const Node& p, int64_t size) const {
    if (p.num_results != 1 || num_elements(g_.type(p.first_result).shape) != size) return false;
    if (p.kind == OpKind::reshape) return true;
    return is_elementwise(p.kind) && target_.can_fuse_elementwise(p, g_);
  }

  bool cheap(const Node& p) const { return !target_.is_expensive(p); }

  // A lone large elementwise op that reads a broadcast or transposed operand still becomes
  // a kernel: the upper tier then compiles it for this CPU, where the eager kernels are
  // built for the baseline ISA and fill broadcasts per tile (softmax's final division reads
  // its sums broadcast by row).
  bool worth_a_kernel_alone(const Node& n) const {
    if (!is_elementwise(n.kind) || num_elements(g_.type(n.first_result).shape) < kLoneKernelElements)
      return false;
    for (ValueId v : n.inputs) {
      const Node& p = g_.node(g_.defining_node(v));
      if ((p.kind == OpKind::broadcast_in_dim && !g_.type(p.inputs[0]).shape.empty()) ||
          p.kind == OpKind::transpose)
        return true;
    }
    return false;
  }

  bool feeds_max_reduce(ValueId v) const {
    for (int u : readers_[size_t(v)]) {
      const Node& r = g_.node(u);
      if (r.kind == OpKind::reduce && (r.attr<ops::ReduceAttrs>().op == ReduceOp::max ||
                                       r.attr<ops::ReduceAttrs>().op == ReduceOp::min))
        return true;
    }
    return false;
  }

  // The group under construction.
  struct Building {
    int gid = 0, attempt = 0;
    int64_t size = 0;
    bool has_reduce = false;
    Shape reduce_shape;
    std::vector<int64_t> reduce_axes;
    std::vector<int> absorbed, dups;
    std::vector<ValueId> extra;
    // Values read by the group but not computed in it, and those it computes.
    std::vector<ValueId> frontier;
    std::unordered_set<ValueId> frontier_set, internal;
  };

  // Whether node `from` leads back into the group `b` builds (to a member, or to a value
  // it reads), following readers and treating finished groups as single nodes. A finished
  // group is entered through any value it reads (its duplicates' operands too) and left
  // through its members only: a duplicate's readers read the original, outside the group
  // (following them made a backward-pass kernel look like a cycle through the forward
  // pass). Refuses (true) when the search budget runs out.
  bool reaches(int from, const Building& b) {
    std::vector<int> stack{from};
    std::unordered_set<int> seen{from};
    while (!stack.empty()) {
      if (--budget_ < 0) return true;
      int x = stack.back();
      stack.pop_back();
      if (member_of_[size_t(x)] == b.gid) return true;
      std::vector<int> next;
      const Node& n = g_.node(x);
      for (int r = 0; r < n.num_results; ++r) {
        const ValueId v = n.first_result + r;
        if (b.frontier_set.count(v)) return true;
        for (int u : readers_[size_t(v)]) next.push_back(u);
        for (int h : group_readers_[size_t(v)])
          for (int m : groups_[size_t(h)].members) next.push_back(m);
      }
      int h = member_of_[size_t(x)];
      if (h >= 0 && h != b.gid)
        for (int m : groups_[size_t(h)].members) next.push_back(m);
      // Each candidate costs a step: a large group's members would otherwise make one
      // step arbitrarily expensive (minutes of compile for a few thousand nodes).
      budget_ -= int64_t(next.size());
      for (int y : next)
        if (seen.insert(y).second) stack.push_back(y);
    }
    return false;
  }

  bool is_source(ValueId v) const {
    OpKind k = g_.node(g_.defining_node(v)).kind;
    return k == OpKind::parameter || k == OpKind::constant;
  }

  void read(Building& b, const Node& p) const {
    for (ValueId v : p.inputs)
      if (!b.internal.count(v) && !is_scalar_constant(v) && b.frontier_set.insert(v).second)
        b.frontier.push_back(v);
  }
  int new_inputs(const Building& b, const Node& p) const {
    int k = 0;
    for (ValueId v : p.inputs)
      k += !b.internal.count(v) && !is_scalar_constant(v) && !b.frontier_set.count(v);
    return k;
  }
  bool is_output(ValueId v) const {
    return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
  }

  // Takes unprocessed consumer `u` into the group as an extra output when it reads only
  // what the group computes or reads already (or parameters and constants) and none of
  // its readers leads back into the group: siblings then share one pass over memory.
  bool absorb_consumer(Building& b, int u) {
    if (processed_[size_t(u)] || member_of_[size_t(u)] == b.gid || dup_[size_t(u)] == b.gid) return false;
    const Node& c = g_.node(u);
    if (c.kind == OpKind::reduce) {
      const ValueType& t = g_.type(c.inputs[0]);
      if (root_size(c) != b.size || (b.has_reduce && (t.shape != b.reduce_shape || c.attr<ops::ReduceAttrs>().axes != b.reduce_axes)))
        return false;
    } else if (!joinable(c, b.size)) {
      return false;
    }
    const ValueId v = c.first_result;
    if (readers_[size_t(v)].empty() && !is_output(v)) return false;  // dead
    for (ValueId in : c.inputs)
      if (!b.internal.count(in) && !b.frontier_set.count(in) && !is_source(in)) return false;
    if (int(b.frontier.size()) + new_inputs(b, c) > opt_.max_inputs) return false;
    for (int w : readers_[size_t(v)])
      if (reaches(w, b)) return false;
    member_of_[size_t(u)] = b.gid;
    processed_[size_t(u)] = 1;
    b.absorbed.push_back(u);
    b.extra.push_back(v);
    b.internal.insert(v);
    read(b, c);
    if (c.kind == OpKind::reduce && !b.has_reduce) {
      b.has_reduce = true;
      b.reduce_shape = g_.type(c.inputs[0]).shape;
      b.reduce_axes = c.attr<ops::ReduceAttrs>().axes;
    }
    return true;
  }

  // Grows a group from `root`; false (and nothing changed) when it would hold one node.
  bool build_group(int root) {
    const Node& rn = g_.node(root);
    Building b;
    b.gid = int(groups_.size());
    b.attempt = ++attempts_;
    b.size = root_size(rn);
    if (rn.kind == OpKind::reduce) {
      b.has_reduce = true;
      b.reduce_shape = g_.type(rn.inputs[0]).shape;
      b.reduce_axes = rn.attr<ops::ReduceAttrs>().axes;
    }
    b.absorbed = {root};
    member_of_[size_t(root)] = b.gid;
    std::priority_queue<int> heap;
    auto push_producers = [&](const Node& p) {
      for (ValueId v : p.inputs) heap.push(g_.defining_node(v));
    };
    b.internal.insert(rn.first_result);
    read(b, rn);
    push_producers(rn);
    while (!heap.empty()) {
      const int pi = heap.top();
      heap.pop();
      if (stamp_[size_t(pi)] == b.attempt) continue;
      stamp_[size_t(pi)] = b.attempt;
      const Node& p = g_.node(pi);
      if (processed_[size_t(pi)] || !joinable(p, b.size)) continue;
      const ValueId v = p.first_result;
      if (!b.frontier_set.count(v)) continue;  // read only by duplicates dropped meanwhile
      // Growing the group replaces input v by p's operands.
      if (int(b.frontier.size()) - 1 + new_inputs(b, p) > opt_.max_inputs) continue;
      // Consumers of v outside the group first try to join it.
      for (int u : readers_[size_t(v)]) absorb_consumer(b, u);
      std::vector<int> outside;
      bool pending = false;
      for (int u : readers_[size_t(v)]) {
        // A recomputed reader's original still reads v (unless it dies later).
        if (member_of_[size_t(u)] == b.gid) continue;
        outside.push_back(u);
        pending = pending || !processed_[size_t(u)];
      }
      const bool needed = live_reads_[size_t(v)] > 0 || pending;
      bool take = !needed;
      bool as_output = false;
      if (!take) {
        take = as_output = true;
        for (int u : outside)
          if (reaches(u, b)) {
            take = as_output = false;
            break;
          }
      }
      if (take) {
        member_of_[size_t(pi)] = b.gid;
        processed_[size_t(pi)] = 1;
        b.absorbed.push_back(pi);
        if (as_output) b.extra.push_back(v);
      } else if (cheap(p) && int(b.dups.size()) < opt_.max_duplicates && !feeds_max_reduce(v)) {
        dup_[size_t(pi)] = b.gid;
        b.dups.push_back(pi);
      } else {
        continue;
      }
      b.internal.insert(v);
      b.frontier_set.erase(v);
      b.frontier.erase(std::find(b.frontier.begin(), b.frontier.end(), v));
      read(b, p);
      push_producers(p);
    }
    // Siblings: other consumers of what the group reads.
    for (size_t k = 0; k < b.frontier.size(); ++k)
      for (int u : readers_[size_t(b.frontier[k])]) absorb_consumer(b, u);
    if (b.absorbed.size() == 1 && b.dups.empty() && !worth_a_kernel_alone(rn)) {
      member_of_[size_t(root)] = -1;
      return false;
    }
    Group grp;
    grp.root = root;
    grp.size = b.size;
    grp.members = b.absorbed;
    grp.nodes = b.absorbed;
    grp.nodes.insert(grp.nodes.end(), b.dups.begin(), b.dups.end());
    std::sort(grp.nodes.begin(), grp.nodes.end());
    grp.inputs = b.frontier;
    grp.outputs = {rn.first_result};
    std::sort(b.extra.begin(), b.extra.end());
    grp.outputs.insert(grp.outputs.end(), b.extra.begin(), b.extra.end());
    for (ValueId in : grp.inputs) {
      live_reads_[size_t(in)] += 1;
      group_readers_[size_t(in)].push_back(b.gid);
    }
    groups_.push_back(std::move(grp));
    return true;
  }

  // The body of a group: parameters for its inputs, scalar constants copied in.
  std::shared_ptr<const Graph> make_body(const Group& grp) const {
    auto body = std::make_shared<Graph>();
    std::map<ValueId, ValueId> map;
    for (ValueId v : grp.inputs) {
      const ValueType& t = g_.type(v);
      map[v] = body->add_node(
          ops::make_node(OpKind::parameter, ops::ParameterAttrs{0, t.shape, t.dtype}), {t});
    }
    for (int i : grp.nodes) {
      Node c = g_.node(i);
      for (ValueId& v : c.inputs) {
        auto it = map.find(v);
        if (it == map.end()) {  // a scalar constant
          it = map.emplace(v, body->add_node(g_.node(g_.defining_node(v)), {g_.type(v)})).first;
        }
        v = it->second;
      }
      map[g_.node(i).first_result] = body->add_node(std::move(c), {g_.type(g_.node(i).first_result)});
    }
    std::vector<ValueId> outs;
    for (ValueId v : grp.outputs) outs.push_back(map.at(v));
    body->set_outputs(std::move(outs));
    return body;
  }

  // Orders the kept nodes and the groups topologically (Kahn, earliest original position
  // first) into the new graph; the unfused graph when the grouping left a cycle.
  Graph assemble() {
    if (groups_.empty()) return g_;
    // Units: kept node i is unit i; group k is unit n_ + k.
    const int units = n_ + int(groups_.size());
    std::vector<int> producer(size_t(g_.num_values()), -1), position(static_cast<size_t>(units), 0);
    std::vector<std::vector<ValueId>> unit_inputs(static_cast<size_t>(units));
    std::vector<char> active(static_cast<size_t>(units), 0);
    for (int i = 0; i < n_; ++i) {
      if (!emitted_[size_t(i)]) continue;
      active[size_t(i)] = 1;
      position[size_t(i)] = i;
      unit_inputs[size_t(i)] = g_.node(i).inputs;
      const Node& n = g_.node(i);
      for (int r = 0; r < n.num_results; ++r) producer[size_t(n.first_result + r)] = i;
    }
    for (size_t k = 0; k < groups_.size(); ++k) {
      const int u = n_ + int(k);
      active[size_t(u)] = 1;
      position[size_t(u)] = groups_[k].root;
      unit_inputs[size_t(u)] = groups_[k].inputs;
      for (ValueId v : groups_[k].outputs) producer[size_t(v)] = u;
    }
    std::vector<int> indegree(static_cast<size_t>(units), 0);
    std::vector<std::vector<int>> consumers(static_cast<size_t>(units));
    int last_effect = -1;  // nodes with side effects keep their order: each follows the last
    for (int u = 0; u < units; ++u) {
      if (!active[size_t(u)]) continue;
      std::unordered_set<int> deps;
      for (ValueId v : unit_inputs[size_t(u)]) {
        if (producer[size_t(v)] < 0) return g_;  // a value nobody produces: a grouping bug
        deps.insert(producer[size_t(v)]);
      }
      if (u < n_ && has_side_effects(g_.node(u))) {
        if (last_effect >= 0) deps.insert(last_effect);
        last_effect = u;
      }
      for (int d : deps) consumers[size_t(d)].push_back(u);
      indegree[size_t(u)] = int(deps.size());
    }
    using Item = std::pair<int, int>;  // (position, unit), smallest first
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
    for (int u = 0; u < units; ++u)
      if (active[size_t(u)] && indegree[size_t(u)] == 0) ready.push({position[size_t(u)], u});
    Graph out;
    std::vector<ValueId> map(size_t(g_.num_values()), -1);
    int done = 0, total = 0;
    for (int u = 0; u < units; ++u) total += active[size_t(u)];
    while (!ready.empty()) {
      const int u = ready.top().second;
      ready.pop();
      ++done;
      if (u < n_) {
        const Node& n = g_.node(u);
        std::vector<ValueType> types;
        for (int r = 0; r < n.num_results; ++r) types.push_back(g_.type(n.first_result + r));
        ValueId first = out.add_node(remap(n, map), std::move(types));
        for (int r = 0; r < n.num_results; ++r) map[size_t(n.first_result + r)] = first + r;
      } else {
        const Group& grp = groups_[size_t(u - n_)];
        Node f;
        f.kind = OpKind::fused;
        for (ValueId v : grp.inputs) f.inputs.push_back(map[size_t(v)]);
        f.body = make_body(grp);
        std::vector<ValueType> types;
        for (ValueId v : grp.outputs) types.push_back(g_.type(v));
        ValueId first = out.add_node(std::move(f), std::move(types));
        for (size_t r = 0; r < grp.outputs.size(); ++r) map[size_t(grp.outputs[r])] = first + ValueId(r);
      }
      for (int c : consumers[size_t(u)])
        if (--indegree[size_t(c)] == 0) ready.push({position[size_t(c)], c});
    }
    if (done != total) return g_;
    std::vector<ValueId> outputs;
    for (ValueId v : g_.outputs()) outputs.push_back(map[size_t(v)]);
    out.set_outputs(std::move(outputs));
    return out;
  }

  const Graph& g_;
  const FusionTarget& target_;
  FusionOptions opt_;
  const int n_;
  std::vector<int> member_of_;  // the group a node was absorbed into
  std::vector<int> stamp_;      // the last group attempt that considered a node
  int attempts_ = 0;
  std::vector<int> dup_;        // the last group that recomputes a node
  std::vector<char> processed_, emitted_;
  std::vector<std::vector<int>> readers_;
  std::vector<int> live_reads_;  // finished readers (and outputs) needing a value stored
  std::vector<std::vector<int>> group_readers_;  // per value, the finished groups reading it
  std::vector<Group> groups_;
  int64_t budget_ = kSearchBudget;
};

}  // namespace

Graph fuse(const Graph& g, const FusionTarget& target, const FusionOptions& options) {
  return Fuser(g, target, options).run();
}

}  // namespace tinyxla::passes
