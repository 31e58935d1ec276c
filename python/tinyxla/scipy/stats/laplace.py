"""``tinyxla.scipy.stats.laplace`` (``jax.scipy.stats.laplace``)."""
from tinyxla._src.scipy.stats.laplace import (  # noqa: F401
    cdf, logpdf, pdf)
