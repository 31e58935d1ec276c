"""Rearranging elements: roll, rollaxis, rot90, fliplr, flipud, tile, repeat, resize.

Mirrors the functions of the same names in ``jax._src.numpy.lax_numpy``. Static shifts and
repeat counts become slices, concatenations and broadcasts; a traced shift is a
``dynamic_slice`` of the doubled array; traced repeat counts need ``total_repeat_length``
and become a scatter, a cumulative sum and a gather, as in JAX.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax, slicing
from tinyxla._src.numpy import cumulative, indexing, promotion, ufuncs
from tinyxla._src.numpy.creation import asarray, full, zeros, zeros_like
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.shape import flip, moveaxis, ravel, reshape, transpose
from tinyxla._src.numpy.splitting import slice_along

ArrayLike = Any


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


# ---------------------------------------------------------------------------------------
# Rolling and rotating


def _roll_static(a: Any, shift: Sequence[int], axis: Sequence[int]) -> Any:
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        n = a.shape[ax]
        if n == 0:
            continue
        i = int(-s) % n
        if i:
            a = lax.concatenate([slice_along(a, i, n, ax), slice_along(a, 0, i, ax)], int(ax))
    return a


def _roll_dynamic(a: Any, shift: Any, axis: Sequence[int]) -> Any:
    b_shape = promotion.broadcast_shapes(shift.shape, np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = promotion.broadcast_to_shape(shift, b_shape)
    for k, ax in enumerate(np.broadcast_to(axis, b_shape)):
        ax = int(ax)
        n = asarray(a.shape[ax], dtype=dtypes.int32)
        s = lax.reshape(lax.slice(shifts, (k,), (k + 1,)), ())
        s = ufuncs.remainder(lax.convert_element_type(s, dtypes.int32),
                             lax.max(n, asarray(1, dtype=dtypes.int32)))
        doubled = lax.concatenate([a, a], ax)
        a = slicing.dynamic_slice_in_dim(doubled, lax.sub(n, s), a.shape[ax], axis=ax)
    return a


def roll(a: ArrayLike, shift: ArrayLike | Sequence[int],
         axis: int | Sequence[int] | None = None) -> Any:
    """Mirrors ``jax.numpy.roll``: elements shifted cyclically along ``axis`` (all, flat,
    by default); a traced ``shift`` works."""
    arr = ensure_arraylike("roll", a)
    if axis is None:
        return reshape(roll(ravel(arr), shift, 0), arr.shape)
    axes = tuple(canonicalize_axis(ax, arr.ndim) for ax in _index_tuple(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, asarray(shift), axes)
    return _roll_static(arr, shifts, axes)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """Mirrors ``jax.numpy.rollaxis``: ``axis`` moved to before position ``start``."""
    a = ensure_arraylike("rollaxis", a)
    start = operator.index(start)
    nd = a.ndim
    axis = canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"{start=} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def rot90(m: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Mirrors ``jax.numpy.rot90``: k quarter turns from the first axis to the second."""
    m = ensure_arraylike("rot90", m)
    if m.ndim < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {m.shape}, which has ndim {m.ndim}")
    ax1, ax2 = (canonicalize_axis(ax, m.ndim) for ax in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


def fliplr(m: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.fliplr``: reverses axis 1."""
    return flip(ensure_arraylike("fliplr", m), 1)


def flipud(m: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.flipud``: reverses axis 0."""
    return flip(ensure_arraylike("flipud", m), 0)


# ---------------------------------------------------------------------------------------
# Tiling and repeating


def _tile_dims(a: Any, reps: tuple[int, ...]) -> Any:
    """``a`` (of rank len(reps)) repeated reps[i] times along each axis i."""
    interleaved = tuple(x for r, d in zip(reps, a.shape) for x in (r, d))
    b = lax.broadcast_in_dim(a, interleaved, tuple(range(1, 2 * a.ndim, 2)))
    return lax.reshape(b, tuple(r * d for r, d in zip(reps, a.shape)))


def tile(A: ArrayLike, reps: int | Sequence[int]) -> Any:
    """Mirrors ``jax.numpy.tile``: ``A`` repeated ``reps`` times along each axis."""
    A = ensure_arraylike("tile", A)
    reps_tup = _index_tuple(reps)
    reps_tup = (1,) * (A.ndim - len(reps_tup)) + reps_tup
    if len(reps_tup) > A.ndim:
        A = lax.reshape(A, (1,) * (len(reps_tup) - A.ndim) + A.shape)
    return _tile_dims(A, reps_tup)


def tile_to_size(arr: Any, size: int) -> Any:
    """A 1-d array repeated cyclically, or cut, to ``size`` elements (JAX's ``_tile_to_size``)."""
    if arr.shape[0] < size:
        arr = _tile_dims(arr, (-(-size // arr.shape[0]),))
    return lax.slice(arr, (0,), (size,)) if arr.shape[0] > size else arr


_REPEAT_STATIC_MSG = (
    "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix this, "
    "either specify a static value for `repeats`, or pass a static value to "
    "`total_repeat_length`.")


def repeat(a: ArrayLike, repeats: ArrayLike, axis: int | None = None, *,
           total_repeat_length: int | None = None, out_sharding: Any = None) -> Any:
    """Mirrors ``jax.numpy.repeat``: each element repeated ``repeats`` times along ``axis``
    (flattened by default). Traced ``repeats`` need a static ``total_repeat_length``,
    which pads with the last element or truncates, as in JAX."""
    if type(repeats) is int or isinstance(repeats, np.integer):
        promotion.check_arraylike("repeat", a)
    else:
        promotion.check_arraylike("repeat", a, repeats)
    arr = promotion.ensure_array(a)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    axis = operator.index(axis)
    if total_repeat_length is None:
        if isinstance(repeats, core.Tracer):
            raise errors.ConcretizationTypeError(repeats, _REPEAT_STATIC_MSG)
        if np.ndim(repeats) == 0 and arr.ndim != 0:
            axis = canonicalize_axis(axis, arr.ndim)
            count = operator.index(np.asarray(repeats).item())
            shape = list(arr.shape)
            shape.insert(axis + 1, count)
            b = lax.broadcast_in_dim(arr, tuple(shape),
                                     tuple(i for i in range(len(shape)) if i != axis + 1))
            out = list(arr.shape)
            out[axis] *= count
            return lax.reshape(b, tuple(out))
        reps_np = np.ravel(np.asarray(repeats))
        if arr.ndim != 0:
            reps_np = np.broadcast_to(reps_np, [arr.shape[axis]])
        total_repeat_length = int(np.sum(reps_np))
        reps = asarray(reps_np)
    else:
        reps = ravel(asarray(repeats))
        if arr.ndim != 0:
            reps = promotion.broadcast_to_shape(reps, (arr.shape[axis],))
    if arr.ndim == 0:
        if reps.shape == (1,):
            return full((total_repeat_length,), arr)
        raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                         "scalar values of the parameter `repeats`.")
    axis = canonicalize_axis(axis, arr.ndim)
    if total_repeat_length == 0:
        shape = list(arr.shape)
        shape[axis] = 0
        return zeros(tuple(shape), dtype=arr.dtype)
    if arr.shape[axis] == 0:
        return arr
    # Block starts: [1, 2, 0, 5] -> exclusive cumsum [0, 1, 3, 3]; a 1 scattered at each
    # start and summed again gives each output position its source index.
    exclusive = lax.pad(slice_along(reps, 0, reps.shape[0] - 1, 0),
                        lax.full((), 0, reps.dtype), ((1, 0, 0),))
    starts = cumulative.cumsum(exclusive)
    marks = zeros((total_repeat_length,), dtype=dtypes.int32).at[starts].add(1)
    gather = lax.sub(cumulative.cumsum(marks), asarray(1, dtype=dtypes.int32))
    return indexing.take(arr, gather, axis=axis)


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """Mirrors ``jax.numpy.resize``: the flattened input repeated cyclically into
    ``new_shape`` (zeros if either is empty)."""
    promotion.check_arraylike("resize", a)
    new_shape = _index_tuple(new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if arr.size == 0 or new_size == 0:
        return zeros_like(arr, shape=new_shape)
    return reshape(tile_to_size(arr, new_size), new_shape)
