"""``tinyxla.scipy.stats.dirichlet`` (``jax.scipy.stats.dirichlet``)."""
from tinyxla._src.scipy.stats.dirichlet import (  # noqa: F401
    logpdf, pdf)
