"""``jax.scipy.stats.poisson``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.gamma_functions import gammaincc
from tinyxla._src.scipy.special import entr, xlogy


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.poisson.logpmf``: ``x log mu - lgamma(x + 1) - mu`` at x =
    k - loc; -inf below ``loc`` or at non-integer ``k``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - lax.lgamma(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.poisson.pmf``."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.poisson.cdf``: ``gammaincc(floor(1 + x), mu)``, 0 below
    ``loc``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    return jnp.where(x < 0, lax.full_like(x, 0), gammaincc(jnp.floor(1 + x), mu))


def _entropy_by_sum(mu: Any, max_k: int, upper: Any) -> Any:
    """-sum_k p_k log p_k over k < min(max_k, upper(mu))."""
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    return jnp.sum(entr(jnp.where(k < jnp.ceil(upper)[None, :], probs, 0.)), axis=0)


def entropy(mu: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.poisson.entropy``: the sum over the pmf for mu < 100 (35
    terms below 10, 250 below 100), the asymptotic ``log(2πe mu)/2 - 1/(12 mu)`` above."""
    mu, loc = promote_args_inexact("poisson.entropy", mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    safe = jnp.where(flat > 0, flat, 1.)
    large = 0.5 * jnp.log(2 * np.pi * np.e * safe) - 1.0 / (12 * safe)
    result = jnp.where(flat == 0, 0., jnp.where(
        flat < 10, _entropy_by_sum(flat, 35, flat + 20),
        jnp.where(flat < 100, _entropy_by_sum(flat, 250, flat + 10 * jnp.sqrt(safe) + 20),
                  large)))
    return jnp.broadcast_to(result.reshape(mu.shape), shape)
