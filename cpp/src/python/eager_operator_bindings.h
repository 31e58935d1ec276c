// The eager + - * of Python Arrays as C methods (eager_operator_bindings.cc): the cases whose
// result keeps the Array's dtype run the binary op and build the result Array here; every
// other case calls the general operator.
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds setup_eager_operators and eager_operator to `m`.
void bind_eager_operators(pybind11::module_& m);

}  // namespace tinyxla
