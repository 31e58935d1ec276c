"""A while loop over independent lanes that stops paying for finished lanes: the batched
loop JAX's rejection samplers run (``vmap`` of a ``while_loop``, or a loop over a whole
shape whose condition is "any lane pending"), compacted as the pending lanes thin out.

A batched ``while_loop`` runs its whole-width body every trip until the slowest lane
finishes, a finished lane keeping its state. ``lane_while`` gives the same lanes: it runs
full-width trips while more than half of the lanes are pending, then gathers the
pending lanes into an array half as wide, runs the rest of the loop there (recursively,
down to a plain batched loop below ``_MIN_WIDTH`` lanes) and scatters them back. All lanes
of one call are at the same trip, so state shared by every lane (a key split once per trip,
as in JAX's loops over a shape) is carried beside them and handed to the narrower loop.
The lanes must be independent: a lane's next state depends on its own state and the shared
state only. Shapes stay static, so this lowers into one compiled graph under ``jit``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.lax.control_flow import cond as lax_cond, while_loop
from tinyxla import numpy as jnp

Lanes = tuple[Any, ...]
Shared = Any

# Compact when at most 1/_SHRINK of the lanes are pending; loop plainly below _MIN_WIDTH.
_SHRINK = 2
_MIN_WIDTH = 4096


def _select_lanes(pending: Any, new: Any, old: Any) -> Any:
    if new is old:  # a lane constant the body passed through
        return old
    mask = lax.broadcast_in_dim(pending, new.shape, (0,)) if new.ndim > 1 else pending
    return lax.select(mask, new, old)


def _count(pending: Any) -> Any:
    return lax.reduce_sum(lax.convert_element_type(pending, np.int32), (0,))


def lane_while(cond: Callable[[Shared, Lanes], Any], body: Callable[[Shared, Lanes], Lanes],
               lanes: Lanes, shared: Shared = (),
               step: Callable[[Shared], Shared] = lambda s: s) -> Lanes:
    """The lanes (arrays with a leading lane axis) after a batched while loop: while
    ``cond(shared, lanes)`` (bool per lane) has a True lane, pending lanes take
    ``body(shared, lanes)``'s values, finished lanes keep theirs, and ``shared`` becomes
    ``step(shared)``."""
    lanes = tuple(lanes)
    n = lanes[0].shape[0]
    width = n // _SHRINK

    def trip(carry: tuple) -> tuple:
        shared, lanes, pending = carry
        new = body(shared, lanes)
        lanes = tuple(_select_lanes(pending, a, b) for a, b in zip(new, lanes))
        shared = step(shared)
        return shared, lanes, cond(shared, lanes)

    carry = (shared, lanes, cond(shared, lanes))
    if width < _MIN_WIDTH:
        return while_loop(lambda c: lax.gt(_count(c[2]), np.int32(0)), trip, carry)[1]
    shared, lanes, pending = while_loop(lambda c: lax.gt(_count(c[2]), np.int32(width)), trip,
                                        carry)

    def narrower(lanes: Lanes) -> Lanes:
        # The pending lanes first; the padding slots (index n) read a finished lane, so
        # that they are finished too, and write nothing back.
        (slots,) = jnp.nonzero(pending, size=width, fill_value=n)
        finished = jnp.argmin(lax.convert_element_type(pending, np.int32))
        reads = jnp.where(lax.lt(slots, np.int32(n)), slots, finished)
        narrow = tuple(jnp.take(x, reads, axis=0, mode="clip") for x in lanes)
        narrow = lane_while(cond, body, narrow, shared, step)
        return tuple(x.at[slots].set(v, mode="drop") for x, v in zip(lanes, narrow))

    return lax_cond(lax.gt(_count(pending), np.int32(0)), narrower, lambda lanes: lanes, lanes)
