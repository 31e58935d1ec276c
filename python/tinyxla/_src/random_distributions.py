"""``jax.random``'s samplers of the gamma family (gamma, loggamma, beta, dirichlet, chisquare,
f, t, generalized_normal, ball), poisson, binomial and multinomial, and the transformed
ones added with them (double_sided_maxwell, wald, multivariate_normal, orthogonal), plus
``clone`` and ``key_dtype``. Each follows JAX 0.10's algorithm step for step (``jax/_src/random/core.py``).
Float32 samples equal JAX's bit for bit for poisson, binomial, multinomial, wald and t (in
the pinned cases), gamma at a >= 1 and loggamma (through lax.rsqrt, which is XLA:CPU's).
Samplers through ``exp`` or ``pow`` (beta, chisquare, f, dirichlet, generalized_normal,
ball, gamma below a = 1) and double_sided_maxwell agree to rounding.
The rejection loops are in ``random_rejection``.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from tinyxla._src import dtypes, prng
from tinyxla._src.lax import lax
from tinyxla._src.numpy import linalg as jnp_linalg
from tinyxla._src.numpy import linalg_decompositions as jnp_decompositions
from tinyxla._src.numpy.promotion import broadcast_shapes, check_arraylike, promote_dtypes_inexact
from tinyxla._src.random import (
    _bernoulli_jit, _canonical_shape, _check_broadcast_shapes, _check_prng_key, _check_shape,
    _exponential, _float_dtype, _maxwell, _normal, _split_jit, _uniform)
from tinyxla._src.random_rejection import (
    _fma, random_binomial_p, random_gamma_p, random_poisson_p)
from tinyxla import numpy as jnp

Shape = Sequence[int]


def _split2(data: Any) -> tuple[Any, Any]:
    keys = _split_jit(data, (2,), prng.partitionable())
    return keys[0], keys[1]


def _check_all_safe_to_cast(name: str, dtype: np.dtype, *args: Any) -> None:
    for arg in args:
        in_dtype = dtypes.dtype(arg)
        if in_dtype != dtype and dtypes.result_type(arg, dtype) != dtype:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type "
                f"{jnp.asarray(arg).dtype} to {dtype}")


def _float_dtype_checked(name: str, dtype: Any) -> np.dtype:
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, name)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


# ----------------------------------------------------------------------------- gamma family

def _gamma(data: Any, a: Any, shape: tuple[int, ...] | None, dtype: np.dtype,
           log_space: bool = False) -> Any:
    """JAX's ``_gamma``: ``a`` cast and broadcast to ``shape``, then one random_gamma."""
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        _check_shape("gamma", shape, tuple(np.shape(a)))
    a = lax.convert_element_type(a, dtype)
    if tuple(np.shape(a)) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(data, a, log_space=log_space, partitionable=prng.partitionable())


def gamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Gamma(a) samples, unit scale (mirrors ``jax.random.gamma``; Marsaglia and Tsang's
    rejection method, per element, as JAX's)."""
    data, _ = _check_prng_key("gamma", key)
    dtype = _float_dtype_checked("gamma", dtype)
    return _gamma(data, a, None if shape is None else _canonical_shape(shape), dtype)


def loggamma(key: Any, a: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Logs of Gamma(a) samples, accurate for small ``a`` (mirrors ``jax.random.loggamma``)."""
    data, _ = _check_prng_key("loggamma", key)
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, "loggamma")
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    return _gamma(data, a, None if shape is None else _canonical_shape(shape), dtype,
                  log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Beta(a, b) samples, as a ratio of log-gamma samples (mirrors ``jax.random.beta``)."""
    data, _ = _check_prng_key("beta", key)
    dtype = _float_dtype_checked("beta", dtype)
    _check_all_safe_to_cast("beta", dtype, a, b)
    shape = _check_broadcast_shapes("beta", shape, a, b)
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    key_a, key_b = _split2(data)
    log_gamma_a = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, log_space=True)
    # gamma_a / (gamma_a + gamma_b) without losing precision.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = lax.exp(lax.sub(log_gamma_a, log_max))
    gamma_b_scaled = lax.exp(lax.sub(log_gamma_b, log_max))
    return lax.div(gamma_a_scaled, lax.add(gamma_a_scaled, gamma_b_scaled))


def dirichlet(key: Any, alpha: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) samples along alpha's last axis (mirrors ``jax.random.dirichlet``)."""
    data, _ = _check_prng_key("dirichlet", key)
    dtype = _float_dtype_checked("dirichlet", dtype)
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    batch = tuple(np.shape(alpha)[:-1])
    if shape is None:
        shape = batch
    else:
        shape = _canonical_shape(shape)
        _check_shape("dirichlet", shape, batch)
    alpha = lax.convert_element_type(alpha, dtype)
    # Gamma in log space: small alpha underflows otherwise.
    log_gamma_samples = _gamma(data, alpha, shape + tuple(np.shape(alpha)[-1:]), dtype,
                               log_space=True)
    # nn.softmax over the last axis.
    x_max = lax.stop_gradient(jnp.max(log_gamma_samples, -1, keepdims=True))
    unnormalized = lax.exp(lax.sub(log_gamma_samples, x_max))
    return unnormalized / jnp.sum(unnormalized, -1, keepdims=True)


def _chisquare(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = lax.convert_element_type(df, dtype)
    two = np.array(2, dtype)
    half_df = lax.div(df, two)
    log_g = _gamma(data, half_df, shape, dtype, log_space=True)
    return lax.mul(lax.exp(log_g), two)


def chisquare(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Chi-square(df) samples, ``2 * Gamma(df / 2)`` (mirrors ``jax.random.chisquare``)."""
    data, _ = _check_prng_key("chisquare", key)
    dtype = _float_dtype_checked("chisquare", dtype)
    shape = _check_broadcast_shapes("chisquare", shape, df)
    _check_all_safe_to_cast("chisquare", dtype, df)
    return _chisquare(data, df, shape, dtype)


def f(key: Any, dfnum: Any, dfden: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """F(dfnum, dfden) samples, a ratio of scaled chi-squares (mirrors ``jax.random.f``)."""
    data, _ = _check_prng_key("f", key)
    dtype = _float_dtype_checked("f", dtype)
    shape = _check_broadcast_shapes("f", shape, dfnum, dfden)
    _check_all_safe_to_cast("f", dtype, dfnum, dfden)
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = _split2(data)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


def t(key: Any, df: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Student's t(df) samples, ``normal * sqrt(df / 2 / Gamma(df / 2))`` (mirrors
    ``jax.random.t``)."""
    data, _ = _check_prng_key("t", key)
    dtype = _float_dtype_checked("t", dtype)
    shape = _check_broadcast_shapes("t", shape, df)
    _check_all_safe_to_cast("t", dtype, df)
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _split2(data)
    n = _normal(key_n, shape, dtype, prng.partitionable())
    half_df = lax.div(df, np.array(2, dtype))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


def _rademacher(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    b = _bernoulli_jit(data, lax.convert_element_type(0.5, dtypes.default_float_dtype()),
                       shape, 'low', prng.partitionable()).astype(dtype)
    return (2 * b - 1).astype(dtype)


def _generalized_normal(data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k_gamma, k_sign = _split2(data)
    inv_p = 1 / jnp.asarray(p)
    g = _gamma(k_gamma, inv_p, shape, dtype)
    r = _rademacher(k_sign, shape, dtype)
    return r * g ** inv_p


def generalized_normal(key: Any, p: float, shape: Shape = (), dtype: Any = None) -> Any:
    """Samples with density proportional to ``exp(-|x|**p)`` (mirrors
    ``jax.random.generalized_normal``)."""
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("generalized_normal", key)
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype)
    _check_shape("generalized_normal", shape)
    return _generalized_normal(data, p, shape, dtype)


def ball(key: Any, d: int, p: float = 2, shape: Shape = (), dtype: Any = None) -> Any:
    """Uniform samples from the unit Lp ball in ``d`` dimensions, of shape ``(*shape, d)``
    (mirrors ``jax.random.ball``)."""
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("ball", key)
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype)
    _check_shape("ball", shape)
    d = lax.canonicalize_shape((d,))[0]
    k1, k2 = _split2(data)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype, prng.partitionable())
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / jnp.asarray(p)))[..., None]


# ----------------------------------------------------------------------------- discrete

def poisson(key: Any, lam: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Poisson(lam) samples (mirrors ``jax.random.poisson``: Knuth's method below rate 10,
    transformed rejection above, in float32)."""
    data, _ = _check_prng_key("poisson", key)
    dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "poisson")
    shape = tuple(np.shape(lam)) if shape is None else _canonical_shape(shape)
    lam = jnp.broadcast_to(lam, shape)
    lam = lax.convert_element_type(lam, np.float32)
    return random_poisson_p.bind(data, lam, dtype=dtype, partitionable=prng.partitionable())


def binomial(key: Any, n: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Binomial(n, p) samples as floats (mirrors ``jax.random.binomial``: inversion below
    mean 10, BTRS above)."""
    data, _ = _check_prng_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = _float_dtype_checked("binomial", dtype)
    if shape is None:
        shape = broadcast_shapes(np.shape(n), np.shape(p))
    else:
        shape = _canonical_shape(shape)
        _check_shape("binomial", shape, np.shape(n), np.shape(p))
    (prob,) = promote_dtypes_inexact(p)
    count = jnp.broadcast_to(lax.convert_element_type(n, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    return random_binomial_p.bind(data, count, prob, dtype=dtype,
                                  partitionable=prng.partitionable())


def multinomial(key: Any, n: Any, p: Any, *, shape: Shape | None = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Multinomial counts over ``p``'s last axis: one binomial per outcome on the remaining
    trials (mirrors ``jax.random.multinomial``; ``unroll`` is accepted and ignored, the
    outcomes being unrolled)."""
    data, _ = _check_prng_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    if shape is None:
        shape = p.shape
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)
    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = jnp.flip(jnp.cumsum(jnp.flip(p, 0), 0), 0)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = _split_jit(data, (ratios.shape[0],), prng.partitionable())
    remainder = n
    counts = []
    for i in range(ratios.shape[0]):
        count = binomial(keys[i], remainder, ratios[i].clip(0, 1), dtype=remainder.dtype)
        remainder = remainder - count
        counts.append(count)
    out = jnp.stack(counts, 0) if counts else jnp.zeros((0, *n.shape), n.dtype)
    return jnp.moveaxis(out, 0, -1).astype(dtype)


# ----------------------------------------------------------------------------- transformed samplers

def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Shape = (),
                         dtype: Any = None) -> Any:
    """Samples of a Maxwell distribution mirrored about ``loc`` (mirrors
    ``jax.random.double_sided_maxwell``, including its result shape ``shape`` +
    the parameters' broadcast shape)."""
    data, _ = _check_prng_key("double_sided_maxwell", key)
    dtype = _float_dtype_checked("double_sided_maxwell", dtype)
    shape = _canonical_shape(shape)
    params_shapes = broadcast_shapes(np.shape(loc), np.shape(scale))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = _split2(data)
    maxwell_rvs = _maxwell(maxwell_key, shape, dtype, prng.partitionable())
    random_sign = _rademacher(rademacher_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


def wald(key: Any, mean: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) samples with the given mean (mirrors ``jax.random.wald``)."""
    data, _ = _check_prng_key("wald", key)
    dtype = _float_dtype_checked("wald", dtype)
    shape = _check_broadcast_shapes("wald", shape, mean)
    _check_all_safe_to_cast("wald", dtype, mean)
    k1, k2 = _split2(data)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal(k1, shape, dtype, prng.partitionable())
    z = _uniform(k2, 0., 1., shape, dtype, prng.partitionable())
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    # XLA:CPU fuses the first product of each sum into a multiply-add.
    sqrt_term = lax.sqrt(_fma(lax.mul(mean, np.array(4, dtype)), y, lax.mul(mean_sq, y_sq)))
    half_mean = lax.div(mean, np.array(2, dtype))
    x = _fma(lax.neg(half_mean), sqrt_term,
             lax.add(mean, lax.div(lax.mul(mean_sq, y), np.array(2, dtype))))
    return lax.select(lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x))


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Shape | None = None,
                        dtype: Any = None, method: str = 'cholesky') -> Any:
    """Multivariate normal samples (mirrors ``jax.random.multivariate_normal``): the
    covariance factored by ``method`` ('cholesky', 'svd' or 'eigh')."""
    data, _ = _check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {'svd', 'eigh', 'cholesky'}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = mean.dtype
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "multivariate_normal")
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float "
                         f"dtype, got {dtype}")
    if shape is not None:
        shape = _canonical_shape(shape)
    if not np.ndim(mean) >= 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{np.ndim(mean)}")
    if not np.ndim(cov) >= 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{np.ndim(cov)}")
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {np.shape(cov)}.")
    if shape is None:
        shape = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == 'svd':
        u, sv, _ = jnp_decompositions.svd(cov)
        factor = u * jnp.sqrt(sv[..., None, :])
    elif method == 'eigh':
        w, v = jnp_linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp_decompositions.cholesky(cov)
    normal_samples = _normal(data, shape + mean.shape[-1:], np.dtype(dtype), prng.partitionable())
    return mean + jnp.matmul(factor, normal_samples[..., None])[..., 0]


def orthogonal(key: Any, n: int, shape: Shape = (), dtype: Any = None, m: int | None = None) -> Any:
    """Random matrices with orthonormal columns or rows, Haar distributed (mirrors
    ``jax.random.orthogonal``): the Q of the QR of a normal sample, its columns signed by
    R's diagonal (Mezzadri 2007); shape ``(*shape, n, m)``."""
    if operator.index(n) < 0 or (m is not None and operator.index(m) < 0):
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    m = n if m is None else m
    shape = _canonical_shape(shape)
    data, _ = _check_prng_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    _check_shape("orthogonal", shape)
    n, m = operator.index(n), operator.index(m)
    z = _normal(data, (*shape, max(n, m), min(n, m)), np.dtype(dtype), prng.partitionable())
    q, r = jnp_decompositions.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return x.mT if n < m else x


# ----------------------------------------------------------------------------- keys

def clone(key: Any) -> Any:
    """The same key (mirrors ``jax.random.clone``: an identity outside key-reuse checking,
    which tinyxla does not have)."""
    return key


def key_dtype(impl_spec: Any = None) -> prng.KeyTy:
    """The key dtype of a PRNG implementation (mirrors ``jax.random.key_dtype``; only
    threefry2x32 exists)."""
    known = (None, 'threefry2x32', prng.threefry_prng_impl, prng.key_dtype_fry)
    if impl_spec not in known:
        raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". '
                         'Did you mean one of: "threefry2x32"?')
    return prng.key_dtype_fry
