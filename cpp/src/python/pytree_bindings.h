// Declares the pytree part of the _core binding (pytree_bindings.cc).
#pragma once
#include <pybind11/pybind11.h>

namespace tinyxla {

// Adds set_pytree_registry, set_pytree_array_type, jit_signature, jit_flatten, tree_leaves, wait_tree and TreeBuilder to `m`.
void bind_pytree(pybind11::module_& m);

}  // namespace tinyxla
