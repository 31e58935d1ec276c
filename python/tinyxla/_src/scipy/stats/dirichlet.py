"""``jax.scipy.stats.dirichlet``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_dtypes_inexact
from tinyxla._src.scipy.special import xlogy


def _is_simplex(x: Any) -> Any:
    return jnp.all(x > 0, axis=0) & (abs(jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Any:
    """Mirrors ``jax.scipy.stats.dirichlet.logpdf``: ``x`` holds the K (or K - 1, the last
    being 1 - their sum) coordinates along axis 0; -inf off the simplex."""
    x, alpha = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    normalize_term = jnp.sum(lax.lgamma(alpha)) - lax.lgamma(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
    log_probs = jnp.sum(xlogy(alpha - 1, x), axis=0) - normalize_term
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    """Mirrors ``jax.scipy.stats.dirichlet.pdf``."""
    return lax.exp(logpdf(x, alpha))
