"""Tensor products: dot, matmul, vdot, tensordot, inner, outer, each one lax.dot_general.

Mirrors ``jax._src.numpy.tensor_contractions``: the operands go to ``dot_general``
unconverted, with ``preferred_element_type`` set to ``jnp.result_type`` of the operands
(or the user's), and the result is weakly typed when both operands are. So, as in JAX,
``dot(int8, weak int32)`` is an error (the preferred int8 is narrower than int32).
``precision`` is passed on to lax, which computes at full precision.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Tracer
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.creation import astype
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.ufuncs import multiply

ArrayLike = Any


def _result(fun_name: str, a: Any, b: Any, preferred_element_type: Any) -> tuple[np.dtype, bool]:
    if preferred_element_type is None:
        return dtypes.result_type(a, b, return_weak_type_flag=True)
    return dtypes.check_user_dtype_supported(preferred_element_type, fun_name), False


def _dot_general(a: Any, b: Any, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]], dt: np.dtype, weak: bool,
                 precision: Any = None) -> Any:
    """lax.dot_general with preferred type ``dt``; the result as ``dt`` with weak type ``weak``."""
    (lc, rc), (lb, rb) = contract, batch
    out = lax.dot_general(a, b, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))),
                          precision=precision, preferred_element_type=dt)
    return promotion.convert(out, dt, weak)


def _matrix_product(a: Any, b: Any) -> Any:
    """The common case of ``dot`` and ``matmul``, quickly (vmap traces at every call, and
    eager ``X @ w`` is a hot path): strong operands of one dtype and rank 1 or 2, where
    both functions make the same dot_general with that dtype as the result type; lax.dot's
    checks are the bind's. None for any other case."""
    if not ((type(a) is Array or isinstance(a, Tracer))
            and (type(b) is Array or isinstance(b, Tracer))):
        return None
    dt = a.dtype
    an, bn = a.ndim, b.ndim
    if (dt is b.dtype and not a.weak_type and not b.weak_type and 1 <= an <= 2
            and 1 <= bn <= 2):
        dims = (((an - 1,), (0 if bn == 1 else bn - 2,)), ((), ()))
        return lax.dot_general_p.bind(a, b, dimension_numbers=dims,
                                      precision=lax.canonicalize_precision(None),
                                      preferred_element_type=dt)
    return None


def dot(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
        preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.dot``: contracts a's last axis with b's second-to-last (or only) one."""
    if precision is None and preferred_element_type is None:
        out = _matrix_product(a, b)
        if out is not None:
            return out
    a, b = ensure_arraylike("dot", a, b)
    dt, weak = _result("dot", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    elif b.ndim == 1:
        contract = ((a.ndim - 1,), (0,))
    else:
        contract = ((a.ndim - 1,), (b.ndim - 2,))
    return _dot_general(a, b, contract, ((), ()), dt, weak, precision)


def _type_str(x: Any) -> str:
    return f"{np.dtype(x.dtype).name}[{','.join(map(str, x.shape))}]"


def matmul(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.matmul``: batch dimensions broadcast; 1-d operands are vectors."""
    if precision is None and preferred_element_type is None:
        out = _matrix_product(a, b)
        if out is not None:
            return out
    a, b = ensure_arraylike("matmul", a, b)
    for i, x in enumerate((a, b)):
        if x.ndim < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, "
                             f"but it has ndim {x.ndim}")
    dt, weak = _result("matmul", a, b, preferred_element_type)
    a_is_mat, b_is_mat = a.ndim > 1, b.ndim > 1
    a_batch = a.shape[:-2] if a_is_mat else ()
    b_batch = b.shape[:-2] if b_is_mat else ()
    nb = max(len(a_batch), len(b_batch))
    a_batch = (1,) * (nb - len(a_batch)) + a_batch
    b_batch = (1,) * (nb - len(b_batch)) + b_batch
    batch = []
    for da, db in zip(a_batch, b_batch):
        if da != db and da != 1 and db != 1:
            raise ValueError(f"Incompatible types for matmul arguments: {_type_str(a)} and "
                             f"{_type_str(b)}")
        batch.append(db if da == 1 else da)
    batch = tuple(batch)
    # Broadcast both to the full batch shape, then one batched dot_general.
    if a_is_mat:
        a = promotion.broadcast_to_shape(a, batch + a.shape[-2:])
    if b_is_mat:
        b = promotion.broadcast_to_shape(b, batch + b.shape[-2:])
    if a_is_mat and b_is_mat:
        bdims = tuple(range(nb))
        return _dot_general(a, b, ((nb + 1,), (nb,)), (bdims, bdims), dt, weak, precision)
    if a_is_mat:   # (..., n, k) @ (k,) -> (..., n)
        return _dot_general(a, b, ((a.ndim - 1,), (0,)), ((), ()), dt, weak, precision)
    if b_is_mat:   # (k,) @ (..., k, m) -> (..., m)
        return _dot_general(a, b, ((0,), (b.ndim - 2,)), ((), ()), dt, weak, precision)
    return _dot_general(a, b, ((0,), (0,)), ((), ()), dt, weak, precision)


def vdot(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.vdot``: conj(a) . b over the flattened operands."""
    a, b = ensure_arraylike("vdot", a, b)
    if a.dtype.kind == "c":
        a = lax.conj(a)
    return dot(lax.reshape(a, (a.size,)), lax.reshape(b, (b.size,)), precision=precision,
               preferred_element_type=preferred_element_type)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[int] | Sequence[Sequence[int]] = 2,
              *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.tensordot``: ``axes`` is a count, or a pair of axes or axis lists."""
    a, b = ensure_arraylike("tensordot", a, b)
    dt, weak = _result("tensordot", a, b, preferred_element_type)
    if type(axes) is int:
        if axes > min(a.ndim, b.ndim):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({a.shape} and {b.shape})")
        contract = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = (canonicalize_axis(ax1, a.ndim),), (canonicalize_axis(ax2, b.ndim),)
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError("tensordot requires axes lists to have equal length, "
                                f"got {ax1} and {ax2}.")
            contract = (tuple(canonicalize_axis(i, a.ndim) for i in ax1),
                        tuple(canonicalize_axis(i, b.ndim) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        "lists/tuples of ints.")
    return _dot_general(a, b, contract, ((), ()), dt, weak, precision)


def inner(a: ArrayLike, b: ArrayLike, *, precision: Any = None,
          preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.inner``: contracts the last axes; a 0-d operand multiplies."""
    a, b = ensure_arraylike("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        if preferred_element_type is not None:
            a = astype(a, preferred_element_type)
            b = astype(b, preferred_element_type)
        return multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def outer(a: ArrayLike, b: ArrayLike, out: None = None) -> Any:
    """Mirrors ``jax.numpy.outer``: ravel(a)[:, None] * ravel(b)[None, :]."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    a, b = ensure_arraylike("outer", a, b)
    a, b = promotion.promote_dtypes(a, b)
    return multiply(lax.reshape(a, (a.size, 1)), lax.reshape(b, (1, b.size)))
