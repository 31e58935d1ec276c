// Arrays seen from numpy without a copy (Array.numpy, and the operands of host callbacks).
#pragma once
#include <pybind11/numpy.h>

#include "tinyxla/array.h"

namespace tinyxla {

// A read-only numpy view of `a` as dtype `dt` (of a's item size) that keeps its buffer
// alive; waits for `a` with the GIL released when it is not ready.
pybind11::array to_numpy(const Array& a, pybind11::dtype dt);

}  // namespace tinyxla
