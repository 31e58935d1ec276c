"""``tinyxla.scipy.signal`` (``jax.scipy.signal``)."""
from tinyxla._src.scipy.signal_convolution import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d)
