// Declares the profiler part of the _core binding (profiler_bindings.cc).
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds profiler_start, profiler_stop, profiler_on, profiler_now and profiler_record to `m`.
void bind_profiler(pybind11::module_& m);

}  // namespace tinyxla
