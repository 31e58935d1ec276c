"""Loops whose trip count depends on the data, driven from the host (poisson and binomial
sampling, until they are written as ``lax.while_loop``s as gamma is): each trip runs a
compiled ``step`` (several masked iterations of the loop body over every lane) and the host
reads one flag array to decide whether to go on.

The primitives built on it (the rejection samplers in ``random_rejection``) have no
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
