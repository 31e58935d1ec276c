"""``tinyxla.scipy.stats.beta`` (``jax.scipy.stats.beta``)."""
from tinyxla._src.scipy.stats.beta import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
