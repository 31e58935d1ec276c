"""Public pytree utilities (``jax.tree_util``)."""
from tinyxla._src.tree_util import (  # noqa: F401
    Partial, PyTreeDef, all_leaves, register_dataclass, register_pytree_node,
    register_pytree_node_class, tree_all, tree_flatten, tree_leaves, tree_map, tree_reduce,
    tree_structure, tree_unflatten, treedef_is_leaf)
