// Runs one graph node on ready arrays, synchronously on the calling thread: the executor's
// per-node step and the constant folder's evaluator.
#pragma once
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla::runtime {

// Layout nodes whose result is a view of their operand's buffer.
bool is_view(OpKind kind);
// The view that layout node `n` makes of `x`; a reshape or bitcast of a non-dense operand
// first copies it into a fresh dense buffer.
Array make_view(const Node& n, const ValueType& type, const Array& x);
// Runs kernel node `n` (neither a view, a parameter, a constant nor fused) into `outs`,
// dense arrays of its result types.
void run_kernel(const Node& n, const std::vector<Array>& ins, const std::vector<Array>& outs);
// A dense, ready copy of `x` in a fresh buffer.
Array dense_copy(const Array& x);

}  // namespace tinyxla::runtime
