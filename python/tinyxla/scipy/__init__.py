"""``tinyxla.scipy`` (``jax.scipy``): ``linalg``, ``special`` and ``stats``."""
from tinyxla.scipy import linalg, special, stats  # noqa: F401
