// Declares the jax.stages / jax.export part of the _core binding (stages_bindings.cc).
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds memory_analysis, graph_description, inline_graph, serialize_exported,
// deserialize_exported and EXPORT_VERSION to `m`.
void bind_stages(pybind11::module_& m);

}  // namespace tinyxla
