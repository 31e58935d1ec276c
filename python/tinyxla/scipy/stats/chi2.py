"""``tinyxla.scipy.stats.chi2`` (``jax.scipy.stats.chi2``)."""
from tinyxla._src.scipy.stats.chi2 import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
