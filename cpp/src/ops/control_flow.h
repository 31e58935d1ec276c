// Attribute records of the control-flow region ops (their definitions: control_flow.cc).
#pragma once
#include <cstdint>

#include "op_def.h"

namespace tinyxla::ops {

// while_loop(pred, consts..., carry...) { body }: while pred, (carry..., pred) =
// body(consts..., carry...). The node's body graph (Node::body) takes the consts and the
// carry and returns the next carry and the predicate on it; the results are the final carry.
struct WhileLoopAttrs {
  int64_t num_consts = 0;
  template <class V> void visit(V& v) { v("num_consts", num_consts); }
};

// The body's check against the operands (the node's types are the carry's): throws the
// op's Error when the body's parameters or outputs do not match.
void check_while_body(const Graph& body, const std::vector<ValueType>& operands, int64_t num_consts);

}  // namespace tinyxla::ops
