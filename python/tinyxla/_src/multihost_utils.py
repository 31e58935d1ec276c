"""Host-level collectives between processes (``jax.experimental.multihost_utils``):
``sync_global_devices``, ``process_allgather``, ``broadcast_one_to_all`` and
``assert_equal``, as MPI calls on numpy buffers (``distributed.py``). With one process
they are the identity (plus the stacking axis of ``process_allgather``), as in JAX.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from tinyxla._src import distributed
from tinyxla._src.tree_util import tree_map


def _multi() -> bool:
    return distributed.state.num_processes > 1


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's values (or the one that passes ``is_source=True``) on every process,
    as numpy arrays (``jax.experimental.multihost_utils.broadcast_one_to_all``)."""
    if not _multi():
        return tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = distributed.state.process_id == 0
    # Like JAX (a psum of the source's value and zeros), any process may be the source.
    flags = distributed.allgather(np.array([bool(is_source)]))[:, 0]
    sources = np.flatnonzero(flags)
    if len(sources) != 1:
        raise ValueError(f"broadcast_one_to_all needs exactly one source process, got "
                         f"{sources.tolist()}")
    root = int(sources[0])
    return tree_map(lambda x: distributed.broadcast(np.asarray(x), root), in_tree)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's values stacked along a new axis 0, or concatenated along axis 0
    with ``tiled`` (``jax.experimental.multihost_utils.process_allgather``)."""
    def gather(x: Any) -> np.ndarray:
        x = np.asarray(x)
        if not _multi():
            return x if tiled else x[None]
        out = distributed.allgather(x)
        if tiled and x.ndim:
            return out.reshape(-1, *x.shape[1:])
        return out
    return tree_map(gather, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raises AssertionError unless every process holds the same values
    (``jax.experimental.multihost_utils.assert_equal``)."""
    def check(x: Any) -> None:
        gathered = process_allgather(x)
        if not all(np.array_equal(g, gathered[0]) for g in gathered):
            raise AssertionError(f"{fail_message} Expected: {gathered[0]}; got: {gathered}.")
    tree_map(check, in_tree)


def sync_global_devices(name: str) -> None:
    """A barrier of all processes; every process must pass the same ``name``
    (``jax.experimental.multihost_utils.sync_global_devices``)."""
    h = np.uint32(zlib.crc32(name.encode()))
    assert_equal(h, f"sync_global_devices name mismatch ('{name}')")
