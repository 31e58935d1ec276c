"""``tinyxla.scipy`` (``jax.scipy``): ``linalg``, ``signal``, ``special`` and ``stats``."""
from tinyxla.scipy import linalg, signal, special, stats  # noqa: F401
