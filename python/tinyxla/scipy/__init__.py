"""``tinyxla.scipy`` (``jax.scipy``): ``signal``, ``special`` and ``stats``."""
from tinyxla.scipy import signal, special, stats  # noqa: F401
