// Declares the graph/jit part of the _core binding (graph_bindings.cc).
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds GraphBuilder, Graph, parse_graph, compile and Executable to `m`.
void bind_graph(pybind11::module_& m);

}  // namespace tinyxla
