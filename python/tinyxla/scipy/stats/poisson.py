"""``tinyxla.scipy.stats.poisson`` (``jax.scipy.stats.poisson``)."""
from tinyxla._src.scipy.stats.poisson import (  # noqa: F401
    cdf, entropy, logpmf, pmf)
