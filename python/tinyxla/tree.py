"""The ``jax.tree`` namespace: short names for the pytree utilities."""
from __future__ import annotations

import dataclasses
from typing import Any

from tinyxla._src.tree_util import (  # noqa: F401
    tree_all as all, tree_broadcast as broadcast, tree_flatten as flatten,
    tree_flatten_with_path as flatten_with_path, tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path, tree_map as map,
    tree_map_with_path as map_with_path, tree_reduce as reduce,
    tree_reduce_associative as reduce_associative, tree_structure as structure,
    tree_transpose as transpose, tree_unflatten as unflatten)


def static(**kwargs: Any) -> Any:
    """``dataclasses.field`` marked static for ``register_dataclass`` (``jax.tree.static``)."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
