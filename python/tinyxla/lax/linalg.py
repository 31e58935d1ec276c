"""``tinyxla.lax.linalg`` (``jax.lax.linalg``): so far the eigendecompositions and the
Cholesky factorization."""
from tinyxla._src.lax.linalg import (  # noqa: F401
    EighImplementation, EigImplementation, cholesky, cholesky_p, eig, eig_p, eigh, eigh_p,
    symmetrize)
