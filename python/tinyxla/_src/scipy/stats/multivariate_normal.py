"""``jax.scipy.stats.multivariate_normal``. JAX factors the covariance by Cholesky; there
is no Cholesky here yet, so the covariance's eigendecomposition (``jnp.linalg.eigh``)
gives the quadratic form and the log-determinant (same values for a symmetric positive
definite covariance, to rounding)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_dtypes_inexact


def _whitened_quadratic(y: Any, cov: Any) -> tuple[Any, Any]:
    """``y^T cov^-1 y`` over the last axis of ``y`` and ``log det cov`` (batched)."""
    w, v = jnp.linalg.eigh(cov)
    # v^T y for each (batched) y: sum over the rows of v.
    z = jnp.sum(v * y[..., :, None], axis=-2)
    return jnp.sum(z * z / w, axis=-1), jnp.sum(jnp.log(w), axis=-1)


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """Mirrors ``jax.scipy.stats.multivariate_normal.logpdf`` (scalar, isotropic or full
    covariance, batched over leading axes)."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(mean), jnp.asarray(cov))
    log_2pi = float(np.log(2 * np.pi))
    if not mean.shape:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (log_2pi + jnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not np.shape(cov):
        return -1 / 2 * jnp.sum(y * y, axis=-1) / cov - n / 2 * (log_2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    quadratic, log_det = _whitened_quadratic(y, cov)
    return -1 / 2 * quadratic - n / 2 * log_2pi - log_det / 2


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """Mirrors ``jax.scipy.stats.multivariate_normal.pdf``."""
    return lax.exp(logpdf(x, mean, cov))
