"""``tinyxla.lax.linalg`` (``jax.lax.linalg``): the decompositions and solves on LAPACK."""
from tinyxla._src.lax.linalg import (  # noqa: F401
    EighImplementation, EigImplementation, cholesky, cholesky_p, eig, eig_p, eigh, eigh_p,
    symmetrize)
from tinyxla._src.lax.linalg_condensed import (  # noqa: F401
    hessenberg, hessenberg_p, schur, schur_p, tridiagonal, tridiagonal_p)
from tinyxla._src.lax.linalg_qdwh import qdwh  # noqa: F401
from tinyxla._src.lax.linalg_qr import (  # noqa: F401
    geqp3, geqp3_p, geqrf, geqrf_p, householder_product, householder_product_p, qr, qr_p)
from tinyxla._src.lax.linalg_solve import (  # noqa: F401
    lu, lu_p, lu_pivots_to_permutation, lu_pivots_to_permutation_p, triangular_solve,
    triangular_solve_p, tridiagonal_solve, tridiagonal_solve_p)
from tinyxla._src.lax.linalg_svd import SvdAlgorithm, svd, svd_p  # noqa: F401
