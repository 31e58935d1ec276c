"""``jax.numpy.linalg``'s inverses, solves and determinants: ``solve``, ``inv``, ``det``,
``slogdet``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cond``, ``matrix_power``,
``tensorinv`` and ``tensorsolve``, with JAX's broadcasting and its singular-matrix
behaviour (inf and NaN results, never exceptions). ``solve``, ``det``, ``slogdet`` and
``pinv`` carry JAX's custom derivative rules, which reuse one factorization."""
from __future__ import annotations

import functools
import math
import operator
from typing import Any, NamedTuple

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.api import jit
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.custom_solves import custom_linear_solve
from tinyxla._src.lax import lax
from tinyxla._src.lax import linalg_qr, linalg_solve
from tinyxla._src.lax.linalg_matrices import H
from tinyxla._src.numpy import creation, cumulative, reductions, shape, ufuncs
from tinyxla._src.numpy.linalg import norm
from tinyxla._src.numpy.linalg_decompositions import svd
from tinyxla._src.numpy.promotion import ensure_arraylike, promote_dtypes_inexact
from tinyxla._src.numpy.selection import where
from tinyxla._src.numpy.statistics import count_nonzero
from tinyxla._src.numpy.triangles import diagonal, trace


class SlogdetResult(NamedTuple):
    """``jax.numpy.linalg.SlogdetResult``."""
    sign: Any
    logabsdet: Any


# ---- solve and inv ----

def _lu_solve(a: Any, b: Any) -> Any:
    """X with ``a X = b`` for a [..., m, m] and b [..., m, k] of equal batch dims: JAX's
    ``custom_linear_solve`` over one LU factorization, so that derivatives solve with the
    same factors (transposed for reverse mode)."""
    lu, _, permutation = linalg_solve.lu(lax.stop_gradient(a))
    return custom_linear_solve(
        lambda x: a @ x, b,
        solve=lambda _, x: linalg_solve.lu_solve(lu, permutation, x, trans=0),
        transpose_solve=lambda _, x: linalg_solve.lu_solve(lu, permutation, x, trans=1))


@jit
def solve(a: Any, b: Any) -> Any:
    """Mirrors ``jax.numpy.linalg.solve``: x with ``a @ x = b``; b of rank 1 is one vector
    ``(m,)``, otherwise a batch of matrices ``[..., m, n]`` broadcast against a's batch.
    A singular matrix gives inf/NaN entries, as JAX."""
    a, b = ensure_arraylike("jnp.linalg.solve", a, b)
    a, b = promote_dtypes_inexact(a, b)
    if a.ndim < 2:
        raise ValueError(
            f"left hand array must be at least two dimensional; got a.shape={a.shape}")
    if (b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]
            and a.shape[-1] != b.shape[-2]):
        raise ValueError(
            f"Invalid shapes for solve: {a.shape}, {b.shape}. Prior to JAX v0.5.0, this "
            "would have been treated as a batched 1-dimensional solve. To recover this "
            "behavior, use solve(a, b[..., None]).squeeze(-1).")
    vector = b.ndim == 1
    b_mat = b[:, None] if vector else b
    m = a.shape[-2]
    for size in (a.shape[-1], b_mat.shape[-2]):
        if size != m:
            signature = "(m,m),(m)->(m)" if vector else "(m,m),(m,n)->(m,n)"
            # jnp.vectorize's message, which JAX's solve raises.
            raise ValueError(f"inconsistent size for core dimension 'm': {size} vs {m} on "
                             "vectorized function with excluded=frozenset() and "
                             f"signature='{signature}'")
    batch = shape.broadcast_shapes(a.shape[:-2], b_mat.shape[:-2])
    a = shape.broadcast_to(a, batch + a.shape[-2:])
    b_mat = shape.broadcast_to(b_mat, batch + b_mat.shape[-2:])
    x = _lu_solve(a, b_mat)
    return x[..., 0] if vector else x


@jit
def inv(a: Any) -> Any:
    """Mirrors ``jax.numpy.linalg.inv``: the inverse of each matrix of ``a`` [..., n, n]
    (inf/NaN for singular ones, as JAX)."""
    arr = ensure_arraylike("jnp.linalg.inv", a)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {arr.shape}.")
    arr, = promote_dtypes_inexact(arr)
    eye = creation.eye(arr.shape[-1], dtype=arr.dtype)
    return solve(arr, shape.broadcast_to(eye, arr.shape))


# ---- determinants ----

def _pivot_parity(pivots: Any) -> Any:
    iota = lax.broadcasted_iota(pivots.dtype, pivots.shape, pivots.ndim - 1)
    return count_nonzero(pivots != iota, axis=-1)


def _slogdet_lu_impl(a: Any) -> tuple[Any, Any]:
    dtype = a.dtype
    lu, pivots, _ = linalg_solve.lu(a)
    diag = diagonal(lu, axis1=-2, axis2=-1)
    is_zero = reductions.any(diag == creation.array(0, dtype=dtype), axis=-1)
    parity = _pivot_parity(pivots)
    if dtypes.issubdtype(dtype, np.complexfloating):
        sign = reductions.prod(diag / ufuncs.abs(diag).astype(dtype), axis=-1)
    else:
        sign = creation.array(1, dtype=dtype)
        parity = parity + count_nonzero(diag < 0, axis=-1)
    sign = where(is_zero, creation.array(0, dtype=dtype),
                 sign * (-2 * (parity % 2) + 1).astype(dtype))
    logdet = where(is_zero, creation.array(-np.inf, dtype=dtype),
                   reductions.sum(ufuncs.log(ufuncs.abs(diag)).astype(dtype), axis=-1))
    return sign, ufuncs.real(logdet)


def _slogdet_tangents(x: Any, sign: Any, ans_dot: Any) -> tuple[Any, Any]:
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        sign_dot = (ans_dot - ufuncs.real(ans_dot).astype(ans_dot.dtype)) * sign
        return sign_dot, ufuncs.real(ans_dot)
    return creation.zeros_like(sign), ans_dot


@custom_jvp
def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    return _slogdet_lu_impl(a)


@_slogdet_lu.defjvp
def _slogdet_lu_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    sign, ans = _slogdet_lu_impl(x)
    # d log|det| = tr(x^-1 g), solved by primitives (no custom rule inside a rule: the
    # tangent must transpose).
    lu, _, permutation = linalg_solve.lu(x)
    ans_dot = trace(linalg_solve.lu_solve(lu, permutation, g), axis1=-1, axis2=-2)
    return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


def _det_small(a: Any) -> Any:
    """The determinant of 1x1 and 2x2 matrices in closed form."""
    if a.shape[-1] == 1:
        return a[..., 0, 0]
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


@custom_jvp
def _slogdet_small(a: Any) -> tuple[Any, Any]:
    det = _det_small(a)
    return ufuncs.sign(det), ufuncs.real(ufuncs.log(ufuncs.abs(det)))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    sign, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        ans_dot = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                   - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / _det_small(x)
    return (sign, ans), _slogdet_tangents(x, sign, ans_dot)


def _slogdet_qr(a: Any) -> tuple[Any, Any]:
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise NotImplementedError("slogdet method='qr' not implemented for complex inputs")
    n = a.shape[-1]
    r, taus = linalg_qr.geqrf(a)
    r_diag = diagonal(r, axis1=-2, axis2=-1)
    log_abs_det = reductions.sum(ufuncs.log(ufuncs.abs(r_diag)), axis=-1)
    sign_diag = reductions.prod(ufuncs.sign(r_diag), axis=-1)
    # Each reflection actually made (tau != 0) has determinant -1.
    sign_taus = reductions.prod(where(taus[..., :n - 1] != 0, -1, 1), axis=-1)
    return sign_diag * sign_taus.astype(sign_diag.dtype), log_abs_det


@functools.partial(jit, static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """Mirrors ``jax.numpy.linalg.slogdet``: ``(sign, log|det|)`` of each matrix, by LU
    (``method=None`` or ``'lu'``) or QR; a singular matrix gives ``(0, -inf)``."""
    a = ensure_arraylike("jnp.linalg.slogdet", a)
    a, = promote_dtypes_inexact(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {a.shape}")
    if method is None or method == "lu":
        if a.shape[-1] in (1, 2):
            return SlogdetResult(*_slogdet_small(a))
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                     "(`None`), and 'qr'.")


def _cofactor_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """``(det(a), det(a) a^-1 b)``, finite for singular ``a`` too (JAX's
    ``_cofactor_solve``: the adjugate from an LU whose last pivot is replaced)."""
    if a.shape[-1] == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = linalg_solve.lu(a)
    dtype = a.dtype
    diag = diagonal(lu, axis1=-2, axis2=-1)
    sign = (-2 * (_pivot_parity(pivots) % 2) + 1).astype(dtype)
    # partial_det[..., -1] is det(a); partial_det[..., -2] is det(U) / u_nn.
    partial_det = cumulative.cumprod(diag, axis=-1) * sign[..., None]
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    # Matrices that are not full rank even without the last pivot give zeros.
    d = creation.ones(b.shape[:-1], dtype)
    d = linalg_solve.triangular_solve(lu, d, left_side=True, lower=False)
    d = reductions.any(ufuncs.logical_or(ufuncs.isnan(d), ufuncs.isinf(d)), axis=-1)
    d = d[..., None, None]
    x = where(d, creation.zeros_like(b), b)
    x = linalg_solve.permute_rows(x, permutation)
    x = linalg_solve.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    x = lax.concatenate([x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]],
                        x.ndim - 2)
    x = linalg_solve.triangular_solve(lu, x, left_side=True, lower=False)
    x = where(d, creation.zeros_like(x), x)
    return partial_det[..., -1], x


@custom_jvp
def _det_lu(a: Any) -> Any:
    sign, logdet = slogdet(a)
    return sign * ufuncs.exp(logdet).astype(sign.dtype)


@_det_lu.defjvp
def _det_lu_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, = primals
    g, = tangents
    y, z = _cofactor_solve(x, g)
    return y, trace(z, axis1=-1, axis2=-2)


def _det_3x3(a: Any) -> Any:
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@jit
def det(a: Any) -> Any:
    """Mirrors ``jax.numpy.linalg.det``: closed forms for 2x2 and 3x3 matrices, LU
    otherwise, with JAX's derivative (finite for singular matrices)."""
    a = ensure_arraylike("jnp.linalg.det", a)
    a, = promote_dtypes_inexact(a)
    if a.ndim >= 2 and a.shape[-2:] == (2, 2):
        return _det_small(a)
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        return _det_3x3(a)
    if a.ndim >= 2 and a.shape[-1] == a.shape[-2]:
        return _det_lu(a)
    raise ValueError(f"Argument to _det() must have shape [..., n, n], got {a.shape}")


# ---- pseudo-inverse and least squares ----

@functools.partial(custom_jvp, nondiff_argnums=(1, 2))
def _pinv(a: Any, rtol: Any, hermitian: bool) -> Any:
    arr, = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return creation.empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = ufuncs.conj(arr)
    if rtol is None:
        rtol = 10. * max(m, n) * creation.array(dtypes.finfo(arr.dtype).eps)
    rtol = creation.asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., None], tuple(range(s.ndim - rtol.ndim - 1)))
    cutoff = rtol * s[..., 0:1]
    s = where(s > cutoff, s, np.inf).astype(u.dtype)
    res = vh.mT @ ufuncs.divide(u.mT, s[..., None])
    return lax.convert_element_type(res, arr.dtype)


@_pinv.defjvp
def _pinv_jvp(rtol: Any, hermitian: bool, primals: Any, tangents: Any) -> tuple[Any, Any]:
    # Golub and Pereyra (1973), via JAX.
    a, = primals
    a_dot, = tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a = (a + H(a)) / 2
        a_dot = (a_dot + H(a_dot)) / 2
    m, n = a.shape[-2:]
    if m >= n:
        s = (p @ H(p)) @ H(a_dot)
        t = (H(a_dot) @ H(p)) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (H(p) @ H(a_dot))
        t = H(a_dot) @ (H(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.pinv``: the Moore-Penrose inverse through the SVD,
    dropping singular values at most ``rtol`` times the largest (``rcond`` is its old
    name)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    a = ensure_arraylike("jnp.linalg.pinv", a)
    return _pinv(a, rtol, hermitian)


def _lstsq(a: Any, b: Any, rcond: Any, numpy_resid: bool) -> tuple[Any, Any, Any, Any]:
    a, b = promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(
            f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = creation.empty(0, dtype=a.dtype)
        rank = creation.array(0, dtype=int)
        x = creation.zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        eps = float(dtypes.finfo(dtype).eps)
        if rcond is None:
            rcond = eps * max(n, m)
        else:
            rcond = where(creation.asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= creation.asarray(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = where(mask, s, 1).astype(a.dtype)
        s_inv = where(mask, 1 / safe_s, 0)[:, None]
        u_t_b = u.conj().T @ b
        x = vt.conj().T @ (s_inv * u_t_b)
    if numpy_resid and (rank < n or m <= n):
        resid = creation.asarray([])
    else:
        resid = norm(b - a @ x, axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_jit_lstsq = jit(functools.partial(_lstsq, numpy_resid=False))


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """Mirrors ``jax.numpy.linalg.lstsq``: ``(x, residuals, rank, s)`` of the least-squares
    solution through the SVD; residuals are always returned unless ``numpy_resid``."""
    a, b = ensure_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq(a, b, rcond, True)
    return _jit_lstsq(a, b, rcond)


@functools.partial(jit, static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.matrix_rank``: the count of singular values above
    ``rtol`` times the largest (default: ``max(m, n) * eps``)."""
    M = ensure_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = promote_dtypes_inexact(M)
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = s.max(-1) * np.asarray(max(M.shape[-2:])).astype(s.dtype) * \
            dtypes.finfo(s.dtype).eps
    rtol = shape.expand_dims(rtol, np.ndim(rtol))
    return reductions.sum(s > rtol, axis=-1)


@functools.partial(jit, static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.cond``: the condition number in norm ``p`` (2 by
    default, from the singular values); inf for singular matrices."""
    arr = ensure_arraylike("cond", x)
    if arr.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got "
                         f"arr.shape={arr.shape}")
    if arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got "
                         f"arr.shape={arr.shape}")
    if p is None or p == 2:
        s = svd(arr, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(arr, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        if arr.shape[-2] != arr.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p!r}, array must be square; got "
                             f"arr.shape={arr.shape}")
        r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
    # NaN to inf where the input has no NaN.
    return where(ufuncs.isnan(r) & ~ufuncs.isnan(arr).any(axis=(-2, -1)), np.inf, r)


# ---- powers and tensors ----

@functools.partial(jit, static_argnames=("n",))
def matrix_power(a: Any, n: int) -> Any:
    """Mirrors ``jax.numpy.linalg.matrix_power``: ``a`` to the integer power ``n`` by
    repeated squaring (negative powers of the inverse)."""
    arr = ensure_arraylike("jnp.linalg.matrix_power", a)
    if arr.ndim < 2:
        raise TypeError(f"{arr.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if arr.shape[-2] != arr.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return shape.broadcast_to(creation.eye(arr.shape[-2], dtype=arr.dtype), arr.shape)
    if n < 0:
        arr = inv(arr)
        n = -n
    if n == 1:
        return arr
    if n == 2:
        return arr @ arr
    if n == 3:
        return (arr @ arr) @ arr
    z = result = None
    while n > 0:
        z = arr if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result


def tensorinv(a: Any, ind: int = 2) -> Any:
    """Mirrors ``jax.numpy.linalg.tensorinv``: the inverse of ``a`` seen as a matrix of its
    first ``ind`` dims by the rest, reshaped back."""
    arr = ensure_arraylike("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting_shape, batch_shape = arr.shape[:ind], arr.shape[ind:]
    flatshape = (math.prod(contracting_shape), math.prod(batch_shape))
    if flatshape[0] != flatshape[1]:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={arr.shape} with ind={ind}.")
    return inv(arr.reshape(flatshape)).reshape(*batch_shape, *contracting_shape)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """Mirrors ``jax.numpy.linalg.tensorsolve``: x with ``tensordot(a, x, x.ndim) = b``."""
    a_arr, b_arr = ensure_arraylike("tensorsolve", a, b)
    if axes is not None:
        a_arr = shape.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
    out_shape = a_arr.shape[b_arr.ndim:]
    if a_arr.shape[:b_arr.ndim] != b_arr.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of "
                         f"b. got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
    if b_arr.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a_arr.shape}, "
                         f"b.ndim={b_arr.ndim}.")
    a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
    return solve(a_arr, b_arr.ravel()).reshape(out_shape)
