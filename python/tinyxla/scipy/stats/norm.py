"""``tinyxla.scipy.stats.norm`` (``jax.scipy.stats.norm``)."""
from tinyxla._src.scipy.stats.norm import cdf, logpdf, pdf, ppf, sf  # noqa: F401
