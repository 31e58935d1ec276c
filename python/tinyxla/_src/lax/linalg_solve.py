"""The triangular and tridiagonal solves of ``jax.lax.linalg`` (``triangular_solve``,
``tridiagonal_solve``) and the LU factorization built on them (``lu``,
``lu_pivots_to_permutation``, and JAX's internal ``lu_solve``), with JAX's derivative,
transpose and batching rules. Each primitive runs one C++ op (LAPACK getrf / trsm / gtsv
from OpenBLAS, and our own loops for small matrices); batches run across the pool."""
from __future__ import annotations

from typing import Any, Sequence

import math

import numpy as np

from tinyxla._src.core import ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.lax.lax import (
    _FLOAT_COMPLEX, _check_naryop_dtypes, add, broadcasted_iota, concatenate, conj,
    expand_dims, full_like, mul, neg, pad, reshape, slice, squeeze)
from tinyxla._src.lax.linalg_matrices import eye_like, is_complex, matmul, mT, tril, triu
from tinyxla._src.lax import slicing, sorting
from tinyxla._src.lax.linalg_primitive import linalg_primitive, no_attrs, split_batch


# ---- triangular_solve ----

def _triangular_solve_abstract_eval(a: Any, b: Any, *, left_side: bool, lower: bool,
                                    transpose_a: bool, conjugate_a: bool,
                                    unit_diagonal: bool) -> ShapedArray:
    _, (a_shape, b_shape) = split_batch("triangular_solve", (2, 2), (a, b))
    _check_naryop_dtypes("triangular_solve", [_FLOAT_COMPLEX, _FLOAT_COMPLEX], [a, b])
    if a.dtype != b.dtype:
        raise TypeError("triangular_solve requires arguments to have the same dtypes, got "
                        f"{a.dtype.name}, {b.dtype.name}.")
    if a_shape[0] != a_shape[1]:
        raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                         f"shape {a_shape}.")
    common_dim = -2 if left_side else -1
    if a_shape[-1] != b_shape[common_dim]:
        raise ValueError("Incompatible shapes for arguments to triangular_solve: "
                         f"{a_shape} and {b_shape}.")
    return ShapedArray(tuple(b.shape), b.dtype)


def _triangular_solve_attrs(**params: Any) -> dict[str, Any]:
    return {k: bool(params[k]) for k in ("left_side", "lower", "transpose_a", "conjugate_a",
                                        "unit_diagonal")}


triangular_solve_p = linalg_primitive("triangular_solve", _triangular_solve_abstract_eval,
                                      _triangular_solve_attrs, multiple_results=False)


def _triangular_solve_jvp_a(g_a: Any, ans: Any, a: Any, b: Any, *, left_side: bool,
                            lower: bool, transpose_a: bool, conjugate_a: bool,
                            unit_diagonal: bool) -> Any:
    """JAX's rule: ``-op(A)^-1 op(dA) X`` (left) or ``-X op(dA) op(A)^-1`` (right), with
    dA restricted to the triangle that is read, in the cheaper order."""
    m, n = b.shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = tril(g_a, -k) if lower else triu(g_a, k)
    g_a = neg(g_a)
    g_a = mT(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs: Any) -> Any:
        return triangular_solve_p.bind(a, rhs, left_side=left_side, lower=lower,
                                       transpose_a=transpose_a, conjugate_a=conjugate_a,
                                       unit_diagonal=unit_diagonal)

    if left_side:
        return a_inverse(matmul(g_a, ans)) if m > n else matmul(a_inverse(g_a), ans)
    return a_inverse(matmul(ans, g_a)) if m < n else matmul(ans, a_inverse(g_a))


ad.defjvp2(triangular_solve_p, _triangular_solve_jvp_a,
           lambda g_b, _, a, b, **params: triangular_solve_p.bind(a, g_b, **params))


def _triangular_solve_transpose(ct: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                                transpose_a: bool, conjugate_a: bool,
                                unit_diagonal: bool) -> list[Any]:
    # Linear in b only, like div in its numerator.
    assert not ad.is_undefined_primal(a) and ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    return [None, triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                          transpose_a=not transpose_a,
                                          conjugate_a=conjugate_a,
                                          unit_diagonal=unit_diagonal)]


ad.primitive_transposes[triangular_solve_p] = _triangular_solve_transpose


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """``jax.lax.linalg.triangular_solve``: X with ``op(a) X = b`` (``left_side``) or
    ``X op(a) = b``, reading only the ``lower`` (or upper) triangle of ``a``; ``op``
    transposes and/or conjugates. ``b`` of one rank less than ``a`` is a vector."""
    conjugate_a = bool(conjugate_a) and is_complex(a)
    singleton = np.ndim(b) == np.ndim(a) - 1
    if singleton:
        b = expand_dims(b, (np.ndim(b) if left_side else np.ndim(b) - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = squeeze(out, (len(out.shape) - 1 if left_side else len(out.shape) - 2,))
    return out


# ---- lu ----

def _lu_abstract_eval(x: Any) -> list[ShapedArray]:
    batch, ((m, n),) = split_batch("lu", (2,), (x,))
    _check_naryop_dtypes("lu", [_FLOAT_COMPLEX], [x])
    i32 = np.dtype(np.int32)
    return [ShapedArray(tuple(x.shape), x.dtype), ShapedArray((*batch, min(m, n)), i32),
            ShapedArray((*batch, m), i32)]


lu_p = linalg_primitive("lu", _lu_abstract_eval, no_attrs, multiple_results=True)


def permute_rows(x: Any, permutation: Any) -> Any:
    """``x[..., permutation[i], :]`` for row i of each matrix of x [..., m, k]: one gather
    of rows of x flattened to [batch * m, k] (the plain row gather is the gather kernel's
    fast case; its transpose is a scatter-add, so it differentiates)."""
    *batch, m, k = x.shape
    if m == 0:
        return x
    rows = math.prod(batch) * m
    # Each matrix's first row in the flat array: its row-major batch position times m.
    offsets, stride = full_like(permutation, 0), m
    for axis in reversed(range(len(batch))):
        iota = broadcasted_iota(np.int32, tuple(permutation.shape), axis)
        offsets = add(offsets, mul(iota, full_like(permutation, stride)))
        stride *= batch[axis]
    index = reshape(add(permutation, offsets), (rows, 1))
    dnums = slicing.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                           start_index_map=(0,))
    out = slicing.gather(reshape(x, (rows, k)), index, dnums, (1, k), indices_are_sorted=False,
                         unique_indices=True, mode=slicing.GatherScatterMode.PROMISE_IN_BOUNDS)
    return reshape(out, tuple(x.shape))


def inverse_permutation(permutation: Any) -> Any:
    """The permutation q with ``q[permutation[i]] = i`` (a sort of iota by it)."""
    iota = broadcasted_iota(np.int32, permutation.shape, len(permutation.shape) - 1)
    return sorting.sort((permutation, iota), dimension=len(permutation.shape) - 1,
                        num_keys=1)[1]


def _slice_last2(x: Any, rows: tuple[int, int], cols: tuple[int, int]) -> Any:
    nd = len(x.shape)
    starts = (0,) * (nd - 2) + (rows[0], cols[0])
    limits = tuple(x.shape[:-2]) + (rows[1], cols[1])
    return slice(x, starts, limits)


def _pad_last2(x: Any, rows: tuple[int, int], cols: tuple[int, int]) -> Any:
    nd = len(x.shape)
    config = [(0, 0, 0)] * (nd - 2) + [(rows[0], rows[1], 0), (cols[0], cols[1], 0)]
    return pad(x, full_like(x, 0, shape=()), config)


def lu_factors(lu: Any) -> tuple[Any, Any]:
    """The unit lower ``L`` [..., m, m] and upper ``U`` [..., n, n] of packed ``lu``
    [..., m, n], completed with identity blocks when it is not square."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    l = _pad_last2(tril(_slice_last2(lu, (0, m), (0, k)), -1), (0, 0), (0, m - k))
    l = add(l, eye_like(l))
    u = _pad_last2(triu(_slice_last2(lu, (0, k), (0, n))), (0, n - k), (0, 0))
    corner = _pad_last2(eye_like(_slice_last2(u, (k, n), (k, n))), (k, 0), (k, 0))
    return l, add(u, corner)


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """JAX's rule (de Hoog, Anderssen and Lukas): with ``X = L^-1 P dA U^-1``,
    ``dL = L tril(X, -1)`` and ``dU = triu(X) U``."""
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    a_dot = ad.instantiate_zeros(a_dot)
    l, u = lu_factors(lu)
    pa_dot = permute_rows(a_dot, permutation)
    la = triangular_solve_p.bind(l, pa_dot, left_side=True, lower=True, transpose_a=False,
                                 conjugate_a=False, unit_diagonal=True)
    lau = triangular_solve_p.bind(u, la, left_side=False, lower=False, transpose_a=False,
                                  conjugate_a=False, unit_diagonal=False)
    lu_dot = add(matmul(l, tril(lau, -1)), matmul(triu(lau), u))
    return ([lu, pivots, permutation],
            [lu_dot, ad.Zero.from_primal_value(pivots), ad.Zero.from_primal_value(permutation)])


ad.primitive_jvps[lu_p] = _lu_jvp


def lu(x: Any) -> tuple[Any, Any, Any]:
    """``jax.lax.linalg.lu``: ``(lu, pivots, permutation)`` with ``P x = L U`` for each
    matrix of ``x`` [..., m, n] (partial pivoting; ``L`` unit lower triangular below the
    diagonal of ``lu``, ``U`` on and above it; int32 pivots and permutation)."""
    lu_, pivots, permutation = lu_p.bind(x)
    return lu_, pivots, permutation


def _lu_pivots_abstract_eval(pivots: Any, *, permutation_size: int) -> ShapedArray:
    batch, ((k,),) = split_batch("lu_pivots_to_permutation", (1,), (pivots,))
    if np.dtype(pivots.dtype) != np.int32:
        raise TypeError("lu_pivots_to_permutation does not accept dtype "
                        f"{np.dtype(pivots.dtype).name} at position 0. Accepted dtypes at "
                        "position 0 are subtypes of signedinteger.")
    if permutation_size < k:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                         f"trailing dimension of the pivots. Got pivots size {k}")
    return ShapedArray((*batch, permutation_size), np.dtype(np.int32))


lu_pivots_to_permutation_p = linalg_primitive(
    "lu_pivots_to_permutation", _lu_pivots_abstract_eval,
    lambda permutation_size: {"permutation_size": int(permutation_size)},
    multiple_results=False)
ad.defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """``jax.lax.linalg.lu_pivots_to_permutation``: the int32 permutation [...,
    permutation_size] that applying the row swaps ``pivots`` [..., k] makes of iota."""
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def lu_solve(lu_: Any, permutation: Any, b: Any, trans: int = 0) -> Any:
    """Solves ``A x = b`` (trans 0), ``A^T x = b`` (1) or ``A^H x = b`` (2) from ``A``'s
    factors, for ``b`` [..., m, k] with the factors' batch dims (JAX's ``_lu_solve_core``
    over batches)."""
    if trans == 0:
        x = permute_rows(b, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    if trans not in (1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    conj_a = trans == 2
    x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=conj_a)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True,
                         transpose_a=True, conjugate_a=conj_a)
    return permute_rows(x, inverse_permutation(permutation))


# ---- tridiagonal_solve ----

def _tridiagonal_solve_abstract_eval(dl: Any, d: Any, du: Any, b: Any, *,
                                     perturb_singular: bool) -> ShapedArray:
    split_batch("tridiagonal_solve", (1, 1, 1, 2), (dl, d, du, b))
    _check_naryop_dtypes("tridiagonal_solve", [_FLOAT_COMPLEX] * 4, [dl, d, du, b])
    if len({np.dtype(x.dtype) for x in (dl, d, du, b)}) != 1:
        raise TypeError("tridiagonal_solve requires arguments to have the same dtypes, got "
                        + ", ".join(np.dtype(x.dtype).name for x in (dl, d, du, b)) + ".")
    if dl.shape != d.shape or dl.shape != du.shape:
        raise TypeError("tridiagonal_solve requires that all diagonal arguments have the "
                        "same shape.")
    if tuple(dl.shape) != tuple(b.shape[:-1]):
        raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b "
                        "equal the dimensions of the diagonal arguments.")
    return ShapedArray(tuple(b.shape), b.dtype)


def _check_perturb(perturb_singular: bool) -> None:
    if perturb_singular:
        raise NotImplementedError(
            "perturb_singular=True is not supported on this platform.")


def _tridiagonal_solve_attrs(perturb_singular: bool) -> dict[str, Any]:
    _check_perturb(perturb_singular)
    return {}


tridiagonal_solve_p = linalg_primitive("tridiagonal_solve", _tridiagonal_solve_abstract_eval,
                                       _tridiagonal_solve_attrs, multiple_results=False)


def _shift(x: Any, offset: int) -> Any:
    """x moved ``offset`` places along its last axis (+1: right), zero-filled."""
    nd = len(x.shape)
    m = x.shape[-1]
    zeros = full_like(x, 0, shape=(*x.shape[:-1], 1))
    if offset > 0:
        body = slice(x, (0,) * nd, (*x.shape[:-1], m - 1))
        return concatenate([zeros, body], nd - 1)
    body = slice(x, (0,) * (nd - 1) + (1,), tuple(x.shape))
    return concatenate([body, zeros], nd - 1)


def _tridiagonal_product(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """``A b`` for the tridiagonal A (dl, d, du) and b [..., m, n]."""
    nd = len(b.shape)
    col = lambda v: expand_dims(v, (nd - 1,))
    below = mul(col(dl), _rows_shifted(b, 1))
    above = mul(col(du), _rows_shifted(b, -1))
    return add(add(mul(col(d), b), below), above)


def _rows_shifted(b: Any, offset: int) -> Any:
    """b's rows moved ``offset`` places down (+1) or up (-1), zero-filled."""
    return mT(_shift(mT(b), offset))


def _tridiagonal_solve_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                           perturb_singular: bool) -> tuple[Any, Any]:
    *diags, _ = primals
    *diags_dot, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is ad.Zero for t in diags_dot):
        rhs = b_dot
    else:
        matvec_dot = _tridiagonal_product(*map(ad.instantiate_zeros, diags_dot), ans)
        rhs = ad.add_tangents(b_dot, neg(matvec_dot))
    if type(rhs) is ad.Zero:
        return ans, rhs
    return ans, tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)


ad.primitive_jvps[tridiagonal_solve_p] = _tridiagonal_solve_jvp


def _tridiagonal_solve_transpose(ct: Any, dl: Any, d: Any, du: Any, b: Any, *,
                                 perturb_singular: bool) -> list[Any]:
    # Linear in b only; A^T has the diagonals swapped and shifted.
    assert ad.is_undefined_primal(b)
    if type(ct) is ad.Zero:
        return [None, None, None, ad.Zero(b.aval)]
    dl_t = _shift(du, 1)
    du_t = _shift(dl, -1)
    return [None, None, None,
            tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


ad.primitive_transposes[tridiagonal_solve_p] = _tridiagonal_solve_transpose


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """``jax.lax.linalg.tridiagonal_solve``: X with ``A X = b`` for the tridiagonal A of
    sub-diagonal ``dl`` (``dl[0]`` ignored), diagonal ``d`` and super-diagonal ``du``
    (``du[m-1]`` ignored); singular systems give NaN (LAPACK gtsv). ``perturb_singular``
    is not supported (NotImplementedError, as JAX where it has no kernel)."""
    _check_perturb(perturb_singular)
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))
