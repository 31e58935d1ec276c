"""``tinyxla.numpy.linalg`` (``jax.numpy.linalg``): norms and eigendecompositions."""
from tinyxla._src.numpy.linalg import (  # noqa: F401
    EighResult, EigResult, eig, eigh, eigvals, eigvalsh, norm, vector_norm)
