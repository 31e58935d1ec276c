"""``tinyxla.scipy`` (``jax.scipy``): ``special`` and ``stats``."""
from tinyxla.scipy import special, stats  # noqa: F401
