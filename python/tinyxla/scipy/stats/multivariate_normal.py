"""``tinyxla.scipy.stats.multivariate_normal`` (``jax.scipy.stats.multivariate_normal``)."""
from tinyxla._src.scipy.stats.multivariate_normal import (  # noqa: F401
    logpdf, pdf)
