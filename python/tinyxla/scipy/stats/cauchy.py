"""``tinyxla.scipy.stats.cauchy`` (``jax.scipy.stats.cauchy``)."""
from tinyxla._src.scipy.stats.cauchy import (  # noqa: F401
    cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf)
