"""``jax.scipy.stats.vonmises``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, kappa: Any) -> Any:
    """Mirrors ``jax.scipy.stats.vonmises.logpdf``: ``κ (cos x - 1) - log(2π i0e(κ))``; NaN
    for κ <= 0."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    value = kappa * (lax.cos(x) - 1) - lax.log(2 * np.pi * lax_special.bessel_i0e(kappa))
    return jnp.where(kappa > 0, value, np.nan)


def pdf(x: Any, kappa: Any) -> Any:
    """Mirrors ``jax.scipy.stats.vonmises.pdf``."""
    return lax.exp(logpdf(x, kappa))
