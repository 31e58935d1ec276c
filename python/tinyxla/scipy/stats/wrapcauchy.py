"""``tinyxla.scipy.stats.wrapcauchy`` (``jax.scipy.stats.wrapcauchy``)."""
from tinyxla._src.scipy.stats.wrapcauchy import (  # noqa: F401
    logpdf, pdf)
