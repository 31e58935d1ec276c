"""``jax.numpy.linalg``'s factorizations: ``cholesky``, ``qr`` (every mode), ``svd``
(also of Hermitian matrices through ``eigh``) and ``svdvals``, over ``lax.linalg``'s
primitives, so that they batch over leading dims and differentiate by those primitives'
rules."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.lax import linalg as lax_linalg
from tinyxla._src.lax import linalg_qr, linalg_svd, sorting
from tinyxla._src.lax.linalg_matrices import H, mT
from tinyxla._src.numpy.indexing import take_along_axis
from tinyxla._src.numpy.promotion import ensure_arraylike, promote_dtypes_inexact


class QRResult(NamedTuple):
    """``jax.numpy.linalg.QRResult``."""
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    """``jax.numpy.linalg.SVDResult``."""
    U: Any
    S: Any
    Vh: Any


@functools.partial(jit, static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """Mirrors ``jax.numpy.linalg.cholesky``: the lower factor L (``upper``: L^H) of each
    Hermitian positive definite matrix of ``a``; NaN where one is not positive definite."""
    a = ensure_arraylike("jnp.linalg.cholesky", a)
    a, = promote_dtypes_inexact(a)
    l = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return H(l) if upper else l


@functools.partial(jit, static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Any:
    """Mirrors ``jax.numpy.linalg.qr``: ``QRResult(Q, R)`` for modes ``'reduced'`` (and
    ``'full'``, its alias) and ``'complete'``, ``R`` alone for ``'r'``, and LAPACK's
    ``(h^T, taus)`` for ``'raw'``."""
    a = ensure_arraylike("jnp.linalg.qr", a)
    a, = promote_dtypes_inexact(a)
    if mode == "raw":
        a, taus = linalg_qr.geqrf(a)
        return QRResult(mT(a), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = linalg_qr.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


def _hermitian_svd(a: Any, compute_uv: bool, subset_by_index: Any) -> Any:
    """SVD of Hermitian matrices from their eigendecomposition (JAX's): singular values
    are |eigenvalues|, sorted descending, with the signs moved into vh."""
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(w)
    if not compute_uv:
        return lax.rev(sorting.sort(s, dimension=s.ndim - 1), (s.ndim - 1,))
    sign = lax.sign(w)
    idxs = lax.broadcasted_iota(np.int32, s.shape, s.ndim - 1)
    s, idxs, sign = sorting.sort((s, idxs, sign), dimension=s.ndim - 1, num_keys=1)
    s = lax.rev(s, (s.ndim - 1,))
    idxs = lax.rev(idxs, (s.ndim - 1,))
    sign = lax.rev(sign, (s.ndim - 1,))
    u = take_along_axis(v, idxs[..., None, :], axis=-1)
    vh = H(u * sign[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)


@functools.partial(jit, static_argnames=("full_matrices", "compute_uv", "hermitian",
                                         "subset_by_index"))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """Mirrors ``jax.numpy.linalg.svd``: ``SVDResult(U, S, Vh)`` with ``a = U diag(S) Vh``
    (S descending), or S alone without ``compute_uv``; ``hermitian`` matrices go through
    ``eigh``."""
    a = ensure_arraylike("jnp.linalg.svd", a)
    a, = promote_dtypes_inexact(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        s, u, vh = linalg_svd.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return linalg_svd.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def svdvals(x: Any, /) -> Any:
    """Mirrors ``jax.numpy.linalg.svdvals``: the singular values, descending."""
    x = ensure_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)

