"""``tinyxla.scipy.stats.norm`` (``jax.scipy.stats.norm``)."""
from tinyxla._src.scipy.stats.norm import (  # noqa: F401
    cdf, isf, logcdf, logpdf, logsf, pdf, ppf, sf)
