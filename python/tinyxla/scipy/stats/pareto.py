"""``tinyxla.scipy.stats.pareto`` (``jax.scipy.stats.pareto``)."""
from tinyxla._src.scipy.stats.pareto import (  # noqa: F401
    cdf, logcdf, logpdf, logsf, pdf, ppf, sf)
