"""``tinyxla.scipy.stats.bernoulli`` (``jax.scipy.stats.bernoulli``)."""
from tinyxla._src.scipy.stats.bernoulli import (  # noqa: F401
    cdf, logpmf, pmf, ppf)
