"""Counting and binning: bincount, histogram_bin_edges, histogram, histogram2d, histogramdd.

Mirrors ``jax._src.numpy.lax_numpy``: values are binned as ``searchsorted(edges, a,
side='right')`` would (each bin half-open, the last one closed; values outside the edges
and NaNs are dropped) and counted by one scatter-add. For evenly spaced edges (an integer
``bins``) the bin is computed arithmetically and then corrected against the two
neighbouring edges, as numpy's fast path does, which gives the same bins as the search.
``bincount`` needs ``length`` under a trace, as in JAX.
"""
from __future__ import annotations

import builtins
import functools
import operator
from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.lax import slicing
from tinyxla._src.numpy import promotion, reductions
from tinyxla._src.numpy.creation import asarray, linspace
from tinyxla._src.numpy.promotion import concrete_or_error, ensure_arraylike
from tinyxla._src.numpy.sorting import searchsorted

ArrayLike = Any

_SCATTER_1D = slicing.ScatterDimensionNumbers((), (0,), (0,))


def _add_at(length: int, indices: Any, weights: Any) -> Any:
    """zeros(length).at[indices].add(weights) for 1-d int indices; others are dropped."""
    n = indices.shape[0]
    out = lax.full((length,), 0, weights.dtype)
    if n == 0:
        return out
    if weights.ndim == 0:
        weights = lax.broadcast_in_dim(weights, (n,), ())
    return slicing.scatter_add(out, lax.reshape(indices, (n, 1)), weights, _SCATTER_1D,
                               mode="drop")


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *,
             length: int | None = None, out_sharding: Any = None) -> Any:
    """Mirrors ``jax.numpy.bincount``: negative values count in bin 0 (JAX clips them);
    values at or past ``length`` are dropped. Without ``length`` x must be concrete."""
    x = ensure_arraylike("bincount", x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if out_sharding is not None:
        raise NotImplementedError("tinyxla's bincount does not support out_sharding")
    minlength = concrete_or_error(
        operator.index, minlength,
        "The error occurred because of argument 'minlength' of jnp.bincount.")
    if length is None:
        concrete_or_error(None, x, "The error occurred because of argument 'x' of "
                          "jnp.bincount. To avoid this error, pass a static `length` argument.")
        top = int(lax.reduce_max(x, (0,))) if x.shape[0] else -1
        length = builtins.max(minlength, x.shape[0] and builtins.max(0, top) + 1)
    else:
        length = concrete_or_error(
            operator.index, length,
            "The error occurred because of argument 'length' of jnp.bincount.")
    if weights is None:
        w = lax.full((), 1, dtypes.default_int_dtype())
    else:
        w = ensure_arraylike("bincount", weights)
        if w.shape != x.shape:
            raise ValueError(f"type of weights must match type of x. Got typeof(x)="
                             f"{_type_str(x)} and typeof(weights)={_type_str(w)}")
    return _bincount(x, w, length)


@functools.partial(jit, static_argnums=2)
def _bincount(x: Any, weights: Any, length: int) -> Any:
    # One compiled dispatch: the clip and the scatter-add.
    return _add_at(length, lax.max(x, lax.full_like(x, 0)), weights)


def _type_str(x: Any) -> str:
    return f"{dtypes.short_dtype_name(x.dtype)}[{','.join(map(str, x.shape))}]"


def _range_edges(name: str, arr: Any, bins: Any, range: Any, dtype: np.dtype) -> Any:
    bins_int = concrete_or_error(operator.index, bins, f"bins argument of {name}")
    if range is None:
        range = [reductions.min(arr), reductions.max(arr)]
    lohi = asarray(range, dtype=dtype)
    if lohi.shape != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {lohi}")
    lo, hi = lohi[0], lohi[1]
    flat = lax.eq(lo, hi)
    half = lax.full_like(lo, 0.5)
    lo = lax.select(flat, lax.sub(lo, half), lo)
    hi = lax.select(flat, lax.add(hi, half), hi)
    return linspace(lo, hi, bins_int + 1, dtype=dtype)


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10,
                        range: None | Any | Sequence[ArrayLike] = None,  # noqa: A002
                        weights: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.histogram_bin_edges``: ``bins`` edges as given, or ``bins + 1``
    even edges over ``range`` (default: the data's min and max, widened by 0.5 each way
    when they are equal). String ``bins`` are not supported, as in JAX."""
    del weights
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    promotion.check_arraylike("histogram_bin_edges", a, bins)
    arr = asarray(a)
    dtype = dtypes.to_inexact_dtype(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype)
    return _range_edges("histogram_bin_edges", arr, bins, range, dtype)


def _linspace_edge(lo: Any, hi: Any, i: Any, nb: int) -> Any:
    """``linspace(lo, hi, nb + 1)[i]`` elementwise: lo*(1-t) + hi*t with t = i/nb, and
    exactly hi at i = nb, as ``jnp.linspace`` evaluates it."""
    t = lax.div(lax.convert_element_type(i, lo.dtype), lax.full(i.shape, nb, lo.dtype))
    lo_b = lax.broadcast_in_dim(lo, i.shape, ())
    hi_b = lax.broadcast_in_dim(hi, i.shape, ())
    edge = lax.add(lax.mul(lo_b, lax.sub(lax.full_like(t, 1), t)), lax.mul(hi_b, t))
    return lax.select(lax.eq(i, lax.full_like(i, nb)), hi_b, edge)


def _bin_index(a: Any, edges: Any, uniform: bool) -> Any:
    """searchsorted(edges, a, 'right'), with a value equal to the last edge in the last
    bin: 0 below the edges, len(edges) above them or for NaN."""
    nb = edges.shape[0] - 1
    if not uniform or nb < 1 or a.shape[0] == 0:
        idx = searchsorted(edges, a, side="right")
        last = lax.eq(a, lax.broadcast_in_dim(edges[-1], a.shape, ()))
        return lax.select(last, lax.full_like(idx, nb), idx)
    lo, hi = edges[0], edges[-1]
    scale = lax.div(lax.full_like(lo, nb), lax.sub(hi, lo))
    pos = lax.mul(lax.sub(a, lax.broadcast_in_dim(lo, a.shape, ())),
                  lax.broadcast_in_dim(scale, a.shape, ()))
    inside = lax.bitwise_and(lax.ge(a, lax.broadcast_in_dim(lo, a.shape, ())),
                             lax.le(a, lax.broadcast_in_dim(hi, a.shape, ())))
    # In [0, nb - 1] for the values inside; the others get their bin below.
    pos = lax.clamp(lax.full((), 0, pos.dtype), lax.floor(lax.select(inside, pos,
                                                                     lax.full_like(pos, 0))),
                    lax.full((), nb - 1, pos.dtype))
    i = lax.convert_element_type(pos, np.int32)
    # Rounding may put a value one bin off: compare with the bin's edges, computed as
    # linspace computes them (so bit for bit the same, and no gathers).
    left = _linspace_edge(lo, hi, i, nb)
    right = _linspace_edge(lo, hi, lax.add(i, lax.full_like(i, 1)), nb)
    i = lax.select(lax.lt(a, left), lax.sub(i, lax.full_like(i, 1)), i)
    up = lax.bitwise_and(lax.ge(a, right), lax.lt(i, lax.full_like(i, nb - 1)))
    i = lax.select(up, lax.add(i, lax.full_like(i, 1)), i)
    i = lax.add(i, lax.full_like(i, 1))   # bins count from 1, as searchsorted's
    below = lax.lt(a, lax.broadcast_in_dim(lo, a.shape, ()))
    outside = lax.select(below, lax.full_like(i, 0), lax.full_like(i, nb + 1))
    return lax.select(inside, i, outside)


@jit(static_argnames=("uniform",))
def _binned_counts(flat: Any, edges: Any, w: Any, uniform: bool) -> Any:
    """The weights summed per bin: compiled as one graph, as JAX jits it (eagerly the
    binning is some thirty elementwise passes over the data; fused, about one)."""
    nb = edges.shape[0] - 1
    return _add_at(nb + 2, _bin_index(flat, edges, uniform), w)[1:nb + 1]


def _uniform_bins(bins: Any) -> bool:
    return np.ndim(bins) == 0 and not isinstance(bins, str)


def histogram(a: ArrayLike, bins: ArrayLike = 10,
              range: Sequence[ArrayLike] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool | None = None
              ) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.histogram``: (counts as the weights' inexact dtype, edges)."""
    if weights is None:
        a, _ = ensure_arraylike("histogram", a, bins)
        a, = promotion.promote_dtypes_inexact(a)
        w = lax.full((), 1, a.dtype)
    else:
        a, _, w = ensure_arraylike("histogram", a, bins, weights)
        if a.shape != w.shape:
            raise ValueError("weights should have the same shape as a.")
        a, w = promotion.promote_dtypes_inexact(a, w)
        w = lax.reshape(w, (w.size,))
    edges = histogram_bin_edges(a, bins, range, weights)
    counts = _binned_counts(lax.reshape(a, (a.size,)), edges, w, _uniform_bins(bins))
    if density:
        widths = lax.sub(edges[1:], edges[:-1])
        counts = lax.div(lax.div(counts, widths), lax.broadcast_in_dim(
            lax.reduce_sum(counts, (0,)), counts.shape, ()))
    return counts, edges


def histogramdd(sample: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[None | Any | Sequence[ArrayLike]] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None
                ) -> tuple[Any, list[Any]]:
    """Mirrors ``jax.numpy.histogramdd``: a (N, D) sample binned per dimension."""
    if weights is None:
        sample = ensure_arraylike("histogramdd", sample)
        sample, = promotion.promote_dtypes_inexact(sample)
        w = lax.full((), 1, dtypes.default_int_dtype())   # integer counts, as JAX's
    else:
        sample, w = ensure_arraylike("histogramdd", sample, weights)
        if w.shape != sample.shape[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, w = promotion.promote_dtypes_inexact(sample, w)
    N, D = sample.shape
    if range is not None and (len(range) != D or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence "
                         f"of {D} pairs or Nones; got {range=}")
    try:
        per_dim = list(bins)  # type: ignore[arg-type]
    except TypeError:
        per_dim = D * [bins]
    else:
        if len(per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    flat_index = lax.full((N,), 0, np.int32)
    edges_by_dim, nbins = [], []
    for i in builtins.range(D):
        column = lax.reshape(lax.slice(sample, (0, i), (N, i + 1)), (N,))
        edges = histogram_bin_edges(column, per_dim[i], None if range is None else range[i])
        idx = _bin_index(column, edges, _uniform_bins(per_dim[i]))
        n = edges.shape[0] + 1
        flat_index = lax.add(lax.mul(flat_index, lax.full_like(flat_index, n)),
                             lax.clamp(lax.full((), 0, np.int32), idx,
                                       lax.full((), n - 1, np.int32)))
        edges_by_dim.append(edges)
        nbins.append(n)
    hist = lax.reshape(_add_at(int(np.prod(nbins)), flat_index, w), tuple(nbins))
    hist = lax.slice(hist, (1,) * D, tuple(n - 1 for n in nbins))
    if density:
        hist = lax.convert_element_type(hist, sample.dtype)
        hist = lax.div(hist, lax.broadcast_in_dim(lax.reduce_sum(hist, tuple(builtins.range(D))),
                                                  hist.shape, ()))
        for d, edges in enumerate(edges_by_dim):
            widths = lax.sub(edges[1:], edges[:-1])
            hist = lax.div(hist, lax.broadcast_in_dim(widths, hist.shape, (d,)))
    return hist, edges_by_dim


def histogram2d(x: ArrayLike, y: ArrayLike, bins: ArrayLike | list[ArrayLike] = 10,
                range: Sequence[None | Any | Sequence[ArrayLike]] | None = None,  # noqa: A002
                weights: ArrayLike | None = None, density: bool | None = None
                ) -> tuple[Any, Any, Any]:
    """Mirrors ``jax.numpy.histogram2d``: histogramdd of the (x, y) pairs."""
    x, y = ensure_arraylike("histogram2d", x, y)
    try:
        n = len(bins)  # type: ignore[arg-type]
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        bins = [asarray(bins), asarray(bins)]
    x, y = promotion.promote_dtypes(x, y)
    sample = lax.transpose(lax.concatenate([lax.reshape(x, (1, x.size)),
                                            lax.reshape(y, (1, y.size))], 0), (1, 0))
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
