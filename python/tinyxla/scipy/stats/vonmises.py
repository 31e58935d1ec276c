"""``tinyxla.scipy.stats.vonmises`` (``jax.scipy.stats.vonmises``)."""
from tinyxla._src.scipy.stats.vonmises import (  # noqa: F401
    logpdf, pdf)
