"""Loops whose trip count depends on the data, driven from the host until ``lax.while_loop``
exists: each trip runs a compiled ``step`` (several masked iterations of the loop body over
every lane) and the host reads one flag array to decide whether to go on.

The primitives built on it (the rejection samplers in ``random_distributions``) have no
lowering rule, so a ``jit`` holding one runs its jaxpr equation by equation (see
``interpreters.lowering``) and the loop still sees concrete values. The results are those
of a ``while_loop`` that masks finished lanes, as JAX's batched loops do: a finished lane's
state never changes, so running more iterations than a lane needs changes nothing.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src.numpy.creation import asarray

State = tuple[Any, ...]


def while_any(step: Callable[[State], State], state: State, pending: Callable[[State], Any],
              max_trips: int | None = None) -> State:
    """``state`` after running ``step`` until ``pending(state)`` has no True element (or
    ``max_trips`` trips)."""
    trips = 0
    while np.asarray(pending(state)).any() and (max_trips is None or trips < max_trips):
        state = step(state)
        trips += 1
    return state


def _bucket(n: int) -> int:
    """The lane count ``n`` rounded up to a power of two (at least 8), so that the compiled
    step is reused across calls with similar numbers of unfinished lanes."""
    return max(8, 1 << (n - 1).bit_length())


def compacting_while(step: Callable[[State], State], state: State, done_index: int) -> State:
    """Runs the lane-wise ``step`` on ``state`` (arrays whose leading axis is the lane) until
    every lane's ``state[done_index]`` is True. After the first trip, the trips run only on
    the unfinished lanes, gathered into a power-of-two bucket (padded with copies of
    its first lane, whose results are dropped) and scattered back."""
    state = step(state)
    while True:
        done = np.asarray(state[done_index])
        todo = np.flatnonzero(~done)
        if todo.size == 0:
            return state
        size = _bucket(todo.size)
        idx = np.concatenate([todo, np.full(size - todo.size, todo[0], todo.dtype)])
        idx_arr = asarray(idx.astype(np.int32))
        sub = step(tuple(x[idx_arr] for x in state))
        keep = asarray(todo.astype(np.int32))
        state = tuple(x.at[keep].set(s[:todo.size]) for x, s in zip(state, sub))
