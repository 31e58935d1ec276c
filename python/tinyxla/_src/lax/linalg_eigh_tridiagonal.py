"""The eigenvalues and eigenvectors of real symmetric tridiagonal matrices: the primitive
``eigh_tridiagonal`` (one C++ op, LAPACK's bisection stebz and inverse iteration stein, the
method of ``jax.scipy.linalg.eigh_tridiagonal``) over batches of diagonals ``d [..., n]``
and off-diagonals ``e [..., n-1]``, with the absolute tolerance ``tol [...]`` of the
bisection. ``jax.scipy.linalg.eigh_tridiagonal`` builds on it.

JAX has no such primitive (its scipy function bisects in a ``while_loop``), and so no exact
derivative: forward mode differentiates its bracketing, reverse mode raises. Here the
derivatives are the exact ones: ``dw_j = v_j^T dT v_j`` and ``dV = V (F * V^T dT V)`` with
``F[i, j] = 1 / (w_j - w_i)`` off the diagonal (distinct eigenvalues), over all eigenpairs
whatever the wanted range."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src.core import ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.lax.elementwise import add, integer_pow, mul, sub
from tinyxla._src.lax.linalg_matrices import eye_like, matmul, mT
from tinyxla._src.lax.linalg_primitive import linalg_primitive
from tinyxla._src.lax.reductions import reduce_sum
from tinyxla._src.lax.shape_ops import expand_dims, pad, slice

_REAL_FLOATS = {"float32", "float64"}


def _abstract_eval(d: Any, e: Any, tol: Any, *, compute_vectors: bool, lower_index: int,
                   upper_index: int) -> list[ShapedArray]:
    if len(d.shape) < 1:
        raise TypeError("eigh_tridiagonal requires a diagonal of rank at least 1, got shape "
                        f"{tuple(d.shape)}")
    if any(x.dtype.name not in _REAL_FLOATS or x.dtype != d.dtype for x in (d, e, tol)):
        raise TypeError("eigh_tridiagonal requires float32 or float64 operands of one dtype, "
                        f"got {d.dtype}, {e.dtype} and {tol.dtype}")
    *batch, n = d.shape
    batch = tuple(batch)
    if tuple(e.shape) != (*batch, max(n - 1, 0)) or tuple(tol.shape) != batch:
        raise ValueError(f"eigh_tridiagonal requires an off-diagonal of shape "
                         f"{(*batch, max(n - 1, 0))} and a tolerance of shape {batch}, got "
                         f"{tuple(e.shape)} and {tuple(tol.shape)}")
    if lower_index < 0 or upper_index >= n or lower_index > upper_index + 1:
        raise ValueError(f"eigh_tridiagonal: eigenvalue indices {lower_index}..{upper_index} "
                         f"out of range for order {n}")
    k = upper_index - lower_index + 1
    w = ShapedArray((*batch, k), d.dtype)
    return [w, ShapedArray((*batch, n, k), d.dtype)] if compute_vectors else [w]


def _attrs(*, compute_vectors: bool, lower_index: int, upper_index: int) -> dict[str, Any]:
    return {"compute_vectors": bool(compute_vectors), "lower_index": int(lower_index),
            "upper_index": int(upper_index)}


eigh_tridiagonal_p = linalg_primitive("eigh_tridiagonal", _abstract_eval, _attrs,
                                      multiple_results=True)


def _shift_rows(v: Any, offset: int) -> Any:
    """``v`` [..., n, k] with its rows moved by ``offset`` (+1: row i holds row i-1), zero
    rows coming in."""
    nd = len(v.shape)
    n = v.shape[-2]
    keep = slice(v, (0,) * nd, (*v.shape[:-2], n - 1, v.shape[-1])) if offset > 0 else \
        slice(v, (0,) * (nd - 2) + (1, 0), tuple(v.shape))
    config = [(0, 0, 0)] * nd
    config[-2] = (1, 0, 0) if offset > 0 else (0, 1, 0)
    return pad(keep, np.zeros((), v.dtype), config)


def _tridiagonal_times(d_dot: Any, e_dot: Any, v: Any) -> Any:
    """``dT v`` for the symmetric tridiagonal ``dT`` of diagonal ``d_dot`` and off-diagonal
    ``e_dot``."""
    nd = len(v.shape)
    column = lambda x: expand_dims(x, (nd - 1,))
    zero = np.zeros((), v.dtype)
    below = column(pad(e_dot, zero, [(0, 0, 0)] * (nd - 2) + [(1, 0, 0)]))  # e[i-1]
    above = column(pad(e_dot, zero, [(0, 0, 0)] * (nd - 2) + [(0, 1, 0)]))  # e[i]
    return add(mul(column(d_dot), v),
               add(mul(below, _shift_rows(v, 1)), mul(above, _shift_rows(v, -1))))


def _columns(x: Any, lower_index: int, upper_index: int) -> Any:
    """The trailing entries (columns) lower_index..upper_index of ``x``."""
    nd = len(x.shape)
    return slice(x, (0,) * (nd - 1) + (lower_index,), (*x.shape[:-1], upper_index + 1))


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, compute_vectors: bool,
         lower_index: int, upper_index: int) -> tuple[list[Any], list[Any]]:
    """Differentiates through all eigenpairs (the eigenvectors' derivatives need them all),
    then keeps the wanted ones."""
    d, e, tol = primals
    n = d.shape[-1]
    w, v = eigh_tridiagonal_p.bind(d, e, tol, compute_vectors=True, lower_index=0,
                                   upper_index=n - 1)
    d_dot, e_dot = ad.instantiate_zeros(tangents[0]), ad.instantiate_zeros(tangents[1])
    dt_v = _tridiagonal_times(d_dot, e_dot, v)
    nd = len(v.shape)
    w_dot = reduce_sum(mul(v, dt_v), (nd - 2,))
    keep = lambda x: _columns(x, lower_index, upper_index)
    if not compute_vectors:
        return [keep(w)], [keep(w_dot)]
    eye = eye_like(v)
    diff = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))  # w_j - w_i
    fmat = sub(integer_pow(add(eye, diff), -1), eye)
    v_dot = matmul(v, mul(fmat, matmul(mT(v), dt_v)))
    return [keep(w), keep(v)], [keep(w_dot), keep(v_dot)]


ad.primitive_jvps[eigh_tridiagonal_p] = _jvp


def eigh_tridiagonal(d: Any, e: Any, tol: Any, *, compute_vectors: bool, lower_index: int,
                     upper_index: int) -> tuple[Any, ...]:
    """The ascending eigenvalues ``lower_index..upper_index`` (inclusive) of the symmetric
    tridiagonal matrices of diagonal ``d`` [..., n] and off-diagonal ``e`` [..., n-1] (real),
    bisected to the absolute tolerance ``tol`` [...] (LAPACK's default, about
    ``eps * |T|``, where ``tol <= 0``), and with ``compute_vectors`` their unit eigenvectors
    as columns [..., n, k] in LAPACK's signs. NaN where an entry is not finite."""
    return tuple(eigh_tridiagonal_p.bind(d, e, tol, compute_vectors=bool(compute_vectors),
                                         lower_index=int(lower_index),
                                         upper_index=int(upper_index)))
