// Validation of fused bodies (see fused_body.h).
#include "fused_body.h"

#include "../ops/reductions.h"
#include "../ops/structural.h"

#include <string>

#include "tinyxla/error.h"

namespace tinyxla {
namespace {

[[noreturn]] void invalid(const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, "fused", msg);
}

}  // namespace

bool is_elementwise(OpKind kind) {
  return kind == OpKind::unary || kind == OpKind::binary || kind == OpKind::select_n ||
         kind == OpKind::clamp || kind == OpKind::convert;
}

bool is_anchor(OpKind kind) { return kind == OpKind::conv; }

FusedBodyInfo check_fused_body(const Graph& body) {
  FusedBodyInfo info;
  if (body.outputs().empty()) invalid("a fused body needs at least one output");
  // The iteration space: the reduces' operand, else the first output.
  for (const Node& n : body.nodes()) {
    if (n.kind != OpKind::reduce) continue;
    const Shape& s = body.type(n.inputs[0]).shape;
    if (!info.has_reduce) {
      info.has_reduce = true;
      info.iter_shape = s;
      info.reduce_axes = n.attr<ops::ReduceAttrs>().axes;
    } else if (s != info.iter_shape || n.attr<ops::ReduceAttrs>().axes != info.reduce_axes) {
      invalid("the reduces of a fused body must share their operand shape and axes");
    }
  }
  if (!info.has_reduce) info.iter_shape = body.type(body.outputs()[0]).shape;
  info.size = num_elements(info.iter_shape);

  std::vector<char> computed(size_t(body.num_values()), 0), reduced(size_t(body.num_values()), 0);
  for (const Node& n : body.nodes()) {
    const std::string what = std::string(op_kind_name(n.kind)) + " %" + std::to_string(n.first_result);
    if (n.kind == OpKind::parameter || n.kind == OpKind::constant) continue;
    if (n.kind == OpKind::fused) invalid("fused bodies cannot nest");
    if (is_anchor(n.kind)) {
      if (info.anchor >= 0 || info.has_reduce) invalid(what + " is a second anchor or follows reduces");
      for (ValueId v : n.inputs)
        if (body.node(body.defining_node(v)).kind != OpKind::parameter)
          invalid(what + " is an anchor reading a computed value");
      info.anchor = int(&n - body.nodes().data());
    } else if (!is_elementwise(n.kind) && n.kind != OpKind::reshape && n.kind != OpKind::reduce) {
      invalid(what + " cannot be part of a fused body");
    }
    for (ValueId v : n.inputs)
      if (reduced[size_t(v)]) invalid(what + " uses a reduce result inside the body");
    if (n.kind == OpKind::reduce) {
      reduced[size_t(n.first_result)] = 1;
      continue;
    }
    if (num_elements(body.type(n.first_result).shape) != info.size)
      invalid(what + " has " + std::to_string(num_elements(body.type(n.first_result).shape)) +
              " elements, not the " + std::to_string(info.size) + " of the iteration space");
    computed[size_t(n.first_result)] = 1;
  }
  for (ValueId v : body.outputs())
    if (!computed[size_t(v)] && !reduced[size_t(v)])
      invalid("output %" + std::to_string(v) + " of a fused body must be computed in it");
  return info;
}

Graph epilogue_body(const Graph& body, int anchor) {
  Graph out;
  std::vector<ValueId> map(size_t(body.num_values()), -1);
  const Node& a = body.node(anchor);
  for (const Node& n : body.nodes()) {
    if (n.kind != OpKind::parameter) continue;
    map[size_t(n.first_result)] = out.add_node(n, {body.type(n.first_result)});
  }
  const ValueType& t = body.type(a.first_result);
  map[size_t(a.first_result)] = out.add_node(
      ops::make_node(OpKind::parameter, ops::ParameterAttrs{0, t.shape, t.dtype}), {t});
  for (const Node& n : body.nodes()) {
    if (n.kind == OpKind::parameter || &n == &a) continue;
    Node c = n;
    for (ValueId& v : c.inputs) v = map[size_t(v)];
    std::vector<ValueType> types;
    for (int r = 0; r < n.num_results; ++r) types.push_back(body.type(n.first_result + r));
    const ValueId first = out.add_node(std::move(c), std::move(types));
    for (int r = 0; r < n.num_results; ++r) map[size_t(n.first_result + r)] = first + r;
  }
  std::vector<ValueId> outs;
  for (ValueId v : body.outputs())
    if (v != a.first_result) outs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outs));
  return out;
}

}  // namespace tinyxla
