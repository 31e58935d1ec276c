"""``tinyxla.scipy.stats.multinomial`` (``jax.scipy.stats.multinomial``)."""
from tinyxla._src.scipy.stats.multinomial import (  # noqa: F401
    logpmf, pmf)
