"""``jax.scipy.stats.nbinom``: the negative binomial distribution."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlogy


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.nbinom.logpmf``: ``log C(y + n - 1, y) + n log p + y
    log(1 - p)`` at y = k - loc, -inf below ``loc``."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = lax.lgamma(y + n) - lax.lgamma(n) - lax.lgamma(y + 1)
    log_probs = comb_term + xlogy(n, p) + xlogy(y, 1 - p)
    return jnp.where(k < loc, -np.inf, log_probs)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.nbinom.pmf``."""
    return lax.exp(logpmf(k, n, p, loc))
