"""Index construction: meshgrid, mgrid, ogrid, r_, c_, s_, index_exp, indices, ix_,
ravel_multi_index, unravel_index.

Mirrors ``jax._src.numpy.index_tricks`` and the index helpers of ``lax_numpy``: grids
are broadcast iotas, ``r_``/``c_`` concatenate with numpy's directive strings, and the
ravel/unravel arithmetic is elementwise, so traced indices work (except
``ravel_multi_index(mode='raise')``, which must check concrete values, as in JAX).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, selection, ufuncs
from tinyxla._src.numpy.creation import arange, array, asarray, linspace
from tinyxla._src.numpy.promotion import ensure_arraylike
from tinyxla._src.numpy.shape import concatenate, expand_dims, stack, transpose

ArrayLike = Any


def meshgrid(*xi: ArrayLike, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Mirrors ``jax.numpy.meshgrid``: coordinate grids from 1-d arrays (``copy`` must be
    True, as in JAX)."""
    promotion.check_arraylike("meshgrid", *xi)
    args = [promotion.ensure_array(a) for a in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(a.ndim != 1 for a in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[a.shape for a in args]}")
    swap = indexing == "xy" and len(args) >= 2
    if swap:
        args[0], args[1] = args[1], args[0]
    shape = [1 if sparse else a.shape[0] for a in args]
    output = [lax.broadcast_in_dim(a, tuple(shape[:i] + [a.shape[0]] + shape[i + 1:])
                                   if sparse else tuple(shape), (i,))
              for i, a in enumerate(args)]
    if swap:
        output[0], output[1] = output[1], output[0]
    return output


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """Mirrors ``jax.numpy.indices``: the index grid of ``dimensions`` (stacked, or a tuple
    of broadcastable arrays if ``sparse``)."""
    dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "indices")
    dims = tuple(operator.index(d) for d in dimensions)
    n = len(dims)
    output = []
    for i, dim in enumerate(dims):
        shape = (1,) * i + (dim,) + (1,) * (n - i - 1) if sparse else dims
        output.append(lax.broadcast_in_dim(lax.broadcasted_iota(dtype, (dim,), 0), shape, (i,)))
    if sparse:
        return tuple(output)
    return stack(output, 0) if output else array([], dtype=dtype)


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.ix_``: an open mesh from 1-d integer arrays (booleans are not
    supported, as in JAX)."""
    promotion.check_arraylike("ix", *args)
    arrays = [promotion.ensure_array(a) for a in args]
    n = len(arrays)
    output = []
    for i, a in enumerate(arrays):
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == dtypes.bool_dtype:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        if a.size == 0:
            output.append(lax.full(tuple(shape), 0, dtypes.default_int_dtype()))
        else:
            output.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(output)


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int],
                      mode: str = "raise", order: str = "C", *, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.ravel_multi_index``: flat indices of coordinate arrays.

    ``mode='raise'`` checks the values, so it needs concrete input; 'wrap', 'clip' and
    'ignore' work under jit."""
    assert len(multi_index) == len(dims), \
        f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}"
    dims = tuple(operator.index(d) for d in dims)
    promotion.check_arraylike("ravel_multi_index", *multi_index)
    index_arrs = [promotion.ensure_array(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *index_arrs)
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "ravel_multi_index")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"{dtype=} is not an integer type.")
    if math.prod(dims) - 1 > dtypes.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: {dtype=} not large enough to hold flattened index for "
            f"{dims=}. Use the dtype argument to pass a suitable dtype (e.g. "
            "dtype=np.min_scalar_type(prod(dims))).")
    for index in index_arrs:
        if mode == "raise" and isinstance(index, core.Tracer):
            raise errors.ConcretizationTypeError(
                index, "The error occurred because ravel_multi_index was jit-compiled with "
                       "mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if not dtypes.issubdtype(index.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(bool(reductions.any((i < 0) | (i >= d))) for i, d in zip(index_arrs, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        index_arrs = [ufuncs.clip(i, 0, d - 1) for i, d in zip(index_arrs, dims)]
    elif mode == "wrap":
        index_arrs = [ufuncs.remainder(i, d) for i, d in zip(index_arrs, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = asarray(0, dtype=dtype)
    for i, s in zip(index_arrs, strides):
        result = result + i.astype(dtype) * int(s)
    return result


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.unravel_index``: coordinates of flat indices; out-of-bounds
    indices clamp to the first or last element, as in JAX (numpy raises)."""
    idx = ensure_arraylike("unravel_index", indices)
    try:
        sizes = list(shape)
    except TypeError:
        sizes = [shape]
    if any(np.ndim(s) != 0 for s in sizes):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out: list[Any] = [0] * len(sizes)
    for i, s in reversed(list(enumerate(sizes))):
        idx, out[i] = ufuncs.divmod(idx, s)
    oob_pos = idx > 0
    oob_neg = asarray(False) if dtypes.issubdtype(idx.dtype, np.unsignedinteger) else idx < -1
    return tuple(selection.where(oob_pos, s - 1, selection.where(oob_neg, 0, i))
                 for s, i in zip(sizes, out))


# ---------------------------------------------------------------------------------------
# mgrid, ogrid, r_, c_, s_, index_exp


def _grid_from_slice(s: slice, op_name: str) -> Any:
    for v, part in ((s.start, "start"), (s.stop, "stop"), (s.step, "step")):
        if isinstance(v, core.Tracer):
            raise errors.ConcretizationTypeError(v, f"slice {part} of jnp.{op_name}")
    start = s.start or 0
    step = s.step or 1
    if np.iscomplex(step):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _Mgrid:
    """``jnp.mgrid[...]``: a dense mesh grid from slices (a complex step is a count)."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        output = promotion.promote_dtypes(*(_grid_from_slice(k, "mgrid") for k in key))
        grids = meshgrid(*output, indexing="ij", sparse=False)
        return stack(grids, 0) if grids else arange(0)


class _Ogrid:
    """``jnp.ogrid[...]``: an open (sparse) mesh grid from slices."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        output = promotion.promote_dtypes(*(_grid_from_slice(k, "ogrid") for k in key))
        return meshgrid(*output, indexing="ij", sparse=True)


class _AxisConcat:
    """numpy's ``r_``/``c_``: concatenation along an axis, with directive strings
    ('axis,ndmin,trans1d', 'r', 'c') and slices as ranges."""

    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        key_tup = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = key_tup[0]
        if isinstance(directive, str):
            key_tup = key_tup[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in key_tup:
            if isinstance(item, slice):
                newobj = _grid_from_slice(item, self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = array(item)
                item_ndim = newobj.ndim
            newobj = array(newobj, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                newobj = transpose(newobj, order[shifts:] + order[:shifts])
            output.append(newobj)
        res = concatenate(tuple(output), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """``jnp.r_``: concatenation along the first axis."""
    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"


class CClass(_AxisConcat):
    """``jnp.c_``: concatenation along the last axis of at-least-2-d items (columns)."""
    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = RClass()
c_ = CClass()
# s_ and index_exp build index tuples: numpy's own objects, as JAX re-exports them.
s_ = np.s_
index_exp = np.index_exp
