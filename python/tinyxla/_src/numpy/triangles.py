"""Triangles and diagonals: tri, tril, triu, their index functions, diag, diagonal,
diagflat, diag_indices, fill_diagonal, trace.

Mirrors the functions of the same names in ``jax._src.numpy.lax_numpy``: masks are built
from ``broadcasted_iota`` comparisons and applied with ``select``, diagonals are gathers,
so everything is differentiable and batches under vmap. The index functions need
concrete sizes, as in JAX.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.lax import lax
from tinyxla._src.lax.type_rules import _check_shapelike, canonicalize_shape
from tinyxla._src.numpy import promotion, reductions, selection
from tinyxla._src.numpy.creation import arange, asarray, eye, ones, zeros, zeros_like
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.rearranging import tile_to_size
from tinyxla._src.numpy.shape import moveaxis, ravel

ArrayLike = Any


def _concrete_index(x: Any, context: str) -> int:
    if isinstance(x, core.Tracer):
        raise errors.ConcretizationTypeError(x, context)
    return operator.index(x)


def _tri_mask(n: int, m: int, k: Any) -> Any:
    """The bool (n, m) mask of ``j <= i + k``."""
    i = lax.broadcasted_iota(dtypes.int32, (n, m), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, m), 1)
    offset = promotion.convert(asarray(k), dtypes.int32, False)
    return lax.ge(lax.add(i, lax.broadcast_in_dim(offset, (n, m), ())), j)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.tri``: ones at and below the k-th diagonal (float32 by default)."""
    dtype = (np.dtype(np.float32) if dtype is None
             else dtypes.check_user_dtype_supported(dtype, "tri"))
    M = N if M is None else M
    shape = canonicalize_shape((N, M))
    _check_shapelike("iota", "shape", shape)
    return lax.convert_element_type(_tri_mask(*shape, k), dtype)


def _triangle(name: str, m: ArrayLike, k: int, lower: bool) -> Any:
    m = ensure_arraylike(name, m)
    if m.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    n_rows, n_cols = m.shape[-2:]
    mask = _tri_mask(n_rows, n_cols, k if lower else k - 1)
    which = lax.broadcast_in_dim(mask, m.shape, (m.ndim - 2, m.ndim - 1))
    zero = zeros_like(m)
    return lax.select(which, m, zero) if lower else lax.select(which, zero, m)


def tril(m: ArrayLike, k: int = 0) -> Any:
    """Mirrors ``jax.numpy.tril``: zeros above the k-th diagonal of the last two axes."""
    return _triangle("tril", m, k, lower=True)


def triu(m: ArrayLike, k: int = 0) -> Any:
    """Mirrors ``jax.numpy.triu``: zeros below the k-th diagonal of the last two axes."""
    return _triangle("triu", m, k, lower=False)


def _triu_size(n: int, m: int, k: int) -> int:
    """The number of elements of an (n, m) matrix on or above the k-th diagonal."""
    if k < 0:
        return n * m - _triu_size(m, n, 1 - k)
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def _index_args(n: Any, k: Any, m: Any) -> tuple[int, int, int]:
    # JAX names triu_indices in the errors of both functions.
    n = _concrete_index(n, "n argument of jnp.triu_indices")
    k = _concrete_index(k, "k argument of jnp.triu_indices")
    m = n if m is None else _concrete_index(m, "m argument of jnp.triu_indices")
    return n, k, m


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.triu_indices``: row and column indices of the upper triangle."""
    n, k, m = _index_args(n, k, m)
    return selection.nonzero(triu(ones((n, m)), k=k), size=_triu_size(n, m, k))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.tril_indices``: row and column indices of the lower triangle."""
    n, k, m = _index_args(n, k, m)
    return selection.nonzero(tril(ones((n, m)), k=k), size=_triu_size(m, n, -k))


def _shape_2d(name: str, arr: Any) -> tuple[int, ...]:
    if not hasattr(arr, "shape"):
        arr = ensure_arraylike(name, arr)
    if len(arr.shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tuple(arr.shape)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.triu_indices_from``."""
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k=k, m=m)


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.tril_indices_from``."""
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k=k, m=m)


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.mask_indices``: indices where ``mask_func(ones((n, n)), k)`` is
    non-zero (``size`` makes it usable under jit)."""
    i, j = selection.nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.diag_indices``: ``ndim`` copies of ``arange(n)``."""
    n = _concrete_index(n, "'n' argument of jnp.diag_indices()")
    ndim = _concrete_index(ndim, "'ndim' argument of jnp.diag_indices()")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    index_dtype = dtypes.default_int_dtype() if n <= np.iinfo(np.int32).max else dtypes.int64
    return (lax.broadcasted_iota(index_dtype, (n,), 0),) * ndim


def diag_indices_from(arr: ArrayLike) -> tuple[Any, ...]:
    """Mirrors ``jax.numpy.diag_indices_from`` (all dimensions must be equal)."""
    arr = ensure_arraylike("diag_indices_from", arr)
    if arr.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(arr.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(arr.shape[0], ndim=arr.ndim)


def diagonal(a: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Mirrors ``jax.numpy.diagonal``: the diagonal of axes (axis1, axis2), put last."""
    a = ensure_arraylike("diagonal", a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = _concrete_index(offset, "'offset' argument of jnp.diagonal()")
    n1, n2 = a.shape[axis1], a.shape[axis2]
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    size = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    if size == 0:
        return lax.full(a.shape[:-2] + (0,), 0, a.dtype)
    i = arange(size)
    j = arange(abs(offset), abs(offset) + size)
    return a[..., i, j] if offset >= 0 else a[..., j, i]


def diag(v: ArrayLike, k: int = 0) -> Any:
    """Mirrors ``jax.numpy.diag``: a 1-d ``v`` on the k-th diagonal, or a 2-d ``v``'s
    k-th diagonal."""
    v = ensure_arraylike("diag", v)
    k = operator.index(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        zero = lax.full_like(v, 0, shape=())
        v = lax.pad(v, zero, ((max(0, -k), max(0, k), 0),))
        mask = eye(n, k=k, dtype=bool)
        return lax.select(mask, lax.broadcast_in_dim(v, (n, n), (0,)),
                          lax.broadcast_in_dim(zero, (n, n), ()))
    if v.ndim == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v: ArrayLike, k: int = 0) -> Any:
    """Mirrors ``jax.numpy.diagflat``: the flattened input on the k-th diagonal."""
    promotion.check_arraylike("diagflat", v)
    return diag(ravel(v), k)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: bool = False, *,
                  inplace: bool = True) -> Any:
    """Mirrors ``jax.numpy.fill_diagonal`` (``inplace=False`` required, no ``wrap``)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = ensure_arraylike("fill_diagonal", a, val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = diag_indices(n, a.ndim)
    return a.at[idx].set(val if val.ndim == 0 else tile_to_size(ravel(val), n))


def trace(a: ArrayLike, offset: int | ArrayLike = 0, axis1: int = 0, axis2: int = 1,
          dtype: Any = None, out: None = None) -> Any:
    """Mirrors ``jax.numpy.trace``: the sum of the diagonal (sum's dtype rules)."""
    a = ensure_arraylike("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    if canonicalize_axis(axis1, a.ndim) == canonicalize_axis(axis2, a.ndim):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "trace")
    n1, n2 = a.shape[axis1], a.shape[axis2]
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    mask = lax.broadcast_in_dim(eye(n1, n2, k=offset, dtype=bool), a.shape,
                                (a.ndim - 2, a.ndim - 1))
    return reductions.sum(lax.select(mask, a, zeros_like(a)), axis=(-2, -1), dtype=dtype)

