"""``jax.scipy.stats.geom``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import xlog1py


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.geom.logpmf``: ``(k - 1) log(1 - p) + log p`` for
    k - loc >= 1, -inf below."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    return jnp.where(x <= 0, -np.inf, xlog1py(x - 1, -p) + lax.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """Mirrors ``jax.scipy.stats.geom.pmf``."""
    return jnp.exp(logpmf(k, p, loc))
