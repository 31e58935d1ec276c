"""Functional edits of an array's elements: append, delete, insert, place, put,
put_along_axis.

Mirrors the functions of the same names in ``jax._src.numpy.lax_numpy`` and ``indexing``:
arrays are immutable, so each returns a new array (``place``, ``put`` and
``put_along_axis`` require ``inplace=False``, as in JAX). Edits are scatters and gathers,
so they are differentiable and batch under vmap; ``delete`` with non-unique indices and
``insert`` need concrete index arrays where JAX does.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, selection, sorting, ufuncs
from tinyxla._src.numpy.creation import arange, array, asarray, full, ones, zeros_like
from tinyxla._src.numpy.index_tricks import unravel_index
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.rearranging import tile_to_size
from tinyxla._src.numpy.shape import broadcast_to, concatenate, moveaxis, ravel, reshape

ArrayLike = Any


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Any:
    """Mirrors ``jax.numpy.append``: ``values`` joined after ``arr`` (both flattened by
    default)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def _along(axis: int, index: Any) -> tuple[Any, ...]:
    return (slice(None),) * axis + (index,)


def delete(arr: ArrayLike, obj: ArrayLike | slice, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """Mirrors ``jax.numpy.delete``: the subarrays at ``obj`` along ``axis`` removed.

    Traced ``obj`` needs ``assume_unique_indices=True`` (then it is one gather)."""
    a = ensure_arraylike("delete", arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    try:
        index = operator.index(obj)  # type: ignore[arg-type]
    except TypeError:
        pass
    else:
        index = canonicalize_axis(index, a.shape[axis])
        return concatenate([a[_along(axis, slice(0, index))],
                            a[_along(axis, slice(index + 1, None))]], axis=axis)
    if isinstance(obj, slice):
        obj = arange(a.shape[axis])[obj]
        assume_unique_indices = True
    promotion.check_arraylike("delete", a, obj)
    m = getattr(obj, "__jax_array__", None)
    if m is not None:
        obj = m()
    obj_dtype = obj.dtype if hasattr(obj, "dtype") else np.asarray(obj).dtype
    if dtypes.issubdtype(obj_dtype, np.integer) and assume_unique_indices:
        n = a.shape[axis]
        idx = ravel(asarray(obj))
        idx = ufuncs.clip(selection.where(idx < 0, idx + n, idx), 0, n)
        idx = sorting.sort(idx)
        idx = idx - arange(idx.shape[0], dtype=idx.dtype)
        keep = arange(n - idx.shape[0], dtype=idx.dtype)
        keep = keep + reductions.sum(keep[None, :] >= idx[:, None], axis=0, dtype=keep.dtype)
        return a[_along(axis, keep)]
    if isinstance(obj, core.Tracer):
        raise errors.ConcretizationTypeError(obj, "'obj' array argument of jnp.delete()")
    obj_np = np.asarray(obj)
    if np.issubdtype(obj_np.dtype, np.integer):
        mask = np.ones(a.shape[axis], dtype=bool)
        mask[obj_np] = False
    elif obj_np.dtype == bool:
        if obj_np.shape != (a.shape[axis],):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        mask = ~obj_np
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj_np.dtype}; must be "
                         "integer or bool.")
    return a[_along(axis, mask)]


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike,
           axis: int | None = None) -> Any:
    """Mirrors ``jax.numpy.insert``: ``values`` inserted before the indices ``obj`` along
    ``axis`` (flattened by default)."""
    a, _, values_arr = ensure_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj,
                                        values)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(operator.index(axis), a.ndim)
    indices = arange(*obj.indices(a.shape[axis])) if isinstance(obj, slice) else asarray(obj)
    if indices.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.issubdtype(indices.dtype, np.integer):
        if indices.size == 0 and not promotion.is_array(obj):
            indices = indices.astype(dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values_arr = array(values_arr, ndmin=a.ndim, dtype=a.dtype)
    if indices.size == 1:
        index = reshape(indices, ())
        if indices.ndim == 0:
            values_arr = moveaxis(values_arr, 0, axis)
        indices = full((values_arr.shape[axis],), index)
    n_input = a.shape[axis]
    n_insert = promotion.broadcast_shapes(indices.shape, (values_arr.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    out = zeros_like(a, shape=tuple(out_shape))
    indices = ufuncs.clip(selection.where(indices < 0, indices + n_input, indices), 0, n_input)
    values_ind = indices.at[sorting.argsort(indices)].add(
        arange(n_insert, dtype=indices.dtype))
    arr_mask = ones(n_input + n_insert, dtype=bool).at[values_ind].set(False)
    arr_ind = selection.nonzero(arr_mask, size=n_input)[0]
    out = out.at[_along(axis, values_ind)].set(values_arr)
    return out.at[_along(axis, arr_ind)].set(a)


def place(arr: ArrayLike, mask: ArrayLike, vals: ArrayLike, *, inplace: bool = True) -> Any:
    """Mirrors ``jax.numpy.place`` (``inplace=False`` required): ``vals`` written in order,
    cyclically, where ``mask`` is true."""
    data, mask_arr, vals_arr = ensure_arraylike("place", arr, mask, vals)
    vals_arr = ravel(vals_arr)
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    indices = selection.nonzero(ravel(mask_arr), size=mask_arr.size, fill_value=mask_arr.size)[0]
    vals_arr = tile_to_size(vals_arr, indices.shape[0])
    return reshape(ravel(data).at[indices].set(vals_arr, mode="drop"), data.shape)


def put(a: ArrayLike, ind: ArrayLike, v: ArrayLike, mode: str | None = None, *,
        inplace: bool = True) -> Any:
    """Mirrors ``jax.numpy.put`` (``inplace=False`` required): ``v`` written cyclically at
    the flat indices ``ind``; out-of-bounds indices are dropped, wrapped or clipped."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    arr, ind_arr, _ = ensure_arraylike("put", a, ind, v)
    ind_arr = ravel(ind_arr)
    v_arr = ravel(v)
    if not arr.size or not ind_arr.size or not v_arr.size:
        return arr
    v_arr = tile_to_size(v_arr, ind_arr.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = ufuncs.clip(ind_arr, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ufuncs.remainder(ind_arr, arr.size)
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    return arr.at[unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """Mirrors ``jax.numpy.put_along_axis`` (``inplace=False`` required): the inverse of
    ``take_along_axis``."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "JAX arraysare immutable. Pass inplace=False to instead return an "
                         "updated array.")
    arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
    original_shape = arr.shape
    flat = axis is None
    if flat:
        arr = ravel(arr)
        axis = 0
    if arr.ndim != indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got {arr.ndim=} and {indices.ndim=}.")
    try:
        values = broadcast_to(values, indices.shape)
    except (ValueError, TypeError):
        raise ValueError("put_along_axis argument 'values' must be broadcastable to "
                         f"'indices'. Got {values.shape=} and {indices.shape=}.") from None
    axis = canonicalize_axis(axis, arr.ndim)
    idx = tuple(indices if d == axis else
                lax.broadcast_in_dim(lax.broadcasted_iota(indices.dtype, (n,), 0),
                                     tuple(n if e == d else 1 for e in range(arr.ndim)), (d,))
                for d, n in enumerate(arr.shape))
    result = arr.at[idx].set(values, mode=mode)
    return reshape(result, original_shape) if flat else result
