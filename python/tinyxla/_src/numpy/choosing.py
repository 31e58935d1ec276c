"""Choosing elements by conditions or indices: select, choose, extract and compress.

Mirrors ``jax.numpy.select`` / ``choose`` / ``extract`` / ``compress``. choose's
default mode 'raise' checks the indices, so it needs them concrete (as JAX does);
extract and compress need a concrete condition unless ``size`` is given.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, reductions, ufuncs
from tinyxla._src.numpy.creation import asarray
from tinyxla._src.numpy.indexing import take
from tinyxla._src.numpy.promotion import concrete_or_error, ensure_arraylike
from tinyxla._src.numpy.selection import nonzero
from tinyxla._src.numpy.shape import moveaxis
from tinyxla._src.numpy.sorting import argsort

ArrayLike = Any


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike],
           default: ArrayLike = 0) -> Any:
    """Mirrors ``jax.numpy.select``: the choice of the first true condition, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    promotion.check_arraylike("select", *condlist, *choicelist, default)
    conds = [asarray(c) for c in condlist]
    choices = promotion.promote_dtypes(asarray(default), *[asarray(c) for c in choicelist])
    shape = promotion.broadcast_shapes(*(c.shape for c in conds), *(c.shape for c in choices))
    # Index 0 is the default, picked where no condition holds (argmax of all-False is 0).
    stacked = lax.concatenate(
        [lax.full((1, *shape), False, np.bool_)]
        + [lax.expand_dims(promotion.broadcast_to_shape(
            lax.convert_element_type(c, np.bool_), shape), (0,)) for c in conds], 0)
    idx = lax.convert_element_type(reductions.argmax(stacked, axis=0), np.int32)
    return lax.select_n(idx, *(promotion.broadcast_to_shape(c, shape) for c in choices))


def choose(a: ArrayLike, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Mirrors ``jax.numpy.choose``: choices[a[i]][i], with 'raise', 'wrap' or 'clip'."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    promotion.check_arraylike("choose", a, *choices)
    a = promotion.ensure_array(a)
    choices = [promotion.ensure_array(c) for c in choices]
    if not dtypes.issubdtype(a.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        arr = concrete_or_error(None, a, "The error occurred because jnp.choose was "
                                "jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' "
                                "instead.")
        if bool(reductions.any(ufuncs.logical_or(ufuncs.less(arr, 0), ufuncs.greater_equal(arr, n)))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = ufuncs.mod(a, n)
    elif mode == "clip":
        arr = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    choices = promotion.promote_dtypes(*choices)
    arrays = promotion.broadcast_arrays_of(arr, *choices)
    idx = lax.convert_element_type(arrays[0], np.int32)
    return lax.select_n(idx, *arrays[1:]) if n > 1 else arrays[1]


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *,
             size: int | None = None, fill_value: ArrayLike = 0, out: None = None) -> Any:
    """Mirrors ``jax.numpy.compress``: the slices along ``axis`` where condition holds;
    ``size`` fixes the length (padding with ``fill_value``)."""
    cond, arr, fill_value = ensure_arraylike("compress", condition, a, fill_value)
    cond = lax.convert_element_type(cond, np.bool_)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = lax.reshape(arr, (arr.size,))
    else:
        arr = moveaxis(arr, axis, 0)
    n = arr.shape[0]
    cond, extra = cond[:n], cond[n:]
    arr = arr[:cond.shape[0]]
    if size is None:
        if extra.shape[0] and bool(reductions.any(extra)):
            raise ValueError("condition contains entries that are out of bounds")
        result = take(arr, nonzero(cond)[0], axis=0)
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got {size=} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = lax.broadcast_in_dim(cond, arr.shape, (0,))
        fill = lax.broadcast_in_dim(lax.convert_element_type(fill_value, arr.dtype), arr.shape, ())
        arr = lax.select(mask, arr, fill)
        order = argsort(cond, stable=True, descending=True)
        result = take(arr, order[:size], axis=0)
    return moveaxis(result, 0, axis)


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike = 0) -> Any:
    """Mirrors ``jax.numpy.extract``: compress of the flattened arrays."""
    promotion.check_arraylike("extreact", condition, arr, fill_value)
    condition, arr = promotion.ensure_array(condition), promotion.ensure_array(arr)
    return compress(lax.reshape(condition, (condition.size,)), lax.reshape(arr, (arr.size,)),
                    size=size, fill_value=fill_value)
