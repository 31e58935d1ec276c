"""Functions of a float's representation and class: frexp, ldexp, modf, spacing, fabs,
nan_to_num, isposinf, isneginf, isreal, iscomplex, isrealobj, iscomplexobj.

Mirrors ``jax._src.numpy.ufuncs`` / ``lax_numpy``: frexp and ldexp work on the bits,
so they are exact; frexp's mantissa has derivative ``2**-exponent`` (JAX's custom JVP),
ldexp differentiates in x1. Differs from JAX for float32 subnormal inputs to frexp,
which XLA:CPU flushes in its own way (JAX gives (0.5, -149) for 1e-40).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy import ufuncs
from tinyxla._src.numpy.creation import asarray
from tinyxla._src.numpy.promotion import (
    broadcast_arrays_of, ensure_arraylike, promote_args_inexact, promote_dtypes_inexact)
from tinyxla._src.numpy.selection import where_arrays

ArrayLike = Any

_INT_OF_BITS = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}


def _is_complex(dt: np.dtype) -> bool:
    return dtypes.issubdtype(dt, np.complexfloating)


def _normalize_float(x: Any) -> tuple[Any, Any]:
    """x's bits as an integer, subnormals scaled by 2**nmant; and the exponent offset."""
    info = dtypes.finfo(x.dtype)
    int_type = _INT_OF_BITS[info.bits]
    small = lax.lt(lax.abs(x), lax.full_like(x, float(info.tiny)))
    scaled = lax.select(small, lax.mul(x, lax.full_like(x, float(1 << info.nmant))), x)
    offset = lax.select(small, lax.full(x.shape, -info.nmant, int_type),
                        lax.full(x.shape, 0, int_type))
    return lax.bitcast_convert_type(scaled, int_type), offset


def _frexp_impl(x: Any) -> tuple[Any, Any]:
    info = dtypes.finfo(x.dtype)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    bits, exponent = _normalize_float(x)
    it = bits.dtype

    def c(v: int) -> Any:
        return lax.full(bits.shape, v, it)

    biased = lax.bitwise_and(lax.shift_right_arithmetic(bits, c(info.nmant)), c(mask))
    exponent = lax.add(exponent, lax.add(lax.sub(biased, c(bias)), c(1)))
    bits = lax.bitwise_and(bits, c(~(mask << info.nmant)))
    bits = lax.bitwise_or(bits, c((bias - 1) << info.nmant))
    mantissa = lax.bitcast_convert_type(bits, x.dtype)
    special = lax.bitwise_or(lax.bitwise_or(ufuncs.isinf(x), ufuncs.isnan(x)),
                             lax.eq(x, lax.full_like(x, 0)))
    exponent = lax.select(special, lax.full_like(exponent, 0), exponent)
    return (lax.select(special, x, mantissa),
            lax.convert_element_type(exponent, np.int32))


@custom_jvp
def _frexp(x: Any) -> tuple[Any, Any]:
    return _frexp_impl(x)


@_frexp.defjvp
def _frexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    x, = primals
    t, = tangents
    m, e = _frexp_impl(x)
    mdot = lax.mul(t, lax.exp2(lax.neg(lax.convert_element_type(e, t.dtype))))
    return (m, e), (mdot, np.zeros(e.shape, dtypes.float0))


def frexp(x: ArrayLike, /) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.frexp``: x = mantissa * 2**exponent, |mantissa| in [0.5, 1);
    the exponent is int32."""
    x = ensure_arraylike("frexp", x)
    x, = promote_dtypes_inexact(x)
    if _is_complex(x.dtype):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


def ldexp(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.ldexp``: x1 * 2**x2 for an integer x2, without overflowing
    in between (the exponent is split off x1 first)."""
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    if _is_complex(x1.dtype) or dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    x1, = promote_args_inexact("ldexp", x1)
    x1, x2 = broadcast_arrays_of(x1, lax.convert_element_type(x2, x1.dtype))
    return _ldexp(x1, x2)


def _ldexp_impl(x1: Any, x2: Any) -> Any:
    m, e = _frexp_impl(x1)
    e = lax.add(lax.convert_element_type(e, x2.dtype), x2)
    # The exponent may be one past the largest and still give a finite result.
    positive = lax.gt(e, lax.full_like(e, 0))
    m = lax.select(positive, lax.mul(m, lax.full_like(m, 2)), m)
    e = lax.select(positive, lax.sub(e, lax.full_like(e, 1)), e)
    x = lax.mul(m, lax.pow(lax.full_like(m, 2), e))
    keep = lax.bitwise_or(ufuncs.isinf(x1), lax.eq(x1, lax.full_like(x1, 0)))
    return where_arrays(keep, x1, x)


@custom_jvp
def _ldexp(x1: Any, x2: Any) -> Any:
    return _ldexp_impl(x1, x2)


@_ldexp.defjvp
def _ldexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    # d/dx1 is 2**x2 (what JAX's chain through frexp's rule gives); x2 holds integers.
    x1, x2 = primals
    t1, _ = tangents
    out = _ldexp_impl(x1, x2)
    return out, lax.mul(t1, lax.pow(lax.full_like(x2, 2), x2))


def modf(x: ArrayLike, /, out: None = None) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.modf``: (fractional part, integral part), both with x's sign."""
    x = ensure_arraylike("modf", x)
    x, = promote_dtypes_inexact(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = lax.select(lax.ge(x, lax.full_like(x, 0)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def spacing(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.spacing``: the distance to the next float away from zero
    (toward +inf for float16, as numpy's float16 does)."""
    arr, = promote_args_inexact("spacing", x)
    if _is_complex(arr.dtype):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = lax.full_like(arr, np.inf)
    if arr.dtype == np.float16:
        return lax.sub(lax.nextafter(arr, inf), arr)
    result = lax.sub(lax.nextafter(arr, ufuncs.copysign(inf, arr)), arr)
    tiny = ufuncs.copysign(lax.full_like(arr, float(dtypes.finfo(arr.dtype).smallest_subnormal)),
                           arr)
    return lax.select(lax.eq(result, lax.full_like(result, 0)), tiny, result)


def fabs(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.fabs``: the absolute value as a float; complex raises."""
    x = ensure_arraylike("fabs", x)
    if _is_complex(x.dtype):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*promote_args_inexact("fabs", x))


def _isposneginf(infinity: float, x: Any, out: None) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    if dtypes.issubdtype(x.dtype, np.floating):
        return lax.eq(x, lax._convert_element_type(infinity, x.dtype, False))
    if _is_complex(x.dtype):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.full_like(x, False, dtype=np.bool_)


def isposinf(x: ArrayLike, /, out: None = None) -> Any:
    """Mirrors ``jax.numpy.isposinf``; integers are never infinite, complex raises."""
    return _isposneginf(np.inf, ensure_arraylike("isposinf", x), out)


def isneginf(x: ArrayLike, /, out: None = None) -> Any:
    """Mirrors ``jax.numpy.isneginf``; integers are never infinite, complex raises."""
    return _isposneginf(-np.inf, ensure_arraylike("isneginf", x), out)


def isreal(x: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.isreal``: the imaginary part is zero."""
    i = ufuncs.imag(x)
    return lax.eq(i, lax.full_like(i, 0))


def iscomplex(x: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.iscomplex``: the imaginary part is not zero."""
    i = ufuncs.imag(x)
    return lax.ne(i, lax.full_like(i, 0))


def iscomplexobj(x: Any) -> bool:
    """Mirrors ``jax.numpy.iscomplexobj``: whether x's dtype is complex."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    try:
        typ = x.dtype.type
    except AttributeError:
        typ = asarray(x).dtype.type
    return dtypes.issubdtype(typ, np.complexfloating)


def isrealobj(x: Any) -> bool:
    """Mirrors ``jax.numpy.isrealobj``: not iscomplexobj."""
    return not iscomplexobj(x)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: ArrayLike = 0.0,
               posinf: ArrayLike | None = None, neginf: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.nan_to_num``: NaN, +inf and -inf replaced (by default with 0
    and the dtype's largest and smallest finite values); complex parts separately."""
    del copy
    x = ensure_arraylike("nan_to_num", x)
    dtype = x.dtype
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if _is_complex(dtype):
        return lax.complex(
            nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
            nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where_arrays(ufuncs.isnan(x), asarray(nan, dtype=dtype), x)
    out = where_arrays(isposinf(out), asarray(posinf, dtype=dtype), out)
    return where_arrays(isneginf(out), asarray(neginf, dtype=dtype), out)
