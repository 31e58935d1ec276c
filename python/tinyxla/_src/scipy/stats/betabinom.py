"""``jax.scipy.stats.betabinom``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.gamma_functions import betaln


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.betabinom.logpmf``: ``log C(n, y) + log B(y + a, n - y + b)
    - log B(a, b)`` at y = floor(k) - loc; -inf off 0..n, NaN for n < 0 or a, b <= 0."""
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.floor(k) - loc
    combiln = -(lax.log1p(n) + betaln(n - y + 1, y + 1))
    log_probs = combiln + betaln(y + a, n - y + b) - betaln(a, b)
    log_probs = jnp.where((y == 0) & (n == 0), lax.full_like(log_probs, 0), log_probs)
    log_probs = jnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, log_probs)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.betabinom.pmf``."""
    return lax.exp(logpmf(k, n, a, b, loc))
