"""``tinyxla.scipy.stats.expon`` (``jax.scipy.stats.expon``)."""
from tinyxla._src.scipy.stats.expon import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
