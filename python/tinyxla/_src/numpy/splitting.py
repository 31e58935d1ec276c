"""Splitting arrays into pieces: split, array_split, hsplit, vsplit, dsplit, unstack.

Mirrors ``jax.numpy.split`` & co. (``lax_numpy._split``): the piece sizes must be concrete;
each piece is one ``lax.slice``, so the pieces are differentiable and batch under vmap.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, errors
from tinyxla._src.array import Array
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike

ArrayLike = Any


def _concrete_int(x: Any, context: str) -> int:
    if isinstance(x, core.Tracer):
        raise errors.ConcretizationTypeError(x, context)
    return int(x) if isinstance(x, (float, np.floating)) else operator.index(x)


def slice_along(a: Any, start: int, stop: int, axis: int) -> Any:
    """``a[..., start:stop, ...]`` along ``axis`` as one ``lax.slice``."""
    starts = [0] * a.ndim
    limits = list(a.shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, tuple(starts), tuple(limits))


def _split(op: str, ary: ArrayLike, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    ary = ensure_arraylike(op, ary)
    axis = _concrete_int(axis, f"in jax.numpy.{op} argument `axis`")
    size = ary.shape[axis]  # JAX's IndexError for an axis out of range
    axis = canonicalize_axis(axis, ary.ndim)
    if isinstance(indices_or_sections, (tuple, list)) or (
            isinstance(indices_or_sections, (np.ndarray, Array, core.Tracer))
            and np.ndim(indices_or_sections) > 0):
        bounds = [0] + [_concrete_int(i, f"in jax.numpy.{op} argument 1")
                        for i in indices_or_sections] + [size]
        sizes = list(np.diff(np.asarray(bounds, dtype=np.int64)))
        if any(s < 0 for s in sizes):
            raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    else:
        sections = _concrete_int(indices_or_sections, f"in jax.numpy.{op} argument 1")
        part, rest = divmod(size, sections)
        if rest and op != "array_split":
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
        sizes = [part + 1] * rest + [part] * (sections - rest)
    offsets = np.cumsum([0] + [int(s) for s in sizes])
    return [slice_along(ary, int(s), int(e), axis) for s, e in zip(offsets[:-1], offsets[1:])]


def split(ary: ArrayLike, indices_or_sections: int | Sequence[int] | ArrayLike,
          axis: int = 0) -> list[Any]:
    """Mirrors ``jax.numpy.split``: equal sections, or pieces between the given indices."""
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary: ArrayLike, indices_or_sections: int | Sequence[int] | ArrayLike,
                axis: int = 0) -> list[Any]:
    """Mirrors ``jax.numpy.array_split``: like split, the first pieces one longer if uneven."""
    return _split("array_split", ary, indices_or_sections, axis)


def vsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int] | ArrayLike) -> list[Any]:
    """Mirrors ``jax.numpy.vsplit``: split along axis 0."""
    return _split("vsplit", ary, indices_or_sections, 0)


def hsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int] | ArrayLike) -> list[Any]:
    """Mirrors ``jax.numpy.hsplit``: split along axis 1 (axis 0 of a 1-d array)."""
    a = ensure_arraylike("hsplit", ary)
    return _split("hsplit", a, indices_or_sections, 0 if a.ndim == 1 else 1)


def dsplit(ary: ArrayLike, indices_or_sections: int | Sequence[int] | ArrayLike) -> list[Any]:
    """Mirrors ``jax.numpy.dsplit``: split along axis 2."""
    return _split("dsplit", ary, indices_or_sections, 2)


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.unstack``: the subarrays along ``axis``, that axis removed."""
    x = ensure_arraylike("unstack", x)
    axis = canonicalize_axis(axis, x.ndim)
    return tuple(lax.squeeze(slice_along(x, i, i + 1, axis), (axis,))
                 for i in range(x.shape[axis]))
