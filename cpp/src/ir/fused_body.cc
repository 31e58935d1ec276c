// Validation of fused bodies (see fused_body.h).
#include "fused_body.h"

#include "../ops/reductions.h"

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
    if (!is_elementwise(n.kind) && n.kind != OpKind::reshape && n.kind != OpKind::reduce)
      invalid(what + " cannot be part of a fused body");
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

}  // namespace tinyxla
