// The Python side of host callbacks (host_callback_bindings.cc): the table of Python
// callables that host_callback nodes name by id, and the handler that calls them.
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds HostCallable to `m` and installs the host-call handler.
void bind_host_callbacks(pybind11::module_& m);

}  // namespace tinyxla
