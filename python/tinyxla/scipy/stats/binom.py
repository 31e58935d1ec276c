"""``tinyxla.scipy.stats.binom`` (``jax.scipy.stats.binom``)."""
from tinyxla._src.scipy.stats.binom import (  # noqa: F401
    logpmf, pmf)
