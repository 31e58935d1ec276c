"""``tinyxla.scipy.stats.truncnorm`` (``jax.scipy.stats.truncnorm``)."""
from tinyxla._src.scipy.stats.truncnorm import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, sf)
