"""``tinyxla.scipy.stats.gamma`` (``jax.scipy.stats.gamma``)."""
from tinyxla._src.scipy.stats.gamma import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
