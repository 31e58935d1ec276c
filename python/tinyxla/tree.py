"""The ``jax.tree`` namespace: short names for the pytree utilities."""
from tinyxla._src.tree_util import (  # noqa: F401
    tree_all as all, tree_flatten as flatten, tree_leaves as leaves, tree_map as map,
    tree_reduce as reduce, tree_structure as structure, tree_unflatten as unflatten)
