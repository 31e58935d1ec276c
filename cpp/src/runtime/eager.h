// Eager ops: an op runs as a one-node graph. Its definition (ops::op_def) validates the
// operands and infers the results, which return at once; its view is made at once, or its
// kernel runs asynchronously on the operands' device through the same OpDef::run that
// jit's node runner calls, so eager and jit cannot disagree.
#pragma once
#include <any>
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla::runtime {

// Runs op `kind` with attributes `attrs` (its kind's record) on `ins`. `device` is where
// an op without operands (iota) runs; otherwise the operands' common device.
std::vector<Array> run_op(OpKind kind, const std::any& attrs, const std::vector<Array>& ins,
                          int device = 0);

}  // namespace tinyxla::runtime
