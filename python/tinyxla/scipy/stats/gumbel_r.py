"""``tinyxla.scipy.stats.gumbel_r`` (``jax.scipy.stats.gumbel_r``)."""
from tinyxla._src.scipy.stats.gumbel_r import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
