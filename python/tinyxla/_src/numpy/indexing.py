"""Basic indexing ``x[idx]``: integers, slices (any step), None, Ellipsis and scalar booleans.

Mirrors the basic-indexing part of ``jax._src.numpy.indexing``: out-of-bounds integers
are clamped, as JAX's gather does (``jnp.arange(10)[11]`` is 9), and a traced integer
index becomes a ``dynamic_slice``. The result is one ``slice``, then ``rev`` for negative
steps, then one ``reshape`` for removed and inserted axes. Integer-array and boolean-mask
indexing are not implemented yet (NotImplementedError).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.array import Array
from tinyxla._src.lax import lax, slicing

_NEWAXIS = "newaxis"
_ELLIPSIS = "ellipsis"
_INT = "int"
_SLICE = "slice"
_DYNAMIC = "dynamic"  # a traced integer scalar


def _classify(e: Any) -> tuple[str, Any]:
    """(kind, value) of one index element, with JAX's errors for unsupported ones."""
    if e is None:
        return _NEWAXIS, None
    if e is Ellipsis:
        return _ELLIPSIS, None
    t = type(e)
    if t is int:
        return _INT, e
    if t is slice:
        return _SLICE, e
    if t is bool or t is np.bool_:
        return _NEWAXIS, bool(e)  # a scalar mask: a new axis of length 1 (True) or 0
    if isinstance(e, np.integer):
        return _INT, int(e)
    if isinstance(e, str):
        raise TypeError(f"JAX does not support string indexing; got idx={e!r}")
    if isinstance(e, (list, tuple)):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See "
            "https://github.com/jax-ml/jax/issues/4564 for more information.")
    dt = getattr(e, "dtype", None)
    if dt is None:
        dt = np.asarray(e).dtype
    dt = np.dtype(dt)
    if dt.kind not in "iub":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
    if np.ndim(e) == 0 and dt.kind != "b":
        if isinstance(e, core.Tracer):
            return _DYNAMIC, e
        return _INT, operator.index(e)
    raise NotImplementedError(
        "tinyxla does not support integer-array or boolean-mask indexing yet; got an "
        f"indexer of shape {np.shape(e)} and dtype {dt}")


def _expand(idx: tuple[Any, ...], ndim: int) -> list[tuple[str, Any]]:
    """The classified index with its Ellipsis replaced by full slices (or appended)."""
    entries = [_classify(e) for e in idx]
    n_ellipsis = sum(k == _ELLIPSIS for k, _ in entries)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(k in (_INT, _SLICE, _DYNAMIC) for k, _ in entries)
    if n_real > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {n_real} were "
                         "indexed")
    fill = [(_SLICE, slice(None))] * (ndim - n_real)
    if n_ellipsis:
        i = next(i for i, (k, _) in enumerate(entries) if k == _ELLIPSIS)
        return entries[:i] + fill + entries[i + 1:]
    return entries + fill


def getitem(arr: Any, idx: Any) -> Any:
    """``arr[idx]`` for basic indices (what ``Array.__getitem__`` calls)."""
    if type(idx) is int and type(arr) is Array:
        return _int_index(arr, idx)
    entries = _expand(idx if type(idx) is tuple else (idx,), arr.ndim)
    shape = arr.shape
    start, limit, strides = [], [], []
    reversed_dims, dynamic = [], []
    out_shape: list[int] = []
    dim = 0
    for kind, v in entries:
        if kind == _NEWAXIS:
            out_shape.append(1 if v is not False else 0)
            continue
        n = shape[dim]
        if kind == _INT:
            if n == 0:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
            i = v + n if v < 0 else v
            i = 0 if i < 0 else n - 1 if i >= n else i  # clamp, as JAX's gather
            start.append(i), limit.append(i + 1), strides.append(1)
        elif kind == _DYNAMIC:
            start.append(0), limit.append(n), strides.append(1)
            dynamic.append((dim, v))
        else:
            s = slice(*(None if b is None else operator.index(b) for b in (v.start, v.stop, v.step)))
            lo, hi, step = s.indices(n)
            count = len(range(lo, hi, step))
            if count == 0:
                start.append(0), limit.append(0), strides.append(1)
            elif step > 0:
                start.append(lo), limit.append(lo + (count - 1) * step + 1), strides.append(step)
            else:
                first = lo + (count - 1) * step  # the smallest index taken
                start.append(first), limit.append(lo + 1), strides.append(-step)
                reversed_dims.append(dim)
            out_shape.append(count)
        dim += 1
    out = arr
    if start != [0] * len(start) or limit != list(shape) or any(s != 1 for s in strides):
        out = lax.slice(out, tuple(start), tuple(limit),
                        None if all(s == 1 for s in strides) else tuple(strides))
    if reversed_dims:
        out = lax.rev(out, tuple(reversed_dims))
    if dynamic:
        out = _dynamic_index(out, dynamic)
    # A False mask is a new axis of length 0: reshape with length 1, then slice it empty.
    empty = [i for i, (k, v) in enumerate(e for e in entries if e[0] != _INT and e[0] != _DYNAMIC)
             if k == _NEWAXIS and v is False]
    shape1 = tuple(1 if i in empty else d for i, d in enumerate(out_shape))
    if out.shape != shape1:
        out = lax.reshape(out, shape1)
    if empty:
        out = lax.slice(out, (0,) * len(shape1), tuple(out_shape))
    return out


def _int_index(arr: Array, i: int) -> Any:
    """The fast path for ``x[i]`` with a Python int."""
    shape = arr.shape
    if not shape:
        raise IndexError("Too many indices: array is 0-dimensional, but 1 were indexed")
    n = shape[0]
    if n == 0:
        raise IndexError("index is out of bounds for axis 0 with size 0")
    if i < 0:
        i += n
    i = 0 if i < 0 else n - 1 if i >= n else i
    rest = shape[1:]
    return lax.reshape(lax.slice(arr, (i,) + (0,) * len(rest), (i + 1,) + rest), rest)


def _dynamic_index(arr: Any, dynamic: list[tuple[int, Any]]) -> Any:
    """One dynamic_slice of size 1 along each traced-index axis (it wraps negative indices
    and clamps, as JAX's gather does)."""
    starts: list[Any] = [0] * arr.ndim
    sizes = list(arr.shape)
    for dim, i in dynamic:
        starts[dim] = lax.convert_element_type(i, dtypes.int32)
        sizes[dim] = 1
    return slicing.dynamic_slice(arr, starts, sizes)
