"""``tinyxla.scipy.stats.logistic`` (``jax.scipy.stats.logistic``)."""
from tinyxla._src.scipy.stats.logistic import (  # noqa: F401
    cdf, isf, logpdf, pdf, ppf, sf)
