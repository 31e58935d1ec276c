"""``jax.nn.initializers``: functions ``init(key, shape, dtype)`` that make parameter
arrays. The random ones draw from ``tinyxla.random``."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import dtypes, random
from tinyxla._src.lax import lax
from tinyxla._src.numpy import creation, shape as jnp_shape, ufuncs

Initializer = Callable[..., Any]

__all__ = [
    "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
    "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
    "xavier_uniform", "zeros"]


def _float_dtype(dtype: Any) -> np.dtype:
    return dtypes.default_float_dtype() if dtype is None else dtypes.canonicalize_dtype(dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in shape) if np.ndim(shape) else (int(shape),)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """Mirrors ``jax.nn.initializers.zeros``: an array of zeros (the key is ignored)."""
    return creation.zeros(_shape(shape), _float_dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """Mirrors ``jax.nn.initializers.ones``: an array of ones (the key is ignored)."""
    return creation.ones(_shape(shape), _float_dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.constant``: an initializer filling with ``value``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        return creation.full(_shape(shape), value, dtype=_float_dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.uniform``: values uniform in ``[0, scale)``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _float_dtype(dtype)
        return random.uniform(key, _shape(shape), dtype) * creation.array(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.normal``: values ``N(0, stddev²)``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _float_dtype(dtype)
        return random.normal(key, _shape(shape), dtype) * creation.array(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """Mirrors ``jax.nn.initializers.truncated_normal``: a standard normal truncated to
    ``(lower, upper)``, times ``stddev`` (no variance correction, as in JAX)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _float_dtype(dtype)
        return (random.truncated_normal(key, lower, upper, _shape(shape), dtype)
                * creation.array(stddev, dtype))
    return init


def _compute_fans(shape: Sequence[int], in_axis: int | Sequence[int] = -2,
                  out_axis: int | Sequence[int] = -1,
                  batch_axis: int | Sequence[int] = ()) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight shape: axes other than in/out/batch form the
    receptive field (JAX's ``_compute_fans``)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly.")

    def size(axes: int | Sequence[int]) -> int:
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(scale: Any, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.variance_scaling``: samples with variance
    ``scale / n``, ``n`` the fan given by ``mode`` (``fan_in``, ``fan_out``, ``fan_avg``,
    ``fan_geo_avg``), from a ``truncated_normal`` (at ±2 std, rescaled), ``normal`` or
    ``uniform`` distribution. Real dtypes only (JAX also samples complex ones)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _float_dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        if dtypes.issubdtype(dtype, np.complexfloating):
            raise NotImplementedError("variance_scaling: complex dtypes are not supported yet")
        variance = creation.array(scale / denominator, dtype=dtype)
        if distribution == "truncated_normal":
            # The constant is the std of a standard normal truncated to (-2, 2).
            stddev = ufuncs.sqrt(variance) / creation.array(.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * ufuncs.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, dtype, -1) * ufuncs.sqrt(3 * variance)
        raise ValueError(
            f"invalid distribution for variance scaling initializer: {distribution}")
    return init


def glorot_uniform(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                   batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.glorot_uniform`` (``xavier_uniform``):
    ``variance_scaling(1, "fan_avg", "uniform")``."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                  batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.glorot_normal`` (``xavier_normal``):
    ``variance_scaling(1, "fan_avg", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                  batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.lecun_uniform``: ``variance_scaling(1, "fan_in", "uniform")``."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                 batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.lecun_normal``:
    ``variance_scaling(1, "fan_in", "truncated_normal")``."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
               batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.he_uniform`` (``kaiming_uniform``):
    ``variance_scaling(2, "fan_in", "uniform")``."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
              batch_axis: Sequence[int] = (), dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.he_normal`` (``kaiming_normal``):
    ``variance_scaling(2, "fan_in", "truncated_normal")``."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def _apply_reflector(x: Any, v: Any, tau: Any) -> Any:
    """``(I - tau v v^T) x`` for an (m, n) ``x`` and an m-vector ``v``."""
    m, n = x.shape
    w = lax.dot_general(v, x, (((0,), (0,)), ((), ())))
    return lax.sub(x, lax.mul(tau, lax.mul(lax.broadcast_in_dim(v, (m, n), (0,)),
                                           lax.broadcast_in_dim(w, (m, n), (1,)))))


def _householder_qr_signed(a: Any) -> Any:
    """The Q of ``a``'s (m, n) thin QR, m >= n, with each column multiplied by the sign of
    its diagonal entry of R (JAX's orthogonal sampling).

    tinyxla has no QR primitive yet, so this is LAPACK's unblocked Householder algorithm
    (``geqr2`` then ``org2r``) in lax ops, unrolled over the columns. The sign-fixed Q is
    unique, so it agrees with JAX's (LAPACK's) to rounding, not bit for bit."""
    m, n = a.shape
    dt = a.dtype
    rows = lax.broadcasted_iota(np.int32, (m,), 0)
    zero, one = creation.zeros((), dt), creation.ones((), dt)
    reflectors, diag = [], []
    for j in range(n):
        col = lax.reshape(lax.slice(a, (0, j), (m, j + 1)), (m,))
        below = lax.gt(rows, np.int32(j))
        alpha = lax.reshape(lax.slice(col, (j,), (j + 1,)), ())
        xnorm2 = lax.reduce_sum(lax.select(below, lax.mul(col, col), lax.full_like(col, 0)),
                                (0,))
        trivial = lax.eq(xnorm2, zero)  # nothing below the diagonal: H = I
        norm = lax.sqrt(lax.add(lax.mul(alpha, alpha), xnorm2))
        beta = lax.neg(lax.select(lax.lt(alpha, zero), lax.neg(norm), norm))
        tau = lax.select(trivial, zero, lax.div(lax.sub(beta, alpha), beta))
        scale = lax.select(trivial, zero, lax.div(one, lax.sub(alpha, beta)))
        v = lax.select(lax.eq(rows, np.int32(j)), lax.full_like(col, 1),
                       lax.select(below, lax.mul(col, scale), lax.full_like(col, 0)))
        a = _apply_reflector(a, v, tau)
        reflectors.append((v, tau))
        diag.append(lax.select(trivial, alpha, beta))
    q = creation.eye(m, n, dtype=dt)
    for v, tau in reversed(reflectors):
        q = _apply_reflector(q, v, tau)
    signs = lax.sign(jnp_shape.stack(diag))
    return lax.mul(q, lax.broadcast_in_dim(signs, (m, n), (1,)))


def _orthogonal_matrix(key: Any, n_rows: int, n_cols: int, dtype: np.dtype) -> Any:
    """JAX's ``random.orthogonal(key, n_rows, (), dtype, n_cols)``: the sign-fixed Q of a
    standard normal (max, min) matrix, transposed when there are fewer rows."""
    z = random.normal(key, (max(n_rows, n_cols), min(n_rows, n_cols)), dtype)
    q = _householder_qr_signed(z)
    return lax.transpose(q, (1, 0)) if n_rows < n_cols else q


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.orthogonal``: matrices with orthonormal columns (or
    rows, whichever are fewer) along ``column_axis``, times ``scale``; the other axes are
    flattened into the rows. Values agree with JAX's to rounding (see
    ``_householder_qr_signed``); float16 works here, where JAX's CPU QR refuses it."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _float_dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return creation.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
        q = lax.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = jnp_shape.moveaxis(q, -1, column_axis)
        return creation.array(scale, dtype) * q
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Mirrors ``jax.nn.initializers.delta_orthogonal``: a 3-, 4- or 5-D convolution kernel
    that is zero except at the spatial centre, which holds an ``orthogonal`` matrix of the
    last two axes (fan_in <= fan_out)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _float_dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return creation.zeros(shape, dtype).at[centre].set(ortho)
    return init


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
