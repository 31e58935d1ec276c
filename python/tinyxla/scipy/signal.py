"""``tinyxla.scipy.signal`` (``jax.scipy.signal``)."""
from tinyxla._src.scipy.fftconvolve import fftconvolve  # noqa: F401
