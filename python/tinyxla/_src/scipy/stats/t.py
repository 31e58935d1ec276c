"""``jax.scipy.stats.t``: Student's t distribution (``logpdf`` and ``pdf``, as JAX has)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.t.logpdf``."""
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    half_df_plus_half = half_df + 0.5
    normalizer = (lax.lgamma(half_df) + lax.log(scale * scale * np.pi * df) / 2
                  - lax.lgamma(half_df_plus_half))
    return -(normalizer + half_df_plus_half * lax.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Mirrors ``jax.scipy.stats.t.pdf``."""
    return lax.exp(logpdf(x, df, loc, scale))
