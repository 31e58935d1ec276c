"""``tinyxla.lax.linalg`` (``jax.lax.linalg``): so far the eigendecompositions."""
from tinyxla._src.lax.linalg import eig, eig_p, eigh, eigh_p, symmetrize  # noqa: F401
