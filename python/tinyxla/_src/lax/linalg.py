"""The eigendecompositions and Cholesky factorization of ``jax.lax.linalg``: ``eig`` (general matrices,
LAPACK geev), ``eigh`` (Hermitian matrices, LAPACK syevd/heevd) and ``cholesky``
(LAPACK potrf), on batches of square matrices ``[..., n, n]``.

Mirrors ``jax._src.lax.linalg``. Each runs as one C++ kernel (eagerly and as an
``eig``/``eigh`` graph node), one matrix per work item of the thread pool. A matrix whose
decomposition fails (or, for ``eig``, holds inf or NaN) gets NaN results, as JAX on CPU.
Eigenvectors are the columns of the returned matrices, each of unit 2-norm (LAPACK's
normalization, which JAX returns as is).
"""
from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.lax import (
    _FLOAT_COMPLEX, _check_naryop_dtypes, _operand, _reject, _result, add, argmax, abs,
    broadcasted_iota, complex, conj, convert_element_type, div, eq, expand_dims, full_like,
    imag, integer_pow, mul, neg, real, reduce_sum, sub)
from tinyxla._src.lax.linalg_matrices import (
    H, check_rank, complex_dtype, diagonal, eye_like, matmul, real_dtype, symmetrize, tril)
from tinyxla._src.lax.linalg_solve import triangular_solve


class EigImplementation(enum.Enum):
    """``jax.lax.linalg.EigImplementation``; only ``LAPACK`` runs here (CPU)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """``jax.lax.linalg.EighImplementation``; only ``QR`` (LAPACK syevd) runs here."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


# ---- eig ----

_EIGVEC_DERIVS_MSG = (
    "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
    "input that JAX cannot check (see the enable_eigvec_derivs argument to "
    "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt in. "
    "See https://github.com/jax-ml/jax/issues/2748 for discussion.")


def _eig_abstract_eval(x: Any, *, compute_left_eigenvectors: bool,
                       compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
                       implementation: Any) -> list[ShapedArray]:
    check_rank("eig", x)
    _check_naryop_dtypes("eig", [_FLOAT_COMPLEX], [x])
    shape = tuple(x.shape)
    if shape[-1] != shape[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {shape[-2:]}.")
    dtype = complex_dtype(x.dtype)
    count = 1 + bool(compute_left_eigenvectors) + bool(compute_right_eigenvectors)
    return [ShapedArray(shape[:-1], dtype)] + [ShapedArray(shape, dtype)] * (count - 1)


def _check_eig_implementation(implementation: Any) -> None:
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")


def _eig_impl(x: Any, **params: Any) -> list[Array]:
    x = x if type(x) is Array else _operand(eig_p, 0, x)
    avals = _eig_abstract_eval(x.aval, **params)
    _check_eig_implementation(params["implementation"])
    try:
        handles = _core.eig(x._h, bool(params["compute_left_eigenvectors"]),
                            bool(params["compute_right_eigenvectors"]))
    except (TypeError, ValueError, IndexError) as e:
        _reject(eig_p, (x,), params, e)
        raise
    return [_result(h, False, a.dtype, (x,)) for h, a in zip(handles, avals)]


eig_p = Primitive("eig", multiple_results=True)
eig_p.def_abstract_eval(_eig_abstract_eval)
eig_p.def_impl(_eig_impl)


def _eig_lowering(ctx: Any, x: Any, *, compute_left_eigenvectors: bool,
                  compute_right_eigenvectors: bool, enable_eigvec_derivs: bool,
                  implementation: Any) -> list[Any]:
    _check_eig_implementation(implementation)
    return ctx.builder.eig(x, bool(compute_left_eigenvectors), bool(compute_right_eigenvectors))


register_lowering(eig_p, _eig_lowering)


def _eig_batch_rule(vals: Sequence[Any], dims: Sequence[int | None],
                    **params: Any) -> tuple[list[Any], list[int]]:
    (x,), (d,) = vals, dims
    outs = eig_p.bind(batching.moveaxis(x, d, 0), **params)
    return outs, [0] * len(outs)


batching.primitive_batchers[eig_p] = _eig_batch_rule


def _inverse_rows(v: Any, u: Any) -> Any:
    """``v^-1`` for a diagonalizable matrix whose right eigenvectors are v's columns and
    left ones u's: row j of the inverse is ``u_j^H / (u_j^H v_j)`` (left and right
    eigenvectors of distinct eigenvalues are orthogonal). Needs no solve."""
    scale = reduce_sum(mul(conj(u), v), (len(v.shape) - 2,))  # u_j^H v_j per column
    return div(H(u), expand_dims(scale, (len(v.shape) - 1,)))


def _eig_vec_jvp(w: Any, v: Any, v_inv: Any, da: Any) -> tuple[Any, Any]:
    """Tangents of eigenvalues and of geev-normalized eigenvectors (JAX's rule): with
    ``P = V^-1 dA V``, ``dw = diag(P)`` and ``dV = V (F * P) + V diag(c)``, where
    ``F[i, j] = 1 / (w_j - w_i)`` off the diagonal and ``c`` keeps each column of unit
    norm with its largest-magnitude component real."""
    nd = len(v.shape)
    eye = eye_like(v)
    p = matmul(matmul(v_inv, da), v)
    dw = diagonal(p)
    diff = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))  # w_j - w_i
    fmat = sub(integer_pow(add(eye, diff), -1), eye)
    du = matmul(v, mul(fmat, p))
    # The eigenvalue equation fixes dv_j = du_j + c_j v_j up to c_j; LAPACK's two real
    # normalization constraints give c_j = -Re(v_j^H du_j) - i Im(du_kj) / v_kj, k the
    # row of v_j's largest magnitude.
    k = argmax(abs(v), nd - 2, np.int32)
    mask = convert_element_type(
        eq(broadcasted_iota(np.int32, v.shape, nd - 2), expand_dims(k, (nd - 2,))), v.dtype)
    re = neg(real(reduce_sum(mul(conj(v), du), (nd - 2,))))
    im = neg(div(imag(reduce_sum(mul(mask, du), (nd - 2,))),
                 real(reduce_sum(mul(mask, v), (nd - 2,)))))
    c = complex(re, im)
    return dw, add(du, mul(v, expand_dims(c, (nd - 2,))))


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
             compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
             enable_eigvec_derivs: bool, implementation: Any) -> tuple[list[Any], list[Any]]:
    """JAX's rule. Differs from JAX in how ``V^-1`` is applied: from the left
    eigenvectors (one geev computing both sides) rather than an LU solve with V, so the
    jvp's eig shows ``compute_left_eigenvectors=True``."""
    if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
        raise NotImplementedError(_EIGVEC_DERIVS_MSG)
    (a,), (da,) = primals, tangents
    w, vl, vr = eig_p.bind(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
                           enable_eigvec_derivs=enable_eigvec_derivs,
                           implementation=implementation)
    da = convert_element_type(ad.instantiate_zeros(da), vr.dtype)
    nd = len(vr.shape)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        # dw_j = (V^-1 dA V)_jj = u_j^H dA v_j / (u_j^H v_j).
        num = reduce_sum(mul(conj(vl), matmul(da, vr)), (nd - 2,))
        den = reduce_sum(mul(conj(vl), vr), (nd - 2,))
        return [w], [div(num, den)]
    dw, dvr = _eig_vec_jvp(w, vr, _inverse_rows(vr, vl), da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        # vl holds the right eigenvectors of A^H (eigenvalues conj(w)); vr its left ones.
        _, dvl = _eig_vec_jvp(conj(w), vl, _inverse_rows(vl, vr), H(da))
        primal_out.append(vl)
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


ad.primitive_jvps[eig_p] = _eig_jvp


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: bool | None = None) -> list[Any]:
    """``jax.lax.linalg.eig``: ``[w, vl, vr]`` (the eigenvector matrices only when
    requested) of each matrix of ``x`` ``[..., n, n]``; results are complex. Only the
    LAPACK implementation exists; ``use_magma`` is accepted and ignored (GPU only in
    JAX)."""
    del use_magma
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors),
                      enable_eigvec_derivs=bool(enable_eigvec_derivs),
                      implementation=implementation)


# ---- eigh ----

def _eigh_abstract_eval(x: Any, *, lower: bool, sort_eigenvalues: bool,
                        subset_by_index: Any, algorithm: Any) -> list[ShapedArray]:
    check_rank("eigh", x)
    _check_naryop_dtypes("eigh", [_FLOAT_COMPLEX], [x])
    shape = tuple(x.shape)
    if shape[-1] != shape[-2]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {shape[-2:]}")
    n = shape[-1]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return [ShapedArray((*shape[:-1], d), x.dtype),
            ShapedArray((*shape[:-2], d), real_dtype(x.dtype))]


def _check_eigh_params(x: Any, subset_by_index: Any, algorithm: Any) -> None:
    n = x.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")


def _eigh_impl(x: Any, **params: Any) -> list[Array]:
    x = x if type(x) is Array else _operand(eigh_p, 0, x)
    avals = _eigh_abstract_eval(x.aval, **params)
    _check_eigh_params(x, params["subset_by_index"], params["algorithm"])
    try:
        handles = _core.eigh(x._h, bool(params["lower"]))
    except (TypeError, ValueError, IndexError) as e:
        _reject(eigh_p, (x,), params, e)
        raise
    return [_result(h, False, a.dtype, (x,)) for h, a in zip(handles, avals)]


def _eigh_lowering(ctx: Any, x: Any, *, lower: bool, sort_eigenvalues: bool,
                   subset_by_index: Any, algorithm: Any) -> list[Any]:
    _check_eigh_params(ctx.avals_in[0], subset_by_index, algorithm)
    return ctx.builder.eigh(x, bool(lower))


eigh_p = Primitive("eigh", multiple_results=True)
eigh_p.def_abstract_eval(_eigh_abstract_eval)
eigh_p.def_impl(_eigh_impl)
register_lowering(eigh_p, _eigh_lowering)


def _eigh_batch_rule(vals: Sequence[Any], dims: Sequence[int | None],
                     **params: Any) -> tuple[list[Any], list[int]]:
    (x,), (d,) = vals, dims
    return eigh_p.bind(batching.moveaxis(x, d, 0), **params), [0, 0]


batching.primitive_batchers[eigh_p] = _eigh_batch_rule


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool,
              sort_eigenvalues: bool, subset_by_index: Any,
              algorithm: Any) -> tuple[list[Any], list[Any]]:
    """JAX's rule (distinct eigenvalues): with ``P = V^H dA V``, ``dw = Re diag(P)`` and
    ``dV = V (F * P)``, ``F[i, j] = 1 / (w_j - w_i)`` off the diagonal."""
    (a,), (a_dot,) = primals, tangents
    n = a.shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                            subset_by_index=subset_by_index, algorithm=algorithm)
    a_dot = ad.instantiate_zeros(a_dot)
    nd = len(a.shape)
    w = convert_element_type(w_real, a.dtype)
    eye = eye_like(v)
    diff = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))  # w_j - w_i
    fmat = sub(integer_pow(add(eye, diff), -1), eye)
    p = matmul(matmul(H(v), a_dot), v)
    dv = matmul(v, mul(fmat, p))
    dw = diagonal(real(p) if dtypes.issubdtype(p.dtype, np.complexfloating) else p)
    return [v, w_real], [dv, dw]


ad.primitive_jvps[eigh_p] = _eigh_jvp


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """``jax.lax.linalg.eigh``: ``(v, w)``, the eigenvectors (columns) and ascending real
    eigenvalues of each Hermitian matrix of ``x``. Like JAX on CPU, eigenvalues are always
    sorted and ``subset_by_index`` must cover all of them."""
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                       subset_by_index=subset_by_index, algorithm=implementation)
    return v, w


# ---- cholesky ----

def _cholesky_abstract_eval(x: Any) -> ShapedArray:
    check_rank("cholesky", x)
    _check_naryop_dtypes("cholesky", [_FLOAT_COMPLEX], [x])
    shape = tuple(x.shape)
    if shape[-1] != shape[-2]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {shape[-2:]}.")
    return ShapedArray(shape, x.dtype)


_CHOLESKY = _core.make_op("cholesky")


def _cholesky_impl(x: Any) -> Array:
    x = x if type(x) is Array else _operand(cholesky_p, 0, x)
    aval = _cholesky_abstract_eval(x.aval)
    try:
        return _result(_CHOLESKY(x._h), False, aval.dtype, (x,))
    except (TypeError, ValueError, IndexError) as e:
        _reject(cholesky_p, (x,), {}, e)
        raise


def _cholesky_lowering(ctx: Any, x: Any) -> Any:
    return ctx.builder.op("cholesky", {}, [x])


cholesky_p = Primitive("cholesky")
cholesky_p.def_abstract_eval(_cholesky_abstract_eval)
cholesky_p.def_impl(_cholesky_impl)
register_lowering(cholesky_p, _cholesky_lowering)


def _cholesky_batch_rule(vals: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, int]:
    (x,), (d,) = vals, dims
    return cholesky_p.bind(batching.moveaxis(x, d, 0)), 0


batching.primitive_batchers[cholesky_p] = _cholesky_batch_rule


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """JAX's rule (Murray 2016, arXiv:1602.07527): ``dL = L phi(L^-1 dA L^-H)``, where
    ``phi`` keeps the lower triangle and halves the diagonal."""
    (a,), (a_dot,) = primals, tangents
    l = cholesky_p.bind(a)
    a_dot = ad.instantiate_zeros(a_dot)
    tmp = triangular_solve(l, a_dot, left_side=False, transpose_a=True, conjugate_a=True,
                           lower=True)
    inner = triangular_solve(l, tmp, left_side=True, transpose_a=False, lower=True)
    phi = div(tril(inner), add(full_like(inner, 1), eye_like(inner)))
    return l, matmul(l, phi)


ad.primitive_jvps[cholesky_p] = _cholesky_jvp


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """``jax.lax.linalg.cholesky``: the lower triangular ``L`` with ``x = L L^H`` of each
    matrix of ``x`` ``[..., n, n]`` (float or complex). With ``symmetrize_input`` the factor
    is of ``(x + x^H) / 2``; otherwise only x's lower triangle is read. A matrix that is
    not positive definite gets NaN on and below the diagonal (zeros above), as JAX on CPU.
    """
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)
