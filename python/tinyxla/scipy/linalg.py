"""``tinyxla.scipy.linalg`` (``jax.scipy.linalg``)."""
from tinyxla._src.scipy.linalg import (  # noqa: F401
    cho_factor, cho_solve, cholesky, det, eigh, hessenberg, inv, lu, lu_factor,
    lu_solve, polar, qr, schur, solve, solve_triangular, svd)
from tinyxla._src.scipy.eigh_tridiagonal import eigh_tridiagonal  # noqa: F401
from tinyxla._src.scipy.matrix_functions import (  # noqa: F401
    expm, expm_frechet, funm, rsf2csf, sqrtm)
from tinyxla._src.scipy.special_matrices import block_diag, toeplitz  # noqa: F401
