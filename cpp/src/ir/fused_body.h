// The shape of a fused region's body: which ops it may hold and the iteration space they
// share. Used by the verifier, the fusion pass and the tiled interpreter.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla {

// Ops that compute element i of their result from element i of their operands.
bool is_elementwise(OpKind kind);

struct FusedBodyInfo {
  int64_t size = 0;      // elements in the iteration space
  Shape iter_shape;      // the reduce operand's shape, or the first output's
  bool has_reduce = false;
  std::vector<int64_t> reduce_axes;  // shared by every reduce of the body
};

// A body holds parameters, constants, elementwise ops and reshapes over one iteration
// space of `size` elements, and reduces of one operand shape and axes whose results are
// outputs only. Parameters and constants may have any shape their consumers broadcast
// (one of `size` elements is read in its own row-major order, as a reshape reads it).
// Throws an InvalidArgument Error otherwise.
FusedBodyInfo check_fused_body(const Graph& body);

}  // namespace tinyxla
