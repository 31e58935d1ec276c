"""``tinyxla.scipy.stats`` (``jax.scipy.stats``): so far the ``norm`` distribution."""
from tinyxla.scipy.stats import norm  # noqa: F401
