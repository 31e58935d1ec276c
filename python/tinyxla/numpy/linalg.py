"""``tinyxla.numpy.linalg`` (``jax.numpy.linalg``): all 31 of JAX's functions."""
from tinyxla._src.numpy.linalg import (  # noqa: F401
    EighResult, EigResult, eig, eigh, eigvals, eigvalsh, norm, vector_norm)
from tinyxla._src.numpy.linalg_array_api import (  # noqa: F401
    cross, diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, outer, tensordot,
    trace, vecdot)
from tinyxla._src.numpy.linalg_decompositions import (  # noqa: F401
    QRResult, SVDResult, cholesky, qr, svd, svdvals)
from tinyxla._src.numpy.linalg_solvers import (  # noqa: F401
    SlogdetResult, cond, det, inv, lstsq, matrix_power, matrix_rank, pinv, slogdet, solve,
    tensorinv, tensorsolve)
