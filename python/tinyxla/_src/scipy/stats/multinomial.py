"""``jax.scipy.stats.multinomial``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact, promote_args_numeric
from tinyxla._src.scipy.special import xlogy


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """Mirrors ``jax.scipy.stats.multinomial.logpmf``: counts ``x`` (integers, last axis)
    of ``n`` trials; -inf where the counts do not sum to ``n``."""
    p, = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = lax.lgamma(n + 1) + jnp.sum(xlogy(x, p) - lax.lgamma(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """Mirrors ``jax.scipy.stats.multinomial.pmf``."""
    return lax.exp(logpmf(x, n, p))
