"""``jax.scipy.stats``' sample statistics: ``mode``, ``rankdata`` and ``sem``."""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax.sorting import sort_key_val
from tinyxla._src.numpy.promotion import check_arraylike, promote_args_inexact
from tinyxla._src.vmap import vmap


class ModeResult(NamedTuple):
    """``mode``'s result (``jax.scipy.stats._core.ModeResult``)."""
    mode: Any
    count: Any


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(f"In order to best JIT compile `{name}`, we cannot know "
                                  "whether `x` contains nans. Please check if nans exist in "
                                  f"`x` outside of the `{name}` function.")


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """Mirrors ``jax.scipy.stats.mode``: the most common value along ``axis`` (the smallest
    among ties) and its count."""
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = lax._canonicalize_axis(axis, x.ndim)
    shape = x.shape
    if keepdims:
        out_shape = tuple(1 for _ in shape) if axis is None else \
            tuple(1 if i == axis else s for i, s in enumerate(shape))
    else:
        out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
    if axis is None:
        axis = 0
        x = x.ravel()

    def one_mode(v: Any) -> tuple[Any, Any]:
        if v.size == 0:
            nan = jnp.array(np.nan, dtype=dtypes.canonicalize_dtype(np.float64))
            return nan, jnp.array(0, dtype=nan.dtype)
        values, counts = jnp.unique(v, return_counts=True, size=v.size)
        return values[jnp.argmax(counts)], counts.max()

    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    values, counts = vmap(one_mode, in_axes=1)(x)
    return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))


def _rank_1d(a: Any, method: str) -> Any:
    out_dtype = dtypes.canonicalize_dtype(np.float64)
    arr, sorter = sort_key_val(a, jnp.arange(a.size))
    inv = jnp.empty_like(sorter).at[sorter].set(jnp.arange(a.size, dtype=sorter.dtype))
    if method == "ordinal":
        ranks = (inv + 1).astype(out_dtype)
    else:
        obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = jnp.cumsum(obs)[inv]
        if method == "dense":
            ranks = dense.astype(out_dtype)
        else:
            count = jnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
            if method == "max":
                ranks = count[dense]
            elif method == "min":
                ranks = count[dense - 1] + 1
            else:
                ranks = 0.5 * (count[dense] + count[dense - 1] + 1)
    # JAX switches with lax.cond; the NaN-free ranks are computed either way here.
    return jnp.where(jnp.any(jnp.isnan(a)), jnp.full_like(ranks, np.nan), ranks)


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Mirrors ``jax.scipy.stats.rankdata``: ranks from 1, ties resolved by ``method``
    ('average', 'min', 'max', 'dense' or 'ordinal'); NaN everywhere if any is NaN."""
    check_arraylike("rankdata", a)
    _check_nan_policy("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    a = jnp.asarray(a)
    if axis is not None:
        moved = jnp.moveaxis(a, axis, -1)
        flat = moved.reshape(-1, moved.shape[-1])
        ranks = vmap(lambda v: _rank_1d(v, method))(flat)
        return jnp.moveaxis(ranks.reshape(moved.shape), -1, axis)
    return _rank_1d(jnp.ravel(a), method)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """Mirrors ``jax.scipy.stats.sem``: the standard error of the mean, ``std / sqrt(n)``
    (``nan_policy='omit'`` ignores NaNs)."""
    b, = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        mean = jnp.nanmean(b, axis, keepdims=True)
        sq = jnp.where(jnp.isnan(b), 0., (b - mean) ** 2).sum(axis, keepdims=keepdims)
        std = jnp.sqrt(sq / (count - ddof))
        return std / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
