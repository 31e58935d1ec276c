"""``tinyxla.scipy.stats.t`` (``jax.scipy.stats.t``)."""
from tinyxla._src.scipy.stats.t import (  # noqa: F401
    logpdf, pdf)
