"""``tinyxla.scipy.stats.geom`` (``jax.scipy.stats.geom``)."""
from tinyxla._src.scipy.stats.geom import (  # noqa: F401
    logpmf, pmf)
