"""``tinyxla.scipy.stats.betabinom`` (``jax.scipy.stats.betabinom``)."""
from tinyxla._src.scipy.stats.betabinom import (  # noqa: F401
    logpmf, pmf)
