// The generic op binding of _core (op_bindings.cc): any registered op, eagerly or into a
// graph builder, with its attributes marshalled from a dict by the op's definition.
#pragma once
#include <pybind11/pybind11.h>

#include "tinyxla/ops.h"

namespace tinyxla {

// A Python number (or numpy scalar) as a Scalar; false for anything else.
bool to_scalar(pybind11::handle h, Scalar* s);
// An operand: an Array, or a number made into a 0-d array of `dtype` on `device`.
Array operand(pybind11::handle h, DType dtype, int device);

// Adds make_op, the Op handle, op_kinds and GraphBuilder.op to `m` (after bind_graph).
void bind_ops(pybind11::module_& m);

}  // namespace tinyxla
