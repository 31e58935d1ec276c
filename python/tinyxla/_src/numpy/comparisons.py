"""Whole-array comparisons with tolerances: isclose, allclose, array_equal, array_equiv.

Mirrors the functions of the same names in ``jax._src.numpy.lax_numpy``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, ufuncs
from tinyxla._src.numpy.creation import array, asarray

ArrayLike = Any


def isclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
            equal_nan: bool = False) -> Any:
    """Mirrors ``jax.numpy.isclose``: |a - b| <= atol + rtol * |b|, elementwise."""
    a, b = promotion.promote_args("isclose", a, b)
    a, b = promotion.promote_args_inexact("isclose", a, b)
    dt = dtypes.to_floating_dtype(a.dtype)
    rtol = lax.convert_element_type(promotion.ensure_array(rtol), dt)
    atol = lax.convert_element_type(promotion.ensure_array(atol), dt)
    both_nan = lax.bitwise_and(ufuncs.isnan(a), ufuncs.isnan(b))
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(ufuncs.isfinite(b), in_range))
    return lax.bitwise_or(out, both_nan) if equal_nan else out


def allclose(a: ArrayLike, b: ArrayLike, rtol: ArrayLike = 1e-05, atol: ArrayLike = 1e-08,
             equal_nan: bool = False) -> Any:
    """Mirrors ``jax.numpy.allclose``: all(isclose(...))."""
    promotion.check_arraylike("allclose", a, b)
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: ArrayLike, a2: ArrayLike, equal_nan: bool = False) -> Any:
    """Mirrors ``jax.numpy.array_equal``: same shape and equal elements (lists accepted)."""
    a1, a2 = asarray(a1), asarray(a2)
    if np.shape(a1) != np.shape(a2):
        return array(False, dtype=bool)
    eq = ufuncs.equal(a1, a2)
    if equal_nan:
        eq = lax.bitwise_or(eq, lax.bitwise_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
    return reductions.all(eq)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.array_equiv``: shapes broadcast and all elements are equal."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        promotion.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return array(False)
    return reductions.all(ufuncs.equal(a1, a2))
