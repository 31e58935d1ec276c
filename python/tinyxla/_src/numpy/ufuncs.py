"""Elementwise jnp functions: arithmetic, transcendental, comparison, logical and bitwise.

Mirrors ``jax._src.numpy.ufuncs`` (and ``round``/``trunc``/``clip``/``angle`` from
``lax_numpy``). Each function promotes its operands as JAX does, then calls lax.
Differences: the binary functions are plain functions, not ``jnp.ufunc`` objects
(no ``.reduce``/``.accumulate``/``.outer``/``.at``).

Speed: ``x + 1`` is on the eager hot path. ``_binary`` gives every binary function a
fast path for an Array with a Python scalar, or two Arrays of one shape: the promotion
is one lookup in a per-function cache (cleared when the config changes), and nothing
else runs before the lax call.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Tracer
from tinyxla._src.config import config
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import elementwise as lax_elementwise
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.promotion import (
    ensure_arraylike, promote_args, promote_args_inexact, promote_args_numeric,
    promote_dtypes_inexact, promote_dtypes_numeric)
from tinyxla._src.numpy.selection import where, where_arrays as _where

ArrayLike = Any

_INEXACT = frozenset(dt for dt in dtypes.SUPPORTED_DTYPES
                     if dt.kind in "fc" or dt == dtypes.bfloat16)
_COMPLEX = frozenset({dtypes.complex64, dtypes.complex128})
_INTEGRAL_OR_BOOL = frozenset(dt for dt in dtypes.SUPPORTED_DTYPES if dt.kind in "biu")
_UNSIGNED = frozenset(dt for dt in dtypes.SUPPORTED_DTYPES if dt.kind == "u")
_BOOL = dtypes.bool_dtype

# Every promotion cache, so the config hook can clear them all.
_CACHES: list[dict] = []


def _clear_caches(name: str | None = None, value: Any = None) -> None:
    for c in _CACHES:
        c.clear()


config.add_update_hook(_clear_caches)


def _is_complex(dt: np.dtype) -> bool:
    return dt in _COMPLEX


def _is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def const(x: Any, value: Any) -> Any:
    """``value`` in x's dtype (JAX's ``lax._const``): weakly typed when x is a weak 0-d
    value (so functions of Python scalars stay weak), else strong."""
    return lax._convert_element_type(value, x.dtype, x.weak_type and x.ndim == 0)


def strong_const(x: Any, value: Any) -> Any:
    """``value`` as a strong 0-d array of x's dtype (JAX's ``_constant_like``)."""
    return lax._convert_element_type(value, x.dtype, False)


def _ones(x: Any) -> Any:
    """Ones like x, keeping its weak type (``lax._ones``)."""
    return lax.full_like(x, 1)


def _to_bool(x: Any) -> Any:
    """The truth of each element for the logical ufuncs: a conversion to bool, whose rules
    are XLA:CPU's (a bfloat16 denormal is true, a float32 one false); complex values test
    both parts against zero."""
    if x.dtype == _BOOL:
        return x
    if x.dtype in _COMPLEX:
        return lax.ne(x, const(x, 0))
    # weak as lax.ne(x, const(x, 0)) would be: for a weak 0-d x only
    return lax._convert_element_type(x, _BOOL, weak_type=x.weak_type and x.ndim == 0)


# ---------------------------------------------------------------------------------------
# Factories

_PROMOTERS = {"plain": promote_args, "inexact": promote_args_inexact,
              "numeric": promote_args_numeric}


# Per promotion kind, the dtypes that two operands of that same dtype keep.
_NO_PROMOTION = {"plain": frozenset(dtypes.SUPPORTED_DTYPES), "inexact": _INEXACT,
                 "numeric": frozenset(dtypes.SUPPORTED_DTYPES) - {_BOOL}}


def _target(kind: str, dt: np.dtype) -> np.dtype:
    if kind == "inexact":
        return dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dt))
    if kind == "numeric":
        return dtypes.to_numeric_dtype(dt)
    return dt


def _scalar_converter(value_type: type, dt: np.dtype) -> Callable[[Any], Any]:
    """How a Python scalar of ``value_type`` becomes a weak operand of dtype ``dt``.

    Where lax takes a Python scalar for ``dt`` (float for float32, ...) it is that type,
    so no 0-d array is made and a trace records a literal; else a weak 0-d array.
    """
    t = type(lax.weak_scalar(value_type(1), dt))
    if t in (int, float, complex):
        return t
    return lambda v: lax._convert_element_type(v, dt, True)


def _binary(name: str, body: Callable[[Any, Any], Any], kind: str = "plain",
            arg_names: tuple[str, str] = ("x", "y"),
            scalar_ok: bool = False) -> Callable[[ArrayLike, ArrayLike], Any]:
    """A binary jnp function: JAX's promote_args* (``kind``), then ``body`` on the result.

    The fast path covers an Array with a Python int/float (either side) and two Arrays
    of one dtype whose ranks need no promotion; the promotion of a scalar case is one
    lookup in ``cache``: (dtype, weak type, scalar converter). ``scalar_ok`` says that
    ``body`` takes a Python scalar for one operand (then no 0-d array is made for it).
    """
    promote = _PROMOTERS[kind]
    same_ok = _NO_PROMOTION[kind]  # dtypes two equal-dtype operands keep
    cache: dict[tuple, tuple[np.dtype, bool, Callable[[Any], Any]]] = {}
    _CACHES.append(cache)
    bounds = promotion._PY_INT_BOUNDS

    def entry(key: tuple, a: Any, b: Any, value_type: type) -> tuple:
        dt, weak = dtypes.lattice_result_type(a, b)
        dt = lax._canonical_dtype(_target(kind, dt))
        conv = (_scalar_converter(value_type, dt) if scalar_ok
                else lambda v: lax._convert_element_type(v, dt, True))
        out = cache[key] = (dt, weak, conv)
        return out

    def slow(x: Any, y: Any) -> Any:
        promotion.check_arraylike(name, x, y)
        promotion.check_jit_args(fn, arg_names, (x, y))
        x, y = promote(name, x, y, arg_names=arg_names)
        return body(x, y)

    def fn(x: ArrayLike, y: ArrayLike, /) -> Any:
        tx, ty = type(x), type(y)
        # Tracers take the same paths as Arrays: tracing (vmap at every call) is hot too.
        # Their weak types must agree, so a jaxpr shows JAX's convert_element_type.
        traced = False
        if tx is not Array and isinstance(x, Tracer):
            tx, traced = Array, True
        if ty is not Array and isinstance(y, Tracer):
            ty, traced = Array, True
        if tx is Array:
            if ty is Array:
                dt = x.dtype
                if dt is y.dtype and dt in same_ok and (not traced
                                                        or x.weak_type == y.weak_type):
                    xn, yn = x.ndim, y.ndim
                    if xn == yn or not xn or not yn:
                        return body(x, y)
            elif ty is float or ty is int:
                if ty is int:
                    lo, hi = bounds[config.jax_enable_x64]
                    if not lo <= y <= hi:
                        promotion.check_python_int(y, arg_names[1])
                key = (x.dtype, x.weak_type, ty)
                dt, weak, conv = cache.get(key) or entry(key, x, y, ty)
                if x.dtype is not dt:
                    x = lax._convert_element_type(x, dt, weak)
                return body(x, conv(y))
        elif ty is Array and (tx is float or tx is int):
            if tx is int:
                lo, hi = bounds[config.jax_enable_x64]
                if not lo <= x <= hi:
                    promotion.check_python_int(x, arg_names[0])
            key = (tx, y.dtype, y.weak_type)
            dt, weak, conv = cache.get(key) or entry(key, x, y, tx)
            if y.dtype is not dt:
                y = lax._convert_element_type(y, dt, weak)
            return body(conv(x), y)
        return slow(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Mirrors ``jax.numpy.{name}``."
    return fn


def _unary(name: str, body: Callable[[Any], Any], kind: str = "plain") -> Callable[[ArrayLike], Any]:
    """A unary jnp function: JAX's promote_args* (``kind``) then ``body``."""
    promote = _PROMOTERS[kind]
    # The input dtypes that need no promotion.
    fast = _INEXACT if kind == "inexact" else frozenset(dtypes.SUPPORTED_DTYPES)

    def fn(x: ArrayLike, /) -> Any:
        if (type(x) is Array or isinstance(x, Tracer)) and x.dtype in fast:
            return body(x)
        promotion.check_arraylike(name, x)
        promotion.check_jit_args(fn, ("x",), (x,))
        x, = promote(name, x)
        return body(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Mirrors ``jax.numpy.{name}``."
    return fn


# ---------------------------------------------------------------------------------------
# Arithmetic

def _add(x: Any, y: Any) -> Any:
    # bool + bool is logical or; a Python scalar operand never makes a bool result.
    return lax.bitwise_or(x, y) if getattr(x, "dtype", None) is _BOOL else lax.add(x, y)


def _multiply(x: Any, y: Any) -> Any:
    return lax.bitwise_and(x, y) if getattr(x, "dtype", None) is _BOOL else lax.mul(x, y)


add = _binary("add", _add, scalar_ok=True)
subtract = _binary("subtract", lax.sub, scalar_ok=True)
multiply = _binary("multiply", _multiply, scalar_ok=True)
true_divide = _binary("true_divide", lax.div, "inexact", ("x1", "x2"), scalar_ok=True)
maximum = _binary("maximum", lax.max, scalar_ok=True)
minimum = _binary("minimum", lax.min, scalar_ok=True)
arctan2 = _binary("arctan2", lax.atan2, "inexact", ("x1", "x2"), scalar_ok=True)
float_power = _binary("float_power", lax.pow, "inexact", scalar_ok=True)
nextafter = _binary("nextafter", lax.nextafter, "inexact", scalar_ok=True)


def divide(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.divide`` (an alias of true_divide)."""
    return true_divide(x1, x2)


# The bodies below follow JAX's code line by line: where JAX uses a jnp function with a
# Python scalar (``quotient - 1``) so do they, as that decides the result's weak type.

def _floor_divide(x1: Any, x2: Any) -> Any:
    dt = x1.dtype
    if dt in _UNSIGNED:
        return lax.div(x1, x2)
    if _is_int(dt):
        quotient = lax.div(x1, x2)
        select = logical_and(not_equal(lax.sign(x1), lax.sign(x2)),
                             not_equal(lax.rem(x1, x2), 0))
        return _where(select, subtract(quotient, 1), quotient)
    if _is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    mod = lax.rem(x1, x2)
    x1_corrected = _where(equal(x2, 0), x1, lax.sub(x1, mod))
    div = lax.div(x1_corrected, x2)
    ind = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
    mod = lax.select_n(ind, mod, add(mod, x2))
    div = lax.round(lax.select_n(ind, div, subtract(div, 1.0)))
    # A zero quotient takes the sign of x1 / x2 (finite wherever div is zero), as the
    # Array API's special cases have it; JAX's divmod may lose it.
    signed_zero = lax_elementwise.stop_gradient(multiply(true_divide(x1, x2), 0))
    return _where(equal(div, 0), signed_zero, div), _signed_zero_remainder(mod, x2)


def _signed_zero_remainder(mod: Any, x2: Any) -> Any:
    """``mod`` with a zero given x2's sign (Python's and the Array API's rule; JAX's
    remainder may give x1's). The zero keeps mod's tangent: ``z - (stop(mod) - mod)`` is z
    itself, as ``stop(mod) - mod`` is +0."""
    z = lax_elementwise.stop_gradient(true_divide(0, x2))
    return _where(equal(mod, 0), subtract(z, subtract(lax_elementwise.stop_gradient(mod), mod)),
                  mod)


floor_divide = _binary("floor_divide", _floor_divide, "numeric", ("x1", "x2"))


def _remainder(x1: Any, x2: Any) -> Any:
    zero = strong_const(x1, 0)
    if _is_int(x2.dtype):
        x2 = _where(equal(x2, 0), _ones(x2), x2)
    trunc_mod = lax.rem(x1, x2)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                              lax.ne(trunc_mod, zero))
    out = lax.select_n(do_plus, trunc_mod, lax.add(trunc_mod, x2))
    return out if _is_int(out.dtype) else _signed_zero_remainder(out, x2)


remainder = _binary("remainder", _remainder, "numeric", ("x1", "x2"))


def mod(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.mod`` (an alias of remainder)."""
    return remainder(x1, x2)


def fmod(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.fmod``: the remainder with the sign of x1 (C's fmod).

    As in JAX, an integer zero divisor is replaced by one before promotion.
    """
    x1, x2 = ensure_arraylike("fmod", x1, x2)
    if _is_int(dtypes.result_type(x1, x2)):
        x2 = _where(equal(x2, 0), _ones(x2), x2)
    return lax.rem(*promote_args_numeric("fmod", x1, x2, arg_names=("x1", "x2")))


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Any, Any]:
    """Mirrors ``jax.numpy.divmod``: (floor_divide, remainder)."""
    x1, x2 = promote_args_numeric("divmod", x1, x2, arg_names=("x1", "x2"))
    if _is_int(x1.dtype):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _pow_int_int(x1: Any, x2: Any) -> Any:
    # Square-and-multiply over the exponent's low 6 bits, as JAX does; more would
    # overflow for any |x1| > 1. Negative exponents give 0 (or 1 for x1 == 1), as in JAX.
    zero, one = strong_const(x2, 0), strong_const(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def power(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.power``.

    A concrete integer exponent (anything ``operator.index`` takes: Python ints and
    bools, numpy integers, 0-d integer Arrays) uses ``lax.integer_pow`` and keeps x1's
    dtype; integer bases use square-and-multiply; a float base with an integer exponent
    goes to ``lax.pow`` unconverted, as in JAX.
    """
    promotion.check_arraylike("power", x1, x2)
    if not isinstance(x2, core.Tracer):
        try:
            exponent = operator.index(x2)
        except TypeError:
            pass
        else:
            x1, = promote_dtypes_numeric(x1)
            return lax.integer_pow(x1, exponent)
    promotion._check_scalars((x1, x2), ("x1", "x2"))
    x1a, x2a = promotion.promote_shapes("power", promotion.ensure_array(x1),
                                        promotion.ensure_array(x2))
    x1p, x2p = promote_args_numeric("power", x1a, x2a, arg_names=("x1", "x2"))
    if _is_int(x1p.dtype):
        return _pow_int_int(x1p, x2p)
    if x1a.dtype in _INEXACT and _is_int(x2a.dtype):
        return lax.pow(x1a, x2a)
    return lax.pow(x1p, x2p)


def pow(x1: ArrayLike, x2: ArrayLike, /) -> Any:  # noqa: A001 - JAX's name
    """Mirrors ``jax.numpy.pow`` (an alias of power)."""
    return power(x1, x2)


def _wrap_between(x: Any, a: float) -> Any:
    """x wrapped into [-a, a] (JAX's ``_wrap_between``)."""
    a_, two_a, zero = const(x, a), const(x, 2 * a), const(x, 0)
    rem = lax.rem(lax.add(x, a_), two_a)
    rem = lax.select_n(lax.lt(rem, zero), rem, lax.add(rem, two_a))
    return lax.sub(rem, a_)


def _logaddexp_impl(x1: Any, x2: Any) -> Any:
    if x1.dtype in _COMPLEX:
        amax = lax.max(x1, x2)
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, const(amax, 2)))
        out = lax.add(amax, lax.log1p(lax.exp(delta)))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi))
    return lax_elementwise._logaddexp(x1, x2)


def replace_posinf(x: Any) -> Any:
    """``x`` with +inf (in the real part) replaced by 0: JAX's ``_replace_inf``, which
    keeps logaddexp's tangent weights finite. A Python scalar (a staged literal) stays one."""
    if type(x) in (int, float, complex):
        return 0 if complex(x).real == np.inf else x
    re_x = lax.real(x) if x.dtype in _COMPLEX else x
    return lax.select_n(lax.eq(re_x, const(re_x, np.inf)), x, lax.full_like(x, 0))


@custom_jvp
def _logaddexp(x1: Any, x2: Any) -> Any:
    return _logaddexp_impl(x1, x2)


@_logaddexp.defjvp
def _logaddexp_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    # JAX's rule: each tangent weighted by exp(x_i - out), so a tie splits it evenly and
    # the weights stay smooth there (the max/min form has a kink in its derivative).
    out = _logaddexp_impl(*primals)
    return out, logaddexp_tangent(lax.exp, primals, tangents, out)


def logaddexp_tangent(exp: Any, primals: Any, tangents: Any, out: Any) -> Any:
    """The tangent of ``out = log(exp(x1) + exp(x2))`` in base ``exp``'s: the tangents
    weighted by ``exp(x_i - out)`` (shared by logaddexp and logaddexp2)."""
    (x1, x2), (t1, t2) = primals, tangents
    w1 = exp(lax.sub(replace_posinf(x1), replace_posinf(out)))
    w2 = exp(lax.sub(replace_posinf(x2), replace_posinf(out)))
    return lax.add(lax.mul(t1, w1), lax.mul(t2, w2))


logaddexp = _binary("logaddexp", _logaddexp, "inexact")


def _isposinf(x: Any) -> Any:
    return lax.eq(x, strong_const(x, np.inf))


def _hypot(x1: Any, x2: Any) -> Any:
    if _is_complex(x1.dtype):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(_isposinf(x1), _isposinf(x2))
    x1, x2 = maximum(x1, x2), minimum(x1, x2)
    is_zero = equal(x1, 0)
    ratio = lax.div(x2, _where(is_zero, _ones(x1), x1))
    x = _where(is_zero, x1, multiply(x1, lax.sqrt(add(1, lax.square(ratio)))))
    return _where(idx_inf, const(x, np.inf), x)


hypot = _binary("hypot", _hypot, "inexact", ("x1", "x2"))


def _copysign(x1: Any, x2: Any) -> Any:
    if _is_complex(x1.dtype):
        raise TypeError("copysign does not support complex-valued inputs")
    return _where(signbit(x2), negative(lax.abs(x1)), lax.abs(x1))


copysign = _binary("copysign", _copysign, "inexact", ("x1", "x2"))


def heaviside(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.heaviside``: 0 below zero, 1 above, x2 at zero, NaN kept."""
    x1, x2 = ensure_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    zero = const(x1, 0)
    return _where(lax.lt(x1, zero), zero,
                  _where(lax.gt(x1, zero), const(x1, 1), _where(lax.ne(x1, x1), x1, x2)))


# ---------------------------------------------------------------------------------------
# Comparisons, logical and bitwise


def _complex_comparison(lax_op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def body(x: Any, y: Any) -> Any:
        if _is_complex(x.dtype):
            # Lexicographic on (real, imag), as numpy orders complex numbers.
            return lax.select_n(lax.eq(lax.real(x), lax.real(y)),
                                lax_op(lax.real(x), lax.real(y)), lax_op(lax.imag(x), lax.imag(y)))
        return lax_op(x, y)
    return body


equal = _binary("equal", lax.eq, scalar_ok=True)
not_equal = _binary("not_equal", lax.ne, scalar_ok=True)
less = _binary("less", _complex_comparison(lax.lt))
less_equal = _binary("less_equal", _complex_comparison(lax.le))
greater = _binary("greater", _complex_comparison(lax.gt))
greater_equal = _binary("greater_equal", _complex_comparison(lax.ge))

logical_and = _binary("logical_and", lambda x, y: lax.bitwise_and(_to_bool(x), _to_bool(y)))
logical_or = _binary("logical_or", lambda x, y: lax.bitwise_or(_to_bool(x), _to_bool(y)))
logical_xor = _binary("logical_xor", lambda x, y: lax.bitwise_xor(_to_bool(x), _to_bool(y)))
logical_not = _unary("logical_not", lambda x: lax.bitwise_not(_to_bool(x)))

bitwise_and = _binary("bitwise_and", lax.bitwise_and, scalar_ok=True)
bitwise_or = _binary("bitwise_or", lax.bitwise_or, scalar_ok=True)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor, scalar_ok=True)
bitwise_not = _unary("bitwise_not", lax.bitwise_not)
invert = _unary("invert", lax.bitwise_not)
left_shift = _binary("left_shift", lax.shift_left, "numeric", scalar_ok=True)


def _right_shift(x1: Any, x2: Any) -> Any:
    if x1.dtype in _UNSIGNED:
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


right_shift = _binary("right_shift", _right_shift, "numeric",
                      ("x1", "x2"))


# ---------------------------------------------------------------------------------------
# Unary math

exp = _unary("exp", lax.exp, "inexact")
exp2 = _unary("exp2", lax.exp2, "inexact")
log = _unary("log", lax.log, "inexact")
log1p = _unary("log1p", lax.log1p, "inexact")
expm1 = _unary("expm1", lax.expm1, "inexact")
tanh = _unary("tanh", lax.tanh, "inexact")
sin = _unary("sin", lax.sin, "inexact")
cos = _unary("cos", lax.cos, "inexact")
tan = _unary("tan", lax.tan, "inexact")
arcsin = _unary("arcsin", lax.asin, "inexact")
arccos = _unary("arccos", lax.acos, "inexact")
arctan = _unary("arctan", lax.atan, "inexact")
sinh = _unary("sinh", lax.sinh, "inexact")
cosh = _unary("cosh", lax.cosh, "inexact")
arcsinh = _unary("arcsinh", lax.asinh, "inexact")
arctanh = _unary("arctanh", lax.atanh, "inexact")
sqrt = _unary("sqrt", lax.sqrt, "inexact")
cbrt = _unary("cbrt", lax.cbrt, "inexact")
negative = _unary("negative", lax.neg)
sign = _unary("sign", lax.sign)


def _arccosh(x: Any) -> Any:
    result = lax.acosh(x)
    if _is_complex(result.dtype):
        # Pick the branch with a non-negative real part, as numpy does.
        return _where(less(lax.real(result), 0), lax.neg(result), result)
    return result


arccosh = _unary("arccosh", _arccosh, "inexact")


def _log_base(x: Any, inv_log_base: float) -> Any:
    if _is_complex(x.dtype):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        c = strong_const(re, inv_log_base)
        return lax.complex(lax.mul(re, c), lax.mul(im, c))
    return lax.mul(lax.log(x), strong_const(x, inv_log_base))


def _log2(x: Any) -> Any:
    if _is_complex(x.dtype):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(strong_const(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(x), lax.log(strong_const(x, 2)))


log2 = _unary("log2", _log2, "inexact")
# 1/log(10) rounded to the dtype, as JAX multiplies by it.
log10 = _unary("log10", lambda x: _log_base(x, 0.4342944819032518), "inexact")


def positive(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.positive``: the input as an array."""
    x, = promote_args("positive", x)
    return x


def square(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.square``; bool becomes int32."""
    x = ensure_arraylike("square", x)
    x, = promote_dtypes_numeric(x)
    return lax.square(x)


def reciprocal(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.reciprocal``; integers promote to float."""
    x = ensure_arraylike("reciprocal", x)
    x, = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


def absolute(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.absolute``: bool and unsigned inputs are returned unchanged."""
    if type(x) is Array and x.dtype in _INEXACT:
        return lax.abs(x)
    x = ensure_arraylike("absolute", x)
    if x.dtype == _BOOL or x.dtype in _UNSIGNED:
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001 - JAX's name


def floor(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.floor``: integer and bool inputs are returned unchanged."""
    x = ensure_arraylike("floor", x)
    if x.dtype in _INTEGRAL_OR_BOOL:
        return x
    return lax.floor(x)


def ceil(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.ceil``: integer and bool inputs are returned unchanged."""
    x = ensure_arraylike("ceil", x)
    if x.dtype in _INTEGRAL_OR_BOOL:
        return x
    return lax.ceil(x)


def trunc(x: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.trunc``: rounds toward zero; integers unchanged."""
    x = ensure_arraylike("trunc", x)
    if x.dtype in _INTEGRAL_OR_BOOL:
        return x
    return _where(lax.lt(x, const(x, 0)), lax.ceil(x), lax.floor(x))


def rint(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.rint``: half to even; integers and bool become the default float."""
    x = ensure_arraylike("rint", x)
    if x.dtype in _INTEGRAL_OR_BOOL:
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    if _is_complex(x.dtype):
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Any:  # noqa: A001
    """Mirrors ``jax.numpy.round``: half to even at ``decimals`` digits (by rescaling, as JAX)."""
    a = ensure_arraylike("round", a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = a.dtype
    if _is_int(dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a

    def round_float(x: Any) -> Any:
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        # float16 is rescaled in float32, as JAX does, to limit the precision lost.
        x = lax.convert_element_type(x, np.float32) if dtype == np.float16 else x
        factor = const(x, 10 ** decimals)
        res = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
        return lax.convert_element_type(res, dtype) if dtype == np.float16 else res

    if decimals > np.log10(float(dtypes.finfo(dtype).max)):
        return a  # rounding beyond the precision is a no-op
    if _is_complex(dtype):
        return lax.complex(round_float(lax.real(a)), round_float(lax.imag(a)))
    return round_float(a)


around = round


def clip(arr: ArrayLike | None = None, /, min: ArrayLike | None = None,  # noqa: A002
         max: ArrayLike | None = None) -> Any:  # noqa: A002
    """Mirrors ``jax.numpy.clip`` (JAX 0.10: the ``a_min``/``a_max`` keywords are gone)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    promotion.check_arraylike("clip", arr)
    if any(t is not None and _is_complex(dtypes.dtype(t)) for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max "
            "keywords. Complex values have no ordering and cannot be clipped. "
            "Please convert to a real value or array by taking the real or "
            "imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return promotion.ensure_array(arr)


# ---------------------------------------------------------------------------------------
# fmax / fmin and NaN handling


def fmax(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.fmax``: the maximum, ignoring a NaN operand."""
    return where(bitwise_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: ArrayLike, x2: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.fmin``: the minimum, ignoring a NaN operand."""
    return where(bitwise_or(less(x1, x2), isnan(x2)), x1, x2)


def isnan(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.isnan``."""
    x = ensure_arraylike("isnan", x)
    return lax.ne(x, x)


def isfinite(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.isfinite``; integers and bool are always finite."""
    x = ensure_arraylike("isfinite", x)
    if x.dtype in _COMPLEX:
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if x.dtype in _INEXACT:
        return lax.is_finite(x)
    return lax.full_like(x, True, dtype=_BOOL)


def isinf(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.isinf``; integers and bool are never infinite."""
    x = ensure_arraylike("isinf", x)
    if x.dtype in _COMPLEX:
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), strong_const(re, np.inf)),
                              lax.eq(lax.abs(im), strong_const(im, np.inf)))
    if x.dtype in _INEXACT:
        return lax.eq(lax.abs(x), strong_const(x, np.inf))
    return lax.full_like(x, False, dtype=_BOOL)


_INT_OF_BITS = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}


def signbit(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.signbit``: the sign bit of floats, x < 0 for integers."""
    x, = promote_args("signbit", x)
    dt = x.dtype
    if _is_int(dt):
        return lax.lt(x, strong_const(x, 0))
    if dt == _BOOL:
        return lax.full_like(x, False, dtype=_BOOL)
    if dt not in _INEXACT or _is_complex(dt):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dt}")
    info = dtypes.finfo(dt)
    int_type = _INT_OF_BITS[info.bits]
    bits = lax.bitcast_convert_type(x, int_type)
    return lax.lt(bits, strong_const(bits, 0))


# ---------------------------------------------------------------------------------------
# Complex parts and angles


def conjugate(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.conjugate``; real inputs are returned unchanged."""
    x = ensure_arraylike("conjugate", x)
    return lax.conj(x) if _is_complex(x.dtype) else x


conj = conjugate


def real(val: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.real``; real inputs are returned unchanged."""
    val = ensure_arraylike("real", val)
    return lax.real(val) if _is_complex(val.dtype) else val


def imag(val: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.imag``; real inputs give zeros of their dtype."""
    val = ensure_arraylike("imag", val)
    return lax.imag(val) if _is_complex(val.dtype) else lax.full_like(val, 0)


def angle(z: ArrayLike, deg: bool = False) -> Any:
    """Mirrors ``jax.numpy.angle``: atan2(imag, real), in degrees when ``deg``."""
    z = ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    dt = re.dtype
    if dt not in _INEXACT or (z.dtype not in _COMPLEX and z.ndim == 0):
        # JAX's quirk: non-complex 0-d inputs also go to the default float dtype.
        dt = dtypes.default_float_dtype()
        re = lax.convert_element_type(re, dt)
        im = lax.convert_element_type(im, dt)
    result = lax.atan2(im, re)
    return rad2deg(result) if deg else result


def deg2rad(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.deg2rad``."""
    x, = promote_args_inexact("deg2rad", x)
    return lax.mul(x, const(x, np.pi / 180))


def rad2deg(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.rad2deg``."""
    x, = promote_args_inexact("rad2deg", x)
    return lax.mul(x, const(x, 180 / np.pi))


def degrees(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.degrees`` (an alias of rad2deg)."""
    return rad2deg(x)


def radians(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.radians`` (an alias of deg2rad)."""
    return deg2rad(x)


def sinc(x: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.sinc``: sin(pi x)/(pi x), 1 at zero.

    Differs from JAX: JAX gives the zero point a custom derivative rule (its Maclaurin
    series) so all derivatives are exact there; here the derivatives at 0 are those of
    the ``where`` (first derivative 0, as in JAX; higher ones may differ).
    """
    x = ensure_arraylike("sinc", x)
    x, = promote_dtypes_inexact(x)
    eq_zero = lax.eq(x, const(x, 0))
    pi_x = lax.mul(const(x, np.pi), x)
    safe_pi_x = _where(eq_zero, const(x, 1), pi_x)
    # JAX's _sinc_maclaurin(0, pi_x): pi_x * 0 + 1 keeps the shape and tangent of x.
    at_zero = add(multiply(pi_x, 0), const(pi_x, 1.0))
    return _where(eq_zero, at_zero, lax.div(lax.sin(safe_pi_x), safe_pi_x))
