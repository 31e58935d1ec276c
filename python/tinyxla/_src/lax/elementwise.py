"""The elementwise primitives: unary and binary arithmetic, comparisons, bit operations,
special functions, ``integer_pow``, ``pow``, ``conj``, ``stop_gradient``, ``select_n`` and
``clamp``.

Mirrors the elementwise part of ``jax._src.lax.lax``: each primitive with its abstract eval,
impl, lowering, JVP, transpose and batching rules, and its public function beside it. Under
the EvalTrace an impl makes one ``_core`` call and wraps the handle; it checks dtypes with
one lookup in a precomputed table (accepted dtype -> result dtype) and lets the C++ op
check shapes; anything rejected runs the abstract-eval rule to raise JAX's error.

A Python scalar operand is a weak-typed value of its default dtype, as in JAX (so
``lax.add(f32_array, 1)`` is a dtype error and ``lax.add(f32_array, 1.0)`` is not); the
binary impls hand such scalars straight to C++, which is what makes ``x + 1.0`` cheap.
A result is weak-typed iff all its array inputs are.
"""
from __future__ import annotations

import builtins
import enum
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import ad_util, dtypes, tree_util
from tinyxla._src.array import _CODE, Array, _wrap
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.lowering import register_emitter, register_lowering
from tinyxla._src.lax import reductions, shape_ops
from tinyxla._src.lax.conversion import _const, _convert_element_type, asarray
from tinyxla._src.lax.eager import (
    EAGER, _BINARY_OP, _I32, _PY_DTYPE, _PY_SCALARS, _UNARY_OP, _colocated, _operand, _reject,
    _result)
from tinyxla._src.lax.type_rules import (
    _ABS, _ANY, _BOOL, _BOOL_OR_INT, _COMPLEX, _COMPLEX_DTYPES, _COMPLEX_ELEM, _CONJ, _FLOAT,
    _FLOAT_COMPLEX, _INT, _INT_FLOAT, _NUM, _ORDERED, _Accepted, _broadcasting_shape,
    _check_naryop_dtypes, _check_same_dtypes, _check_unop_dtype, _complex_dtype, _dtype,
    _real_dtype, _result_table, _shape, _weak)

_BOOL_CODE = _CODE[_BOOL]
_COMPLEX_CODES = tuple(_CODE[dt] for dt in _COMPLEX_DTYPES)


# ----------------------------------------------------------------------------------------
# Building blocks of the differentiation rules (JAX's _zeros, _unbroadcast, ...).

def _replace_zero(x: Any) -> Any:
    """``x`` with its zeros replaced by ones (a safe divisor)."""
    return select(eq(x, _const(x, 0)), shape_ops._ones(x), x)


def _broadcast_shapes(*xs: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(_shape(x) for x in xs)))


def _brcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` (0-d, or of the same rank with size-1 axes) broadcast to ``shape``."""
    x_shape = _shape(x)
    if x_shape == tuple(shape):
        return x
    if not x_shape:
        return shape_ops.broadcast_in_dim(x, shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    kept = shape_ops.reshape(x, [x_shape[i] for i in dims])
    return shape_ops.broadcast_in_dim(kept, shape, dims)


def _unbroadcast(aval: Any, x: Any) -> Any:
    """The cotangent ``x`` of an operand that was broadcast, summed back to ``aval``."""
    x_shape = _shape(x)
    if x_shape == aval.shape:
        return x
    if not aval.shape:
        return reductions.reduce_sum(x, tuple(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape)) if a != b]
    return shape_ops.reshape(reductions.reduce_sum(x, dims), aval.shape)


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x == z != y, 1/2 where x == z == y, else 0: max/min share ties."""
    return div(select(eq(x, z), shape_ops._ones(z), shape_ops._zeros(z)),
               select(eq(y, z), shape_ops.full_like(z, 2), shape_ops._ones(z)))


def _is_complex(x: Any) -> bool:
    return dtypes.issubdtype(_dtype(x), np.complexfloating)


# ----------------------------------------------------------------------------------------
# Unary primitives.

def _unop(name: str, accepted: _Accepted, opcode: str | None = None,
          result_dtype: Callable[[np.dtype], np.dtype] | None = None,
          emit: Callable[..., Any] | None = None) -> Primitive:
    """A unary elementwise primitive: the C++ ``unary(opcode)``, or the ops ``emit(ops, x,
    **params)`` writes (run eagerly on ``EAGER`` and lowered on the graph builder)."""
    prim = Primitive(name)
    op = _UNARY_OP[opcode or name]
    table = _result_table(accepted, result_dtype)

    def abstract_eval(x: Any, **params: Any) -> ShapedArray:
        _check_unop_dtype(name, accepted, x.dtype)
        dt = x.dtype if result_dtype is None else result_dtype(x.dtype)
        return ShapedArray(x.shape, dt, x.weak_type)

    def impl(x: Any, **params: Any) -> Array:
        if type(x) is not Array:
            x = _operand(prim, 0, x)
        out_dtype = table.get(x.dtype)
        if out_dtype is None:
            _reject(prim, (x,), params)
        h = _core.unary(op, x._h) if emit is None else emit(EAGER, x._h, **params)
        out = _wrap(h, x.weak_type, out_dtype)
        out._committed = x._committed
        return out

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    batching.defvectorized(prim)
    if emit is None:
        register_lowering(prim, lambda ctx, x, **params: ctx.builder.unary(op, x))
    else:
        register_emitter(prim, emit)
    return prim


neg_p = _unop('neg', _NUM)
sign_p = _unop('sign', _NUM)
floor_p = _unop('floor', _FLOAT)
ceil_p = _unop('ceil', _FLOAT)
is_finite_p = _unop('is_finite', _FLOAT, result_dtype=lambda _: dtypes.bool_dtype)
exp_p = _unop('exp', _FLOAT_COMPLEX)
exp2_p = _unop('exp2', _FLOAT_COMPLEX)
log_p = _unop('log', _FLOAT_COMPLEX)
log1p_p = _unop('log1p', _FLOAT_COMPLEX)
expm1_p = _unop('expm1', _FLOAT_COMPLEX)
tanh_p = _unop('tanh', _FLOAT_COMPLEX)
logistic_p = _unop('logistic', _FLOAT_COMPLEX)
sin_p = _unop('sin', _FLOAT_COMPLEX)
cos_p = _unop('cos', _FLOAT_COMPLEX)
tan_p = _unop('tan', _FLOAT_COMPLEX)
asin_p = _unop('asin', _FLOAT_COMPLEX)
acos_p = _unop('acos', _FLOAT_COMPLEX)
atan_p = _unop('atan', _FLOAT_COMPLEX)
sinh_p = _unop('sinh', _FLOAT_COMPLEX)
cosh_p = _unop('cosh', _FLOAT_COMPLEX)
asinh_p = _unop('asinh', _FLOAT_COMPLEX)
acosh_p = _unop('acosh', _FLOAT_COMPLEX)
atanh_p = _unop('atanh', _FLOAT_COMPLEX)
sqrt_p = _unop('sqrt', _FLOAT_COMPLEX)
rsqrt_p = _unop('rsqrt', _FLOAT_COMPLEX)
cbrt_p = _unop('cbrt', _FLOAT)
real_p = _unop('real', _COMPLEX, result_dtype=_real_dtype)
imag_p = _unop('imag', _COMPLEX, result_dtype=_real_dtype)
abs_p = _unop('abs', _ABS, result_dtype=_real_dtype)
square_p = _unop('square', _NUM)
population_count_p = _unop('population_count', _INT)
clz_p = _unop('clz', _INT)
erf_p = _unop('erf', _FLOAT)
erfc_p = _unop('erfc', _FLOAT)
erf_inv_p = _unop('erf_inv', _FLOAT)
lgamma_p = _unop('lgamma', _FLOAT)
digamma_p = _unop('digamma', _FLOAT)


def neg(x: Any) -> Any:
    """Elementwise negation: -x (``jax.lax.neg``)."""
    return neg_p.bind(x)


def sign(x: Any) -> Any:
    """Elementwise sign (``jax.lax.sign``)."""
    return sign_p.bind(x)


def floor(x: Any) -> Any:
    """Elementwise floor (``jax.lax.floor``)."""
    return floor_p.bind(x)


def ceil(x: Any) -> Any:
    """Elementwise ceiling (``jax.lax.ceil``)."""
    return ceil_p.bind(x)


def is_finite(x: Any) -> Any:
    """Elementwise isfinite (``jax.lax.is_finite``)."""
    return is_finite_p.bind(x)


def _accuracy_params(accuracy: Any) -> dict:
    # JAX's ``accuracy`` parameter only selects between implementations; tinyxla has one.
    return {} if accuracy is None else {"accuracy": accuracy}


def exp(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise e**x (``jax.lax.exp``)."""
    return exp_p.bind(x, **_accuracy_params(accuracy))


def exp2(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise 2**x (``jax.lax.exp2``)."""
    return exp2_p.bind(x, **_accuracy_params(accuracy))


def log(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise natural logarithm (``jax.lax.log``)."""
    return log_p.bind(x, **_accuracy_params(accuracy))


def log1p(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise log(1 + x) (``jax.lax.log1p``)."""
    return log1p_p.bind(x, **_accuracy_params(accuracy))


def expm1(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise e**x - 1 (``jax.lax.expm1``)."""
    return expm1_p.bind(x, **_accuracy_params(accuracy))


def tanh(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise hyperbolic tangent (``jax.lax.tanh``)."""
    return tanh_p.bind(x, **_accuracy_params(accuracy))


def logistic(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise 1 / (1 + e**-x) (``jax.lax.logistic``)."""
    return logistic_p.bind(x, **_accuracy_params(accuracy))


def sin(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise sine (``jax.lax.sin``)."""
    return sin_p.bind(x, **_accuracy_params(accuracy))


def cos(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise cosine (``jax.lax.cos``)."""
    return cos_p.bind(x, **_accuracy_params(accuracy))


def tan(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise tangent (``jax.lax.tan``)."""
    return tan_p.bind(x, **_accuracy_params(accuracy))


def asin(x: Any) -> Any:
    """Elementwise arc sine (``jax.lax.asin``)."""
    return asin_p.bind(x)


def acos(x: Any) -> Any:
    """Elementwise arc cosine (``jax.lax.acos``)."""
    return acos_p.bind(x)


def atan(x: Any) -> Any:
    """Elementwise arc tangent (``jax.lax.atan``)."""
    return atan_p.bind(x)


def sinh(x: Any) -> Any:
    """Elementwise hyperbolic sine (``jax.lax.sinh``)."""
    return sinh_p.bind(x)


def cosh(x: Any) -> Any:
    """Elementwise hyperbolic cosine (``jax.lax.cosh``)."""
    return cosh_p.bind(x)


def asinh(x: Any) -> Any:
    """Elementwise inverse hyperbolic sine (``jax.lax.asinh``)."""
    return asinh_p.bind(x)


def acosh(x: Any) -> Any:
    """Elementwise inverse hyperbolic cosine (``jax.lax.acosh``)."""
    return acosh_p.bind(x)


def atanh(x: Any) -> Any:
    """Elementwise inverse hyperbolic tangent (``jax.lax.atanh``)."""
    return atanh_p.bind(x)


def sqrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise square root (``jax.lax.sqrt``)."""
    return sqrt_p.bind(x, **_accuracy_params(accuracy))


def rsqrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise 1 / sqrt(x) (``jax.lax.rsqrt``)."""
    return rsqrt_p.bind(x, **_accuracy_params(accuracy))


def cbrt(x: Any, *, accuracy: Any = None) -> Any:
    """Elementwise cube root (``jax.lax.cbrt``)."""
    return cbrt_p.bind(x, **_accuracy_params(accuracy))


def erf(x: Any) -> Any:
    """Elementwise error function (``jax.lax.erf``)."""
    return erf_p.bind(x)


def erfc(x: Any) -> Any:
    """Elementwise complementary error function (``jax.lax.erfc``)."""
    return erfc_p.bind(x)


def erf_inv(x: Any) -> Any:
    """Elementwise inverse error function (``jax.lax.erf_inv``)."""
    return erf_inv_p.bind(x)


def lgamma(x: Any) -> Any:
    """Elementwise log of the absolute gamma function (``jax.lax.lgamma``)."""
    return lgamma_p.bind(x)


def digamma(x: Any) -> Any:
    """Elementwise digamma function (``jax.lax.digamma``)."""
    return digamma_p.bind(x)


def real(x: Any) -> Any:
    """Elementwise real part of a complex array (``jax.lax.real``)."""
    return real_p.bind(x)


def imag(x: Any) -> Any:
    """Elementwise imaginary part of a complex array (``jax.lax.imag``)."""
    return imag_p.bind(x)


def abs(x: Any) -> Any:
    """Elementwise absolute value; complex operands give their magnitude (``jax.lax.abs``)."""
    return abs_p.bind(x)


def square(x: Any) -> Any:
    """Elementwise x * x (``jax.lax.square``)."""
    return square_p.bind(x)


def population_count(x: Any) -> Any:
    """Elementwise count of set bits (``jax.lax.population_count``)."""
    return population_count_p.bind(x)


def clz(x: Any) -> Any:
    """Elementwise count of leading zero bits (``jax.lax.clz``)."""
    return clz_p.bind(x)


def _not_emit(ops: Any, x: Any) -> Any:
    logical = ops.dtype_code(x) == _BOOL_CODE
    return ops.unary(_UNARY_OP['logical_not' if logical else 'bitwise_not'], x)


not_p = _unop('not', _BOOL_OR_INT, 'bitwise_not', emit=_not_emit)


def bitwise_not(x: Any) -> Any:
    """Elementwise NOT; logical for bool (``jax.lax.bitwise_not``)."""
    return not_p.bind(x)


class RoundingMethod(enum.IntEnum):
    """How ``round`` treats halfway values (``jax.lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_emit(ops: Any, x: Any, *, rounding_method: RoundingMethod) -> Any:
    even = rounding_method == RoundingMethod.TO_NEAREST_EVEN
    return ops.unary(_UNARY_OP['round_even' if even else 'round'], x)


round_p = _unop('round', _FLOAT, emit=_round_emit)


ad.deflinear2(neg_p, lambda t, operand: [neg(t)])
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p, population_count_p, clz_p):
    ad.defjvp_zero(_p)
ad.defjvp2(exp_p, lambda g, ans, x, **params: mul(g, ans))
ad.defjvp2(exp2_p, lambda g, ans, x, **params: mul(g, mul(ans, _const(x, np.log(2)))))
ad.defjvp(log_p, lambda g, x, **params: div(g, x))
ad.defjvp(log1p_p, lambda g, x, **params: div(g, add(x, _const(x, 1))))
ad.defjvp2(expm1_p, lambda g, ans, x, **params: mul(g, add(ans, _const(ans, 1))))
ad.defjvp2(tanh_p, lambda g, ans, x, **params: mul(add(g, mul(g, ans)), sub(_const(x, 1), ans)))
ad.defjvp2(logistic_p,
           lambda g, ans, x, **params: mul(g, mul(ans, sub(_const(ans, 1), ans))))
ad.defjvp(sin_p, lambda g, x, **params: mul(g, cos_p.bind(x, **params)))
ad.defjvp(cos_p, lambda g, x, **params: neg(mul(g, sin_p.bind(x, **params))))
ad.defjvp2(tan_p, lambda g, ans, x, **params: mul(g, add(_const(x, 1), square(ans))))
ad.defjvp(asin_p, lambda g, x, **params: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(acos_p, lambda g, x, **params: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(atan_p, lambda g, x, **params: div(g, add(_const(x, 1), square(x))))
ad.defjvp(sinh_p, lambda g, x, **params: mul(g, cosh(x)))
ad.defjvp(cosh_p, lambda g, x, **params: mul(g, sinh(x)))
ad.defjvp(asinh_p, lambda g, x, **params: mul(g, rsqrt(add(square(x), _const(x, 1)))))
ad.defjvp(acosh_p, lambda g, x, **params: mul(g, rsqrt(sub(square(x), _const(x, 1)))))
ad.defjvp(atanh_p, lambda g, x, **params: mul(div(_const(x, 1), add(_const(x, 1), x)),
                                              div(g, sub(_const(x, 1), x))))
ad.defjvp2(sqrt_p, lambda g, ans, x, **params: mul(g, div(_const(x, 0.5), ans)))
ad.defjvp2(rsqrt_p, lambda g, ans, x, **params: mul(g, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(cbrt_p, lambda g, ans, x, **params: mul(g, mul(_const(x, 1 / 3),
                                                          integer_pow(ans, -2))))
ad.deflinear2(real_p, lambda t, _: [complex(t, _const(t, 0))])
ad.deflinear2(imag_p, lambda t, _: [complex(_const(t, 0), neg(t))])


def round(x: Any, rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Elementwise round to an integer value (``jax.lax.round``); ``rounding_method`` is a
    RoundingMethod or its int value."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def _abs_jvp_rule(g: Any, ans: Any, x: Any) -> Any:
    if _is_complex(x):
        ans = _convert_element_type(ans, _dtype(x), False)
        return real(mul(g, div(conj(x), _replace_zero(ans))))
    return select(ge(x, _const(x, 0)), g, neg(g))


ad.defjvp2(abs_p, _abs_jvp_rule)
ad.defjvp2(square_p, lambda g, ans, x: mul(g, mul(_const(x, 2), x)))
ad.defjvp(erf_p, lambda g, x: mul(_const(x, 2 / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))
ad.defjvp(erfc_p, lambda g, x: mul(_const(x, -2 / np.sqrt(np.pi)),
                                   mul(g, exp(neg(square(x))))))
ad.defjvp2(erf_inv_p, lambda g, ans, x: mul(_const(x, np.sqrt(np.pi) / 2),
                                            mul(g, exp(square(ans)))))
ad.defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))


def _trigamma(x: Any) -> Any:
    """polygamma(1, x), the derivative of digamma, from differentiable primitives (there
    is no polygamma primitive yet): recurrence up to x + 6, then the asymptotic series;
    x < 1/2 by reflection, psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)."""
    reflect = lt(x, _const(x, 0.5))
    z = select(reflect, sub(_const(x, 1), x), x)
    acc = shape_ops._zeros(z)
    for k in range(6):
        acc = add(acc, integer_pow(add(z, _const(z, k)), -2))
    w = add(z, _const(z, 6))
    r = div(_const(w, 1), w)
    r2 = square(r)
    # 1/w + 1/(2w^2) + sum_k B_2k / w^(2k+1)
    series = _const(w, 5 / 66)
    for c in (-1 / 30, 1 / 42, -1 / 30, 1 / 6):
        series = add(_const(w, c), mul(series, r2))
    psi1 = add(acc, add(r, mul(r2, add(_const(w, 0.5), mul(r, series)))))
    s = sin(mul(_const(x, np.pi), x))
    return select(reflect, sub(div(_const(x, np.pi ** 2), square(s)), psi1), psi1)


ad.defjvp(digamma_p, lambda g, x: mul(g, _trigamma(x)))


def _conj_abstract_eval(x: Any, *, input_dtype: Any) -> ShapedArray:
    _check_unop_dtype('conj', _CONJ, x.dtype)
    return ShapedArray(x.shape, _complex_dtype(x.dtype), x.weak_type)


def _conj_emit(ops: Any, x: Any, *, input_dtype: Any) -> Any:
    if ops.dtype_code(x) in _COMPLEX_CODES:
        return ops.unary(_UNARY_OP['conj'], x)
    # A real operand: conj(x) is complex(x, 0).
    return ops.binary(_BINARY_OP['complex'], x, ops.full_like(x, 0))


def _conj_impl(x: Any, *, input_dtype: Any) -> Array:
    if type(x) is not Array:
        x = _operand(conj_p, 0, x)
    dt = x.dtype
    if dt not in _CONJ.dtypes:
        _reject(conj_p, (x,), {"input_dtype": input_dtype})
    return _result(_conj_emit(EAGER, x._h, input_dtype=input_dtype), x.weak_type,
                   _complex_dtype(dt), (x,))


conj_p = Primitive('conj')
conj_p.def_abstract_eval(_conj_abstract_eval)
conj_p.def_impl(_conj_impl)
register_emitter(conj_p, _conj_emit)


def _conj_transpose_rule(t: Any, x: Any, *, input_dtype: Any) -> list[Any]:
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(t)]
    return [real(t)]


ad.deflinear2(conj_p, _conj_transpose_rule)
batching.defvectorized(conj_p)


def conj(x: Any) -> Any:
    """Elementwise complex conjugate; real operands become complex (``jax.lax.conj``)."""
    return conj_p.bind(x, input_dtype=_dtype(x))


def _integer_pow_abstract_eval(x: Any, *, y: int) -> ShapedArray:
    _check_unop_dtype('integer_pow', _NUM, x.dtype)
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.dtype.name}[{','.join(map(str, x.shape))}], {y})")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _integer_pow_emit(ops: Any, x: Any, *, y: int) -> Any:
    # Square-and-multiply with the same multiplications as JAX's lowering, so results agree.
    if y == 0:
        return ops.full_like(x, 1)
    mul = _BINARY_OP['mul']
    n, acc = builtins.abs(y), None
    while n > 0:
        if n & 1:
            acc = x if acc is None else ops.binary(mul, acc, x)
        n >>= 1
        if n > 0:
            x = ops.binary(mul, x, x)
    return ops.binary(_BINARY_OP['div'], ops.full_like(acc, 1), acc) if y < 0 else acc


def _integer_pow_impl(x: Any, *, y: int) -> Array:
    if type(x) is not Array:
        x = _operand(integer_pow_p, 0, x)
    dt = x.dtype
    if dt not in _NUM.dtypes or (y < 0 and dt in _INT.dtypes):
        _reject(integer_pow_p, (x,), {"y": y})
    return _result(_integer_pow_emit(EAGER, x._h, y=y), x.weak_type, dt, (x,))


integer_pow_p = Primitive('integer_pow')
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
integer_pow_p.def_impl(_integer_pow_impl)
register_emitter(integer_pow_p, _integer_pow_emit)


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return ad.Zero.from_primal_value(x)
    if y == 1:
        return g
    if y == 2:
        return mul(g, mul(_const(x, 2), x))
    return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)


def integer_pow(x: Any, y: int) -> Any:
    """Elementwise x**y for a static integer y (``jax.lax.integer_pow``)."""
    return integer_pow_p.bind(x, y=y)


def _stop_gradient_impl(x: Any) -> Array:
    return x if type(x) is Array else _operand(stop_gradient_p, 0, x)


stop_gradient_p = Primitive('stop_gradient')
stop_gradient_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
stop_gradient_p.def_impl(_stop_gradient_impl)
register_lowering(stop_gradient_p, lambda ctx, x: x)


def _stop_gradient_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    # Binding again peels the value off any outer differentiation too.
    out = stop_gradient_p.bind(primals[0])
    return out, ad.Zero.from_primal_value(out)


ad.primitive_jvps[stop_gradient_p] = _stop_gradient_jvp
batching.defvectorized(stop_gradient_p)


def stop_gradient(x: Any) -> Any:
    """Every leaf of the pytree ``x``, with zero gradient (``jax.lax.stop_gradient``).

    Today it is the identity on values; the AD rules give it its meaning.
    """
    return tree_util.tree_map(lambda leaf: stop_gradient_p.bind(asarray(leaf)), x)


# ----------------------------------------------------------------------------------------
# Binary primitives.

def _naryop_abstract_eval(name: str, accepted: Sequence[_Accepted],
                          result_dtype: Callable[..., np.dtype] | None = None,
                          require_same: bool = True) -> Callable[..., ShapedArray]:
    def abstract_eval(*avals: Any, **params: Any) -> ShapedArray:
        shape = _broadcasting_shape(name, *avals)
        _check_naryop_dtypes(name, accepted, avals)
        if require_same and params.get('out_dtype') is None:
            _check_same_dtypes(name, *avals)
        dt = avals[0].dtype if result_dtype is None else result_dtype(*avals)
        return ShapedArray(shape, dt, _weak(*avals))
    return abstract_eval


def _binop(name: str, accepted: _Accepted, opcode: str | None = None,
           result_dtype: Callable[..., np.dtype] | None = None) -> Primitive:
    """A binary elementwise primitive whose impl is ``_core.binary(opcode)``."""
    prim = Primitive(name)
    prim.def_abstract_eval(_naryop_abstract_eval(name, (accepted, accepted), result_dtype))
    table = _result_table(accepted, None if result_dtype is None else
                          lambda dt: result_dtype(ShapedArray((), dt), ShapedArray((), dt)))
    op = _BINARY_OP[opcode or name]
    prim.def_impl(_binary_impl(prim, op, table))
    batching.defbroadcasting(prim)
    register_lowering(prim, lambda ctx, x, y, **params: ctx.builder.binary(op, x, y))
    return prim


def _binary_impl(prim: Primitive, op: int, table: dict[np.dtype, np.dtype]) -> Callable[..., Array]:
    """The eager binary op: both operands of one dtype, or an Array and a Python scalar of
    the Array's dtype (handed to C++ as it is)."""
    def impl(x: Any, y: Any) -> Array:
        tx, ty = type(x), type(y)
        if tx is Array:
            dt = x.dtype
            out_dtype = table.get(dt)
            if ty is Array:
                if out_dtype is None or y.dtype is not dt:
                    _reject(prim, (x, y), {})
                xh, yh = x._h, y._h
                xn, yn = xh.ndim, yh.ndim
                if xn != yn and xn and yn:  # the runtime would broadcast across ranks
                    _reject(prim, (x, y), {})
                try:
                    out = _wrap(_core.binary(op, xh, yh), x.weak_type and y.weak_type, out_dtype)
                except (ValueError, TypeError) as e:  # different devices or incompatible shapes
                    moved = _colocated(prim, (x, y))
                    if moved is not None:
                        return impl(*moved)
                    _reject(prim, (x, y), {}, e)
                    raise
                out._committed = x._committed or y._committed
                return out
            if ty in _PY_SCALARS:
                if out_dtype is None or _PY_DTYPE[ty] is not dt:
                    _reject(prim, (x, y), {})
                out = _wrap(_core.binary(op, x._h, y), x.weak_type and ty is not bool, out_dtype)
                out._committed = x._committed
                return out
        elif tx in _PY_SCALARS and ty is Array:
            dt = y.dtype
            out_dtype = table.get(dt)
            if out_dtype is None or _PY_DTYPE[tx] is not dt:
                _reject(prim, (x, y), {})
            out = _wrap(_core.binary(op, x, y._h), y.weak_type and tx is not bool, out_dtype)
            out._committed = y._committed
            return out
        return impl(_operand(prim, 0, x), _operand(prim, 1, y))
    return impl


def _bool_result(*avals: Any) -> np.dtype:
    return dtypes.bool_dtype


add_p = _binop('add', _NUM)
sub_p = _binop('sub', _NUM)
mul_p = _binop('mul', _NUM)
div_p = _binop('div', _NUM)
rem_p = _binop('rem', _INT_FLOAT)
max_p = _binop('max', _ANY)
min_p = _binop('min', _ANY)
atan2_p = _binop('atan2', _FLOAT_COMPLEX)
nextafter_p = _binop('nextafter', _FLOAT)
and_p = _binop('and', _BOOL_OR_INT, 'and_')
or_p = _binop('or', _BOOL_OR_INT, 'or_')
xor_p = _binop('xor', _BOOL_OR_INT, 'xor_')
shift_left_p = _binop('shift_left', _INT)
shift_right_arithmetic_p = _binop('shift_right_arithmetic', _INT)
shift_right_logical_p = _binop('shift_right_logical', _INT)
eq_p = _binop('eq', _ANY, result_dtype=_bool_result)
ne_p = _binop('ne', _ANY, result_dtype=_bool_result)
lt_p = _binop('lt', _ORDERED, result_dtype=_bool_result)
le_p = _binop('le', _ORDERED, result_dtype=_bool_result)
gt_p = _binop('gt', _ORDERED, result_dtype=_bool_result)
ge_p = _binop('ge', _ORDERED, result_dtype=_bool_result)
complex_p = _binop('complex', _COMPLEX_ELEM,
                   result_dtype=lambda x, y: _complex_dtype(x.dtype))


def add(x: Any, y: Any) -> Any:
    """Elementwise x + y; dtypes must match (``jax.lax.add``)."""
    return add_p.bind(x, y)


def sub(x: Any, y: Any) -> Any:
    """Elementwise x - y (``jax.lax.sub``)."""
    return sub_p.bind(x, y)


def mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """Elementwise x * y; ``out_dtype`` multiplies in that dtype (``jax.lax.mul``)."""
    if out_dtype is None:
        return mul_p.bind(x, y)
    return mul_p.bind(x, y, out_dtype=dtypes.check_user_dtype_supported(out_dtype, 'mul'))


def div(x: Any, y: Any) -> Any:
    """Elementwise x / y; integers round toward zero (``jax.lax.div``)."""
    return div_p.bind(x, y)


def rem(x: Any, y: Any) -> Any:
    """Elementwise remainder with the sign of x, like C's fmod (``jax.lax.rem``)."""
    return rem_p.bind(x, y)


def max(x: Any, y: Any) -> Any:
    """Elementwise maximum; NaN propagates (``jax.lax.max``)."""
    return max_p.bind(x, y)


def min(x: Any, y: Any) -> Any:
    """Elementwise minimum; NaN propagates (``jax.lax.min``)."""
    return min_p.bind(x, y)


def atan2(x: Any, y: Any) -> Any:
    """Elementwise two-argument arc tangent of x / y (``jax.lax.atan2``)."""
    return atan2_p.bind(x, y)


def nextafter(x1: Any, x2: Any) -> Any:
    """Elementwise next representable value after x1 towards x2 (``jax.lax.nextafter``)."""
    return nextafter_p.bind(x1, x2)


def bitwise_and(x: Any, y: Any) -> Any:
    """Elementwise AND; logical for bool (``jax.lax.bitwise_and``)."""
    return and_p.bind(x, y)


def bitwise_or(x: Any, y: Any) -> Any:
    """Elementwise OR; logical for bool (``jax.lax.bitwise_or``)."""
    return or_p.bind(x, y)


def bitwise_xor(x: Any, y: Any) -> Any:
    """Elementwise XOR; logical for bool (``jax.lax.bitwise_xor``)."""
    return xor_p.bind(x, y)


def shift_left(x: Any, y: Any) -> Any:
    """Elementwise x << y; shifts of the bit width or more give 0 (``jax.lax.shift_left``)."""
    return shift_left_p.bind(x, y)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """Elementwise sign-extending x >> y (``jax.lax.shift_right_arithmetic``)."""
    return shift_right_arithmetic_p.bind(x, y)


def shift_right_logical(x: Any, y: Any) -> Any:
    """Elementwise zero-filling x >> y (``jax.lax.shift_right_logical``)."""
    return shift_right_logical_p.bind(x, y)


def eq(x: Any, y: Any) -> Any:
    """Elementwise x == y (``jax.lax.eq``)."""
    return eq_p.bind(x, y)


def ne(x: Any, y: Any) -> Any:
    """Elementwise x != y (``jax.lax.ne``)."""
    return ne_p.bind(x, y)


def lt(x: Any, y: Any) -> Any:
    """Elementwise x < y (``jax.lax.lt``)."""
    return lt_p.bind(x, y)


def le(x: Any, y: Any) -> Any:
    """Elementwise x <= y (``jax.lax.le``)."""
    return le_p.bind(x, y)


def gt(x: Any, y: Any) -> Any:
    """Elementwise x > y (``jax.lax.gt``)."""
    return gt_p.bind(x, y)


def ge(x: Any, y: Any) -> Any:
    """Elementwise x >= y (``jax.lax.ge``)."""
    return ge_p.bind(x, y)


def complex(x: Any, y: Any) -> Any:
    """Elementwise x + i*y (``jax.lax.complex``)."""
    return complex_p.bind(x, y)


def _add_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    xdot, ydot = tangents
    out = add_p.bind(*primals)
    if type(xdot) is ad.Zero:
        return out, _brcast_to(ydot, _shape(out))
    if type(ydot) is ad.Zero:
        return out, _brcast_to(xdot, _shape(out))
    return out, add(xdot, ydot)


def _add_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    return [_unbroadcast(x.aval, t) if ad.is_undefined_primal(x) else None,
            _unbroadcast(y.aval, t) if ad.is_undefined_primal(y) else None]


def _sub_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    xdot, ydot = tangents
    out = sub_p.bind(*primals)
    if type(xdot) is ad.Zero:
        return out, _brcast_to(neg(ydot), _shape(out))
    if type(ydot) is ad.Zero:
        return out, _brcast_to(xdot, _shape(out))
    return out, sub(xdot, ydot)


def _sub_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    return [_unbroadcast(x.aval, t) if ad.is_undefined_primal(x) else None,
            _unbroadcast(y.aval, neg(t)) if ad.is_undefined_primal(y) else None]


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if ad.is_undefined_primal(y):
        raise RuntimeError("nonlinear div can't be transposed")
    return [_unbroadcast(x.aval, div(ct, y)), None]


def _complex_transpose(t: Any, x: Any, y: Any) -> list[Any]:
    return [_unbroadcast(x.aval, real(t)) if ad.is_undefined_primal(x) else None,
            _unbroadcast(y.aval, imag(neg(t))) if ad.is_undefined_primal(y) else None]


ad.primitive_jvps[add_p] = _add_jvp
ad.primitive_transposes[add_p] = _add_transpose
ad_util.add_jaxvals_p.def_impl(add_p.impl)  # the sum of tangents, eagerly
ad.primitive_jvps[sub_p] = _sub_jvp
ad.primitive_transposes[sub_p] = _sub_transpose
ad.defjvp(div_p, lambda g, x, y: div(g, y),
          lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
ad.primitive_transposes[div_p] = _div_transpose
ad.defjvp(rem_p, lambda g, x, y: _brcast_to(g, _broadcast_shapes(x, y)),
          lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))
ad.defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp(atan2_p, lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
ad.deflinear2(complex_p, _complex_transpose)
for _p in (nextafter_p, and_p, or_p, xor_p, shift_left_p, shift_right_arithmetic_p,
           shift_right_logical_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    ad.defjvp_zero(_p)


_mul_same_dtype = mul_p.impl
_mul_naryop_abstract_eval = mul_p.abstract_eval


def _mul_impl(x: Any, y: Any, *, out_dtype: Any = None) -> Array:
    # mul(x, y, out_dtype=t) multiplies after converting both operands to t, as JAX's
    # CPU lowering does.
    if out_dtype is not None:
        x = _convert_element_type(x, out_dtype, False)
        y = _convert_element_type(y, out_dtype, False)
    return _mul_same_dtype(x, y)


mul_p.def_impl(_mul_impl)


def _mul_abstract_eval(x: Any, y: Any, *, out_dtype: Any = None) -> ShapedArray:
    out = _mul_naryop_abstract_eval(x, y, out_dtype=out_dtype)
    return out if out_dtype is None else out.update(dtype=out_dtype)


mul_p.def_abstract_eval(_mul_abstract_eval)


def _mul_lowering(ctx: lowering.LoweringContext, x: int, y: int, *, out_dtype: Any = None) -> int:
    b = ctx.builder
    if out_dtype is not None:
        x, y = b.convert(x, _CODE[np.dtype(out_dtype)]), b.convert(y, _CODE[np.dtype(out_dtype)])
    return b.binary(_BINARY_OP['mul'], x, y)


register_lowering(mul_p, _mul_lowering)


def _mul_transpose_lhs(ct: Any, x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    g = mul(ct, y, out_dtype=None if out_dtype is None else x.aval.dtype)
    return _unbroadcast(x.aval, g)


def _mul_transpose_rhs(ct: Any, x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    g = mul(x, ct, out_dtype=None if out_dtype is None else y.aval.dtype)
    return _unbroadcast(y.aval, g)


ad.defbilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)


def _logaddexp(x1: Any, x2: Any) -> Any:
    """log(exp(x1) + exp(x2)) of real operands from lax ops: ``jnp.logaddexp``'s real
    case and the combine of ``cumlogsumexp``'s derivative."""
    amax = max(x1, x2)
    delta = sub(x1, x2)
    # min - max is -|x1 - x2| exactly; unlike abs, its derivative at a tie is 0 (max and
    # min split it 1/2 each), so d/dx1 there is 1/2 as in JAX's custom JVP rule.
    neg_abs_delta = sub(min(x1, x2), amax)
    return select_n(ne(delta, delta), add(amax, log1p(exp(neg_abs_delta))),
                    add(x1, x2))  # NaNs, or infinities of one sign


def _pow_dtype_rule(x: Any, y: Any) -> np.dtype:
    if dtypes.issubdtype(x.dtype, np.inexact) and dtypes.issubdtype(y.dtype, np.integer):
        return x.dtype
    if x.dtype == y.dtype:
        return x.dtype
    raise TypeError("the first argument to pow must have an inexact dtype (float or "
                    "complex), and the second argument must have an inexact or integer "
                    "dtype, and two inexact dtypes must match, but got "
                    f"{x.dtype} and {y.dtype} respectively.")


def _pow_exponent(ops: Any, x: Any, y: Any) -> Any:
    """An integer exponent converted to the base's dtype, as XLA does."""
    code = ops.dtype_code(x)
    return y if ops.dtype_code(y) == code else ops.convert(y, code)


def _pow_emit(ops: Any, x: Any, y: Any) -> Any:
    return ops.binary(_BINARY_OP['pow'], x, _pow_exponent(ops, x, y))


def _pow_impl(x: Any, y: Any) -> Array:
    if type(x) is not Array:
        x = _operand(pow_p, 0, x)
    if type(y) is not Array:
        y = _operand(pow_p, 1, y)
    if x.dtype is not y.dtype:
        if x.dtype not in _FLOAT_COMPLEX.dtypes or y.dtype not in _INT.dtypes:
            _reject(pow_p, (x, y), {})
        y = _result(_pow_exponent(EAGER, x._h, y._h), y.weak_type, x.dtype, (y,))
    # Both of one dtype: the binary impl, with its shape checks and placement.
    return _pow_same_dtype(x, y)


pow_p = Primitive('pow')
pow_p.def_abstract_eval(_naryop_abstract_eval(
    'pow', (_FLOAT_COMPLEX, _NUM), _pow_dtype_rule, require_same=False))
pow_p.def_impl(_pow_impl)
_pow_same_dtype = _binary_impl(pow_p, _BINARY_OP['pow'], _result_table(_FLOAT_COMPLEX))


register_emitter(pow_p, _pow_emit)


def _pow_jvp_lhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    if dtypes.issubdtype(_dtype(y), np.integer):
        shape = _broadcast_shapes(x, y)
        x = _brcast_to(x, shape)
        y = _brcast_to(_convert_element_type(y, _dtype(x), False), shape)
        jac = select(eq(y, _const(y, 0)), shape_ops._zeros(y),
                     mul(_replace_zero(y), pow(x, sub(y, _const(y, 1)))))
    else:
        jac = mul(y, pow(x, sub(y, _const(y, 1))))
    return mul(g, jac)


def _pow_jvp_rhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    return _convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), _dtype(y), False)


ad.defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
batching.defbroadcasting(pow_p)


def pow(x: Any, y: Any) -> Any:
    """Elementwise x**y; y may be an integer array (``jax.lax.pow``)."""
    return pow_p.bind(x, y)


# ----------------------------------------------------------------------------------------
# select_n and clamp.

def _select_n_abstract_eval(which: Any, *cases: Any) -> ShapedArray:
    if len(cases) == 0:
        raise TypeError("select must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError(f"select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    _check_same_dtypes("select", *cases)
    if not (dtypes.issubdtype(which.dtype, np.bool_) or dtypes.issubdtype(which.dtype, np.integer)):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if dtypes.issubdtype(which.dtype, np.bool_) and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return ShapedArray(cases[0].shape, cases[0].dtype, _weak(*cases))


_SELECTOR_CODES = (_BOOL_CODE, _I32)  # the runtime takes bool or int32 selectors


def _select_n_emit(ops: Any, which: Any, *cases: Any) -> Any:
    if ops.dtype_code(which) not in _SELECTOR_CODES:
        which = ops.convert(which, _I32)
    return ops.select_n(which, list(cases))


def _select_n_impl(which: Any, *cases: Any) -> Array:
    args = (which, *cases)
    if type(which) is not Array:
        which = _operand(select_n_p, 0, which)
    cases = tuple(c if type(c) is Array else _operand(select_n_p, i + 1, c)
                  for i, c in enumerate(cases))
    wdt = which.dtype
    if (wdt not in _INT.dtypes and wdt is not _BOOL) or (wdt is _BOOL and len(cases) > 2):
        _reject(select_n_p, args, {})
    try:
        out = _select_n_emit(EAGER, which._h, *[c._h for c in cases])
    except (TypeError, ValueError) as e:
        moved = _colocated(select_n_p, (which, *cases))
        if moved is not None:
            return _select_n_impl(*moved)
        _reject(select_n_p, args, {}, e)
        raise
    return _result(out, all(c.weak_type for c in cases), cases[0].dtype, (which, *cases))


select_n_p = Primitive('select_n')
select_n_p.def_abstract_eval(_select_n_abstract_eval)
select_n_p.def_impl(_select_n_impl)
register_emitter(select_n_p, _select_n_emit)


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    nonzero = [t for t in case_tangents if type(t) is not ad.Zero]
    if not nonzero:
        return out, ad.Zero.from_primal_value(out)
    z = shape_ops._zeros(nonzero[0])
    return out, select_n_p.bind(which, *[z if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    zeros = shape_ops.full_like(ct, 0)
    if _dtype(which) == np.bool_:
        return [None,
                select(which, zeros, ct) if ad.is_undefined_primal(cases[0]) else None,
                select(which, ct, zeros) if ad.is_undefined_primal(cases[1]) else None]
    return [None] + [select(eq(which, _const(which, i)), ct, zeros)
                     if ad.is_undefined_primal(c) else None for i, c in enumerate(cases)]


ad.primitive_jvps[select_n_p] = _select_n_jvp
ad.primitive_transposes[select_n_p] = _select_n_transpose


def _select_n_batch_rule(vals: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, int]:
    """JAX's rule: bound as it is when every operand shares the batch axis (broadcasting a
    per-example scalar ``which``); otherwise batch axes go first and operands are
    broadcast to one shape."""
    which, *cases = vals
    which_bdim, *case_bdims = dims
    shape, ndim = batching.shape_of, batching.ndim_of
    if all(d == which_bdim for d in case_bdims):
        if shape(which) != shape(cases[0]):  # a scalar `which` per example
            which = shape_ops.broadcast_in_dim_p.bind(which, shape=shape(cases[0]),
                                                      broadcast_dimensions=(which_bdim,))
        return select_n_p.bind(which, *cases), which_bdim
    if not shape(which) and all(d is not None for d in case_bdims):
        bdim = case_bdims[0]
        cases = [batching.moveaxis(c, d, bdim) for c, d in zip(cases, case_bdims)]
        return select_n_p.bind(which, *cases), bdim
    size = batching.batch_size(vals, dims)
    if shape(which):
        which = batching.bdim_at_front(which, which_bdim, size)
    if any(shape(c) for c in cases):
        cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_bdims)]
    if 0 < ndim(which) < ndim(cases[0]):
        which = shape_ops.broadcast_in_dim_p.bind(which, shape=shape(cases[0]),
                                                  broadcast_dimensions=(0,))
    elif ndim(which) > ndim(cases[0]):  # scalar cases
        cases = [shape_ops.broadcast_in_dim_p.bind(c, shape=shape(which),
                                                   broadcast_dimensions=()) for c in cases]
    return select_n_p.bind(which, *cases), 0


batching.primitive_batchers[select_n_p] = _select_n_batch_rule


def select_n(which: Any, *cases: Any) -> Any:
    """Picks ``cases[which]`` elementwise; ``which`` is bool or integer (``jax.lax.select_n``)."""
    if len(cases) == 0:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Elementwise ``on_true if pred else on_false`` (``jax.lax.select``)."""
    return select_n_p.bind(pred, on_false, on_true)


def _clamp_abstract_eval(min: Any, operand: Any, max: Any) -> ShapedArray:
    if min.shape and min.shape != operand.shape:
        raise TypeError("clamp requires min.shape == operand.shape or min.shape == (), got "
                        f"min.shape={min.shape}, operand.shape={operand.shape}.")
    if max.shape and max.shape != operand.shape:
        raise TypeError("clamp requires max.shape == operand.shape or max.shape == (), got "
                        f"max.shape={max.shape}, operand.shape={operand.shape}.")
    _check_naryop_dtypes('clamp', (_ANY, _ANY, _ANY), (min, operand, max))
    _check_same_dtypes('clamp', min, operand, max)
    return ShapedArray(operand.shape, operand.dtype, _weak(min, operand, max))


def _clamp_impl(min: Any, x: Any, max: Any) -> Array:
    args = (min, x, max)
    lo, x, hi = (a if type(a) is Array else _operand(clamp_p, i, a) for i, a in enumerate(args))
    if lo.dtype is not x.dtype or hi.dtype is not x.dtype:
        _reject(clamp_p, args, {})
    try:
        out = _core.clamp(lo._h, x._h, hi._h)
    except (ValueError, TypeError) as e:
        moved = _colocated(clamp_p, (lo, x, hi))
        if moved is not None:
            return _clamp_impl(*moved)
        _reject(clamp_p, args, {}, e)
        raise
    return _result(out, lo.weak_type and x.weak_type and hi.weak_type, x.dtype, (lo, x, hi))


clamp_p = Primitive('clamp')
clamp_p.def_abstract_eval(_clamp_abstract_eval)
clamp_p.def_impl(_clamp_impl)
register_lowering(clamp_p, lambda ctx, lo, x, hi: ctx.builder.clamp(lo, x, hi))

ad.defjvp(clamp_p,
          lambda g, lo, x, hi: select(bitwise_and(gt(lo, x), lt(lo, hi)),
                                      _brcast_to(g, _shape(x)), shape_ops._zeros(x)),
          lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, shape_ops._zeros(x)),
          lambda g, lo, x, hi: select(lt(hi, x), _brcast_to(g, _shape(x)), shape_ops._zeros(x)))


def _clamp_batch_rule(vals: Sequence[Any], dims: Sequence[int | None]) -> tuple[Any, int]:
    """JAX's rule: bounds that are scalars per example stay scalars when ``x`` is
    batched; otherwise everything is brought to ``x``'s batched shape."""
    lo, x, hi = vals
    lo_d, x_d, hi_d = dims
    shape, ndim = batching.shape_of, batching.ndim_of
    if lo_d == x_d == hi_d and shape(lo) == shape(x) == shape(hi):
        return clamp_p.bind(lo, x, hi), x_d
    if lo_d is None and hi_d is None and not shape(lo) and not shape(hi):
        return clamp_p.bind(lo, x, hi), x_d
    size = batching.batch_size(vals, dims)
    lo = batching.bdim_at_front(lo, lo_d, size) if lo_d is not None or shape(lo) else lo
    hi = batching.bdim_at_front(hi, hi_d, size) if hi_d is not None or shape(hi) else hi
    x = batching.bdim_at_front(x, x_d, size)
    if 0 < ndim(lo) < ndim(x):
        lo = shape_ops.broadcast_in_dim_p.bind(lo, shape=shape(x), broadcast_dimensions=(0,))
    if 0 < ndim(hi) < ndim(x):
        hi = shape_ops.broadcast_in_dim_p.bind(hi, shape=shape(x), broadcast_dimensions=(0,))
    return clamp_p.bind(lo, x, hi), 0


batching.primitive_batchers[clamp_p] = _clamp_batch_rule


def clamp(min: Any, x: Any, max: Any) -> Any:
    """Elementwise min(max(x, min), max) with scalar or same-shape bounds (``jax.lax.clamp``)."""
    return clamp_p.bind(min, x, max)
