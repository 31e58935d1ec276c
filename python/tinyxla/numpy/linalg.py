"""``tinyxla.numpy.linalg`` (``jax.numpy.linalg``): so far ``norm`` and ``vector_norm``."""
from tinyxla._src.numpy.linalg import norm, vector_norm  # noqa: F401
