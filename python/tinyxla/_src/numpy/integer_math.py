"""Integer arithmetic: gcd, lcm and bitwise_count.

Mirrors ``jax.numpy.gcd`` / ``lcm`` / ``bitwise_count``. JAX's gcd is a ``while_loop``
of Euclid's steps; tinyxla has no loop primitive, so on concrete values the steps run
until every pair is done, and under a trace they are unrolled to the bound that covers
every pair of the dtype (Euclid needs at most about 1.44 * bits steps).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import ufuncs
from tinyxla._src.numpy.promotion import (
    broadcast_arrays_of, ensure_arraylike, promote_args_numeric, promote_dtypes)

ArrayLike = Any


def _euclid_step(a: Any, b: Any) -> tuple[Any, Any]:
    """One step on pairs kept ordered a >= b >= 0: (a, b) -> (b, a mod b), reordered."""
    zero = lax.full_like(b, 0)
    nonzero = lax.ne(b, zero)
    a, b = (lax.select(nonzero, b, a),
            lax.select(nonzero, lax.rem(a, lax.select(nonzero, b, lax.full_like(b, 1))), zero))
    swap = lax.lt(a, b)
    return lax.select(swap, b, a), lax.select(swap, a, b)


def _max_steps(dt: np.dtype) -> int:
    return int(1.5 * dtypes.iinfo(dt).bits) + 2


def gcd(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.gcd``: the greatest common divisor (non-negative)."""
    x1, x2 = ensure_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = broadcast_arrays_of(x1, x2)
    a, b = ufuncs.abs(x1), ufuncs.abs(x2)
    concrete = not (isinstance(a, core.Tracer) or isinstance(b, core.Tracer))
    for _ in range(_max_steps(a.dtype)):
        if concrete and not bool(lax.reduce_or(lax.ne(b, lax.full_like(b, 0)),
                                               tuple(range(b.ndim)))):
            break
        a, b = _euclid_step(a, b)
    return a


def lcm(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.lcm``: the least common multiple (0 if either is 0)."""
    x1, x2 = ensure_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = ufuncs.abs(x1), ufuncs.abs(x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    safe = lax.select(lax.eq(d, lax.full_like(d, 0)), lax.full_like(d, 1), d)
    return lax.select(lax.eq(d, lax.full_like(d, 0)), lax.full_like(d, 0),
                      ufuncs.multiply(x1, ufuncs.floor_divide(x2, safe)))


def bitwise_count(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.bitwise_count``: the set bits of |x|, as uint8."""
    x, = promote_args_numeric("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(ufuncs.abs(x)), np.uint8)
