"""``tinyxla.lax.linalg`` (``jax.lax.linalg``): so far the eigendecompositions."""
from tinyxla._src.lax.linalg import (  # noqa: F401
    EighImplementation, EigImplementation, eig, eig_p, eigh, eigh_p, symmetrize)
