"""The cumulative primitives: ``cumsum``, ``cumprod``, ``cummax``, ``cummin`` and
``cumlogsumexp`` (along ``axis``, from the end when ``reverse``).

Mirrors ``jax._src.lax.control_flow.loops``' cumulative reductions. Each runs as one C++
kernel (eagerly and as a ``cumulative`` graph node). cumsum is linear (its transpose is
the reversed cumsum); the others differentiate, as in JAX, through a prefix scan written
in lax ops (log2(n) shifted combines) whose values equal the primitive's.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.eager import _operand, _reject, _result
from tinyxla._src.lax.elementwise import _logaddexp, ge, max, min, mul, select
from tinyxla._src.lax.shape_ops import broadcasted_iota, full, pad, rev, slice

# The C++ CumulativeOp codes.
_CODES = {"cumsum": 0, "cumprod": 1, "cummax": 2, "cummin": 3, "cumlogsumexp": 4}


def _cumulative_primitive(name: str) -> Primitive:
    prim = Primitive(name)
    code = _CODES[name]

    def abstract_eval(operand: Any, *, axis: int, reverse: bool) -> ShapedArray:
        if not 0 <= axis < len(operand.shape):
            raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
        dtype = np.dtype(operand.dtype)
        ok = (dtypes.issubdtype(dtype, np.inexact) if name == "cumlogsumexp" else
              dtypes.issubdtype(dtype, np.number) and not (
                  name in ("cummax", "cummin") and dtypes.issubdtype(dtype, np.complexfloating)))
        if not ok:
            raise TypeError(f"{name} does not accept dtype {dtype.name}. Accepted dtypes are "
                            f"subtypes of {'floating' if name == 'cumlogsumexp' else 'number'}.")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)

    def impl(operand: Any, *, axis: int, reverse: bool) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        params = dict(axis=axis, reverse=reverse)
        prim.abstract_eval(x.aval, **params)
        try:
            return _result(_core.cumulative(code, x._h, axis, reverse), x.weak_type, x.dtype, (x,))
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, (x,), params, e)
            raise

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, *, axis, reverse:
                      ctx.builder.cumulative(code, x, axis, reverse))

    def batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *, axis: int,
                   reverse: bool) -> tuple[Any, int]:
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis + (d <= axis), reverse=reverse), d

    batching.primitive_batchers[prim] = batch_rule
    return prim


cumsum_p = _cumulative_primitive("cumsum")
cumprod_p = _cumulative_primitive("cumprod")
cummax_p = _cumulative_primitive("cummax")
cummin_p = _cumulative_primitive("cummin")
cumlogsumexp_p = _cumulative_primitive("cumlogsumexp")


def _cumsum_transpose(ct: Any, operand: Any, *, axis: int, reverse: bool) -> list[Any]:
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


ad.deflinear2(cumsum_p, _cumsum_transpose)


def _prefix_scan(combine: Callable[[Any, Any], Any], x: Any, axis: int, reverse: bool) -> Any:
    """The inclusive scan of ``combine`` along ``axis`` in lax ops (Hillis-Steele): each
    step combines every element with the one ``shift`` before it, where there is one."""
    if reverse:
        return rev(_prefix_scan(combine, rev(x, (axis,)), axis, False), (axis,))
    n = x.shape[axis]
    pos = broadcasted_iota(np.int32, x.shape, axis)
    shift = 1
    while shift < n:
        config = [(0, 0, 0)] * x.ndim
        config[axis] = (shift, 0, 0)
        limit = list(x.shape)
        limit[axis] = n - shift
        before = pad(slice(x, (0,) * x.ndim, tuple(limit)), full((), 0, x.dtype), config)
        x = select(ge(pos, full(pos.shape, shift, np.int32)), combine(before, x), x)
        shift *= 2
    return x


def _scan_jvp(prim: Primitive, combine: Callable[[Any, Any], Any]) -> None:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int,
            reverse: bool) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        _, (t_out,) = ad.jvp_flat(lambda v: [_prefix_scan(combine, v, axis, reverse)], [x],
                                  [ad.instantiate_zeros(t)])
        return out, t_out

    ad.primitive_jvps[prim] = jvp


_scan_jvp(cumprod_p, mul)
_scan_jvp(cummax_p, max)
_scan_jvp(cummin_p, min)
_scan_jvp(cumlogsumexp_p, _logaddexp)


def _cumulative(prim: Primitive, operand: Any, axis: int, reverse: bool) -> Any:
    axis = int(axis)
    if axis < 0:  # lax takes no negative axes (jnp's functions canonicalize them)
        raise ValueError("XLA operations do not allow negative axes")
    combine = _COMPLEX_SCANS.get(prim)
    if combine is not None and dtypes.issubdtype(np.result_type(operand), np.complexfloating):
        # the kernel orders reals only; lax's max/min order complex numbers as JAX's do
        if axis >= np.ndim(operand):
            raise ValueError(f"axis {axis} is out of bounds for array of shape "
                             f"{np.shape(operand)}")
        return _prefix_scan(combine, operand, axis, bool(reverse))
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


_COMPLEX_SCANS = {cummax_p: max, cummin_p: min}


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``jax.lax.cumsum``."""
    return _cumulative(cumsum_p, operand, axis, reverse)


def cumprod(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``jax.lax.cumprod``."""
    return _cumulative(cumprod_p, operand, axis, reverse)


def cummax(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``jax.lax.cummax``."""
    return _cumulative(cummax_p, operand, axis, reverse)


def cummin(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``jax.lax.cummin``."""
    return _cumulative(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``jax.lax.cumlogsumexp``."""
    return _cumulative(cumlogsumexp_p, operand, axis, reverse)
