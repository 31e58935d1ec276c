"""``tinyxla.scipy.stats.uniform`` (``jax.scipy.stats.uniform``)."""
from tinyxla._src.scipy.stats.uniform import (  # noqa: F401
    cdf, logpdf, pdf, ppf)
