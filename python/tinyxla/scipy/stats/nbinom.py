"""``tinyxla.scipy.stats.nbinom`` (``jax.scipy.stats.nbinom``)."""
from tinyxla._src.scipy.stats.nbinom import (  # noqa: F401
    logpmf, pmf)
