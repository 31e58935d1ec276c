// The shape of a fused region's body: which ops it may hold and the iteration space they
// share. Used by the verifier, the fusion pass and the tiled interpreter.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla {

// Ops that compute element i of their result from element i of their operands.
bool is_elementwise(OpKind kind);

// Ops whose kernel can run an elementwise epilogue on its result part by part as it
// writes it (see OpDef::run_with_epilogue): a fused body may start with one.
bool is_anchor(OpKind kind);

struct FusedBodyInfo {
  int64_t size = 0;      // elements in the iteration space
  Shape iter_shape;      // the reduce operand's shape, or the first output's
  bool has_reduce = false;
  std::vector<int64_t> reduce_axes;  // shared by every reduce of the body
  int anchor = -1;       // the index of the body's anchor node, or -1
};

// A body holds parameters, constants, elementwise ops and reshapes over one iteration
// space of `size` elements, and reduces of one operand shape and axes whose results are
// outputs only. Parameters and constants may have any shape their consumers broadcast
// (one of `size` elements is read in its own row-major order, as a reshape reads it).
// Instead of reduces, a body may hold one anchor: an is_anchor op reading parameters only,
// whose result is in the iteration space (the elementwise ops are then its epilogue); that
// result may also be an output, not the first.
// Throws an InvalidArgument Error otherwise.
FusedBodyInfo check_fused_body(const Graph& body);

// The epilogue of a body with an anchor: the body with the anchor's result read from a
// new last parameter instead (the anchor's operands stay parameters, unread), without the
// outputs that are that result.
Graph epilogue_body(const Graph& body, int anchor);

}  // namespace tinyxla
