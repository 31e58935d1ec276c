"""``jax.lax.linalg.svd``: the singular value decomposition (LAPACK gesdd, one C++ op) with
JAX's derivative rule, which assumes distinct nonzero singular values: where two are
equal the vector tangents are not finite (the degenerate case JAX documents), and a zero
singular value's reciprocal is taken as zero."""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from tinyxla._src.core import ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.lax.lax import (
    _FLOAT_COMPLEX, _check_naryop_dtypes, add, convert_element_type, div, eq, expand_dims,
    full_like, mul, real, sub)
from tinyxla._src.lax.linalg_matrices import H, diagonal, eye_like, matmul, mT, real_dtype
from tinyxla._src.lax.linalg_primitive import linalg_primitive, split_batch


class SvdAlgorithm(enum.Enum):
    """``jax.lax.linalg.SvdAlgorithm``: on CPU, DEFAULT and DIVIDE_AND_CONQUER run gesdd
    and QR gesvd in JAX; here all three run gesdd."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _svd_abstract_eval(x: Any, *, full_matrices: bool, compute_uv: bool,
                       subset_by_index: Any, algorithm: Any) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("svd", (2,), (x,))
    _check_naryop_dtypes("svd", [_FLOAT_COMPLEX], [x])
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    out = [ShapedArray((*batch, rank), real_dtype(x.dtype))]
    if compute_uv:
        out += [ShapedArray((*batch, m, m if full_matrices else rank), x.dtype),
                ShapedArray((*batch, n if full_matrices else rank, n), x.dtype)]
    return out


def _svd_attrs(*, full_matrices: bool, compute_uv: bool, subset_by_index: Any,
               algorithm: Any) -> dict[str, Any]:
    return {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}


svd_p = linalg_primitive("svd", _svd_abstract_eval, _svd_attrs, multiple_results=True)


def _check_svd_params(x: Any, subset_by_index: Any, algorithm: Any) -> None:
    if np.ndim(x) < 2:
        return  # the abstract eval raises JAX's error
    m, n = np.shape(x)[-2:]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError(
            "The SVD Jacobi and Polar algorithms are not implemented on CPU.")


def _recip_or_zero(x: Any) -> Any:
    """1 / x where x != 0, else 0."""
    zero = convert_element_type(eq(x, full_like(x, 0)), x.dtype)
    return sub(div(full_like(x, 1), add(x, zero)), zero)


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
             compute_uv: bool, subset_by_index: Any,
             algorithm: Any) -> tuple[list[Any], list[Any]]:
    """JAX's rule (``_svd_jvp_rule``)."""
    (a,), (da,) = primals, tangents
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True,
                          subset_by_index=subset_by_index, algorithm=algorithm)
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices")
    da = ad.instantiate_zeros(da)
    nd = len(a.shape)
    ut, v = H(u), H(vt)
    s_row = expand_dims(s, (nd - 2,))  # [..., 1, k]
    ds_mat = matmul(matmul(ut, da), v)
    ds = diagonal(real(ds_mat) if ds_mat.dtype != s.dtype else ds_mat)
    if not compute_uv:
        return [s], [ds]
    s_col = mT(s_row)
    s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))
    eye = eye_like(s_diffs)
    f = convert_element_type(sub(div(full_like(s_diffs, 1), add(s_diffs, eye)), eye), a.dtype)
    s_row_a = convert_element_type(s_row, a.dtype)
    dss = mul(s_row_a, ds_mat)
    sds = mul(mT(s_row_a), ds_mat)
    s_inv_mat = convert_element_type(mul(eye, _recip_or_zero(s_row)), a.dtype)
    half = full_like(ds_mat, 0.5)
    dudv_diag = mul(mul(half, sub(ds_mat, H(ds_mat))), s_inv_mat)
    du = matmul(u, add(mul(f, add(dss, H(dss))), dudv_diag))
    dv = matmul(v, mul(f, add(sds, H(sds))))
    if m > n:
        dav = matmul(da, v)
        du = add(du, div(sub(dav, matmul(u, matmul(ut, dav))), s_row_a))
    if n > m:
        dahu = matmul(H(da), u)
        dv = add(dv, div(sub(dahu, matmul(v, matmul(vt, dahu))), s_row_a))
    return [s, u, vt], [ds, du, H(dv)]


ad.primitive_jvps[svd_p] = _svd_jvp


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None) -> Any:
    """``jax.lax.linalg.svd``: ``(s, u, vh)`` with ``x = u diag(s) vh`` (or only ``s``
    when not ``compute_uv``), singular values descending; u [m, m] and vh [n, n] with
    ``full_matrices``, else [m, k] and [k, n]. A matrix LAPACK cannot decompose (or
    holding inf/NaN) gets NaN. ``subset_by_index`` must cover all values (as JAX on
    CPU); every algorithm runs gesdd."""
    _check_svd_params(x, subset_by_index, algorithm)
    result = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                        subset_by_index=subset_by_index, algorithm=algorithm)
    if compute_uv:
        s, u, vh = result
        return s, u, vh
    return result[0]
