"""The lax primitives: for each one its Primitive, abstract-eval rule, eager impl and API.

Mirrors ``jax._src.lax.lax`` (and the ``slice`` and special-function primitives JAX keeps
in ``slicing.py`` / ``special.py``). Every public function binds its primitive; under the
EvalTrace the impl makes one ``_core`` call and wraps the handle. Impls never call the
abstract-eval rule on the way to a result: they check dtypes with one lookup in a
precomputed table (accepted dtype -> result dtype) and let the C++ op check shapes; when
anything is rejected the abstract-eval rule is run to raise JAX's own error class and text.

Operand conventions (the same for impls and abstract-eval rules):
- Arrays and tracers carry their dtype and weak type.
- A Python scalar is a weak-typed value of its default dtype (int32, float32, complex64,
  or their 64-bit forms with x64; a bool is strong bool), exactly as in JAX: so
  ``lax.add(f32_array, 1)`` is a dtype error and ``lax.add(f32_array, 1.0)`` is not. The
  binary impls hand such scalars straight to C++, which is what makes ``x + 1.0`` cheap.
- numpy arrays and scalars are strong values of their (canonicalized) dtype.

A primitive's output is weak-typed iff all its (array) inputs are. Abstract-eval rules
return ``core.ShapedArray``.
"""
from __future__ import annotations

import builtins
import enum
import operator
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array, _to_array, _wrap
from tinyxla._src.config import config
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.interpreters import batching
from tinyxla._src.interpreters import lowering
from tinyxla._src.interpreters.lowering import register_lowering

_UNARY_OP = {name: i for i, name in enumerate(_core.UNARY_OPS)}
_BINARY_OP = {name: i for i, name in enumerate(_core.BINARY_OPS)}
_REDUCE_OP = {name: i for i, name in enumerate(_core.REDUCE_OPS)}

_PY_SCALARS = frozenset({bool, int, float, complex})
_BOOL = dtypes.bool_dtype
_COMPLEX_DTYPES = (dtypes.complex64, dtypes.complex128)


# ----------------------------------------------------------------------------------------
# Dtype classes. The impls test membership in ``dtypes`` (the concrete dtypes, as the
# identical objects Arrays carry); the abstract-eval rules use JAX's abstract types.

class _Accepted(NamedTuple):
    """Dtypes a primitive accepts: JAX's abstract types, its listing of them, the dtypes."""
    types: tuple[type, ...]
    names: str  # the order JAX prints its type set in
    dtypes: frozenset[np.dtype]


def _accepted(types: tuple[type, ...], names: str) -> _Accepted:
    members = frozenset(dt for dt in _DTYPES if any(dtypes.issubdtype(dt, t) for t in types))
    return _Accepted(types, names, members)


def _result_table(accepted: _Accepted,
                  result_dtype: Callable[[np.dtype], np.dtype] | None = None
                  ) -> dict[np.dtype, np.dtype]:
    """Accepted input dtype -> output dtype: an impl's dtype check and result in one lookup."""
    return {dt: dt if result_dtype is None else _DTYPES[_CODE[np.dtype(result_dtype(dt))]]
            for dt in accepted.dtypes}


_FLOAT = _accepted((np.floating,), "floating")
_FLOAT_COMPLEX = _accepted((np.floating, np.complexfloating), "floating, complexfloating")
_COMPLEX = _accepted((np.complexfloating,), "complexfloating")
_INT = _accepted((np.integer,), "integer")
_NUM = _accepted((np.integer, np.floating, np.complexfloating),
                 "integer, floating, complexfloating")
_ANY = _accepted((np.integer, np.floating, np.complexfloating, np.bool_),
                 "integer, floating, complexfloating, bool")
_ORDERED = _accepted((np.integer, np.floating, np.bool_), "integer, floating, bool")
_BOOL_OR_INT = _accepted((np.integer, np.bool_), "integer, bool")
_INT_FLOAT = _accepted((np.integer, np.floating), "integer, floating")
_ABS = _accepted((np.floating, np.complexfloating, np.signedinteger),
                 "floating, complexfloating, signedinteger")
_COMPLEX_ELEM = _accepted((np.float32, np.float64), "float32, float64")
_CONJ = _accepted((np.float32, np.complexfloating, np.float64),
                  "float32, complexfloating, float64")


def _is_accepted(dtype: np.dtype, accepted: _Accepted) -> bool:
    return any(dtypes.issubdtype(dtype, t) for t in accepted.types)


# The dtypes of Python scalars in the current x64 mode.
_PY_DTYPE: dict[type, np.dtype] = {}


def _refresh_py_dtypes(name: str | None = None, value: Any = None) -> None:
    for t in _PY_SCALARS:
        _PY_DTYPE[t] = _DTYPES[_CODE[dtypes.canonicalize_dtype(dtypes.python_scalar_dtypes[t])]]


_refresh_py_dtypes()
config.add_update_hook(_refresh_py_dtypes)


# ----------------------------------------------------------------------------------------
# Operands and errors shared by the impls.

def _operand(prim: Primitive, pos: int, x: Any) -> Array:
    """A concrete impl operand as an Array, with JAX's error for non-array values."""
    try:
        return _to_array(x)
    except TypeError:
        raise TypeError(f"Error interpreting argument to {prim.name} as a JAX value. The "
                        f"problematic value is of type {type(x)} and was passed to "
                        f"{prim.name} at position {pos}.\n") from None


def _reject(prim: Primitive, args: Sequence[Any], params: dict,
            error: BaseException | None = None) -> None:
    """Raises JAX's error for an eager call the fast path rejected.

    Runs the abstract-eval rule, which raises JAX's class and text; if the rule accepts
    the operands, the C++ error ``error`` (or an internal error) is raised instead.
    """
    avals = [_operand(prim, i, a).aval for i, a in enumerate(args)]
    prim.abstract_eval(*avals, **params)
    if error is not None:
        raise error
    raise RuntimeError(f"tinyxla internal error: {prim.name} rejected operands "
                       f"{avals} that its abstract evaluation accepts")


def _result(handle: Any, weak_type: bool, dtype: np.dtype, inputs: Sequence[Array]) -> Array:
    """The Array of an impl's output; committed if any input is, as in JAX."""
    out = _wrap(handle, weak_type, dtype)
    out._committed = any(x._committed for x in inputs)
    return out


def _colocated(prim: Primitive, args: Sequence[Array]) -> list[Array] | None:
    """``args`` on one device, or None when they already are (JAX's placement rule).

    Uncommitted arrays follow the committed ones; committed arrays on different devices
    raise JAX's error. Moving an array copies it through the host.
    """
    devices = [a._h.device for a in args]
    if len(set(devices)) == 1:
        return None
    committed = [i for i, a in enumerate(args) if a._committed]
    if len({devices[i] for i in committed}) > 1:
        first = committed[0]
        other = next(i for i in committed if devices[i] != devices[first])

        def describe(i: int) -> str:
            a = args[i]
            return (f"argument args[{i}] of {prim.name} with shape {a.dtype.name}"
                    f"[{','.join(map(str, a.shape))}] and with device ids [{devices[i]}] on "
                    "platform CPU")
        raise ValueError("Received incompatible devices for jitted computation. Got "
                         f"{describe(first)} and {describe(other)}")
    target = devices[committed[0]] if committed else devices[0]
    return [a if d == target else _wrap(_core.from_numpy(np.ascontiguousarray(a._value),
                                                          _CODE[a.dtype], target),
                                        a.weak_type, a.dtype)
            for a, d in zip(args, devices)]


def _dtype_to_string(dtype: Any) -> str:
    return np.dtype(dtype).name


def _weak(*avals: Any) -> bool:
    return all(a.weak_type for a in avals)


# ----------------------------------------------------------------------------------------
# Building blocks of the differentiation rules (JAX's _const, _zeros, _unbroadcast, ...).
# Constants are weak scalars of the operand's dtype: Python scalars where exact, so an
# eager rule makes no 0-d array for them and a staged one records a literal.

def _const(x: Any, value: Any) -> Any:
    return weak_scalar(value.item() if isinstance(value, np.generic) else value, _dtype(x))


def _zeros(x: Any) -> Any:
    return full_like(x, 0)


def _ones(x: Any) -> Any:
    return full_like(x, 1)


def _replace_zero(x: Any) -> Any:
    """``x`` with its zeros replaced by ones (a safe divisor)."""
    return select(eq(x, _const(x, 0)), _ones(x), x)


def _broadcast_shapes(*xs: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(_shape(x) for x in xs)))


def _brcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` (0-d, or of the same rank with size-1 axes) broadcast to ``shape``."""
    x_shape = _shape(x)
    if x_shape == tuple(shape):
        return x
    if not x_shape:
        return broadcast_in_dim(x, shape, ())
    dims = [i for i, (a, b) in enumerate(zip(x_shape, shape)) if a == b]
    return broadcast_in_dim(reshape(x, [x_shape[i] for i in dims]), shape, dims)


def _unbroadcast(aval: Any, x: Any) -> Any:
    """The cotangent ``x`` of an operand that was broadcast, summed back to ``aval``."""
    x_shape = _shape(x)
    if x_shape == aval.shape:
        return x
    if not aval.shape:
        return reduce_sum(x, tuple(range(len(x_shape))))
    dims = [i for i, (a, b) in enumerate(zip(x_shape, aval.shape)) if a != b]
    return reshape(reduce_sum(x, dims), aval.shape)


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x == z != y, 1/2 where x == z == y, else 0: max/min share ties."""
    return div(select(eq(x, z), _ones(z), _zeros(z)),
               select(eq(y, z), full_like(z, 2), _ones(z)))


def _is_complex(x: Any) -> bool:
    return dtypes.issubdtype(_dtype(x), np.complexfloating)


# ----------------------------------------------------------------------------------------
# Abstract-eval building blocks (JAX's unop/naryop dtype and shape rules).

def _check_unop_dtype(name: str, accepted: _Accepted, dtype: np.dtype) -> None:
    if not _is_accepted(dtype, accepted):
        raise TypeError(f"{name} does not accept dtype {_dtype_to_string(dtype)}. "
                        f"Accepted dtypes are subtypes of {accepted.names}.")


def _check_naryop_dtypes(name: str, accepted: Sequence[_Accepted], avals: Sequence[Any]) -> None:
    for i, (acc, aval) in enumerate(zip(accepted, avals)):
        if not _is_accepted(aval.dtype, acc):
            raise TypeError(f"{name} does not accept dtype {_dtype_to_string(aval.dtype)} at "
                            f"position {i}. Accepted dtypes at position {i} are subtypes of "
                            f"{acc.names}.")


# lax name -> the jnp function that promotes (JAX's _JNP_FUNCTION_EQUIVALENTS).
_JNP_EQUIVALENTS = {
    'abs': 'fabs', 'acos': 'arccos', 'acosh': 'arccosh', 'add': 'add', 'asin': 'arcsin',
    'asinh': 'arcsinh', 'atan': 'arctan', 'atan2': 'arctan2', 'atanh': 'arctanh',
    'bitwise_and': 'bitwise_and', 'bitwise_not': 'bitwise_not', 'bitwise_or': 'bitwise_or',
    'bitwise_xor': 'bitwise_xor', 'cbrt': 'cbrt', 'ceil': 'ceil',
    'concatenate': 'concatenate', 'cos': 'cos', 'cosh': 'cosh', 'div': 'divide',
    'eq': 'equal', 'exp': 'exp', 'expm1': 'expm1', 'floor': 'floor', 'greater': 'greater',
    'greater_equal': 'greater_equal', 'less': 'less', 'less_equal': 'less_equal',
    'log': 'log', 'logical_and': 'logical_and', 'logical_not': 'logical_not',
    'logical_or': 'logical_or', 'logical_xor': 'logical_xor', 'log1p': 'log1p',
    'max': 'maximum', 'min': 'minimum', 'mul': 'multiply', 'ne': 'not_equal',
    'neg': 'negative', 'nextafter': 'nextafter', 'pow': 'float_power', 'round': 'round',
    'select': 'where', 'shift_left': 'left_shift', 'shift_right_logical': 'right_shift',
    'shift_right_arithmetic': 'right_shift', 'sign': 'sign', 'sin': 'sin', 'sinh': 'sinh',
    'sqrt': 'sqrt', 'sub': 'subtract', 'tan': 'tan', 'tanh': 'tanh'}


def _check_same_dtypes(name: str, *avals: Any) -> None:
    """JAX's ``check_same_dtypes``: lax ops do not promote."""
    if len(avals) < 2:
        return
    dtype = avals[0].dtype
    if any(a.dtype != dtype for a in avals[1:]):
        msg = (f"lax.{name} requires arguments to have the same dtypes, got "
               f"{', '.join(str(a.dtype) for a in avals)}.")
        if name in _JNP_EQUIVALENTS:
            msg += (f" (Tip: jnp.{_JNP_EQUIVALENTS[name]} is a similar function that does "
                    "automatic type promotion on inputs).")
        raise TypeError(msg)


def _broadcasting_shape(name: str, *avals: Any) -> tuple[int, ...]:
    """Elementwise result shape: 0-d operands broadcast; others need equal ranks and
    sizes that are equal or 1 (JAX's ``broadcasting_shape_rule``)."""
    shapes = [a.shape for a in avals if a.shape]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                        f"{ {len(s) for s in shapes} }")
    out = []
    for ds in zip(*shapes):
        non_1s = [d for d in ds if d != 1]
        if not non_1s:
            out.append(1)
        elif all(d == non_1s[0] for d in non_1s[1:]):
            out.append(non_1s[0])
        else:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, map(tuple, shapes)))}.")
    return tuple(out)


def _check_shapelike(fun_name: str, arg_name: str, obj: Any) -> None:
    """JAX's ``_check_shapelike``: a 1-d sequence of nonnegative ints."""
    if not isinstance(obj, (tuple, list, np.ndarray)):
        raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, "
                        f"got {type(obj)}.")
    if not len(obj):
        return
    arr = np.array(obj)
    if arr.ndim != 1:
        raise TypeError(f"{fun_name} {arg_name} must be 1-dimensional, got {arr.ndim}.")
    if not all(isinstance(d, (int, np.integer)) for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                        f"got {tuple(map(type, obj))}.")
    if not all(d >= 0 for d in obj):
        raise TypeError(f"{fun_name} {arg_name} must have every element be nonnegative, "
                        f"got {obj}.")


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
    """A shape as a tuple of ints (JAX's ``core.canonicalize_shape``); ints are 1-d shapes."""
    if isinstance(shape, int):
        shape = (shape,)
    try:
        return tuple(map(operator.index, shape))
    except TypeError:
        pass
    msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    if context:
        msg += f" {context}."
    raise TypeError(msg)


def _canonicalize_axis(axis: Any, num_dims: int) -> int:
    """An axis in [-num_dims, num_dims) as one in [0, num_dims) (``util.canonicalize_axis``)."""
    axis = operator.index(axis)
    if not -num_dims <= axis < num_dims:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
    return axis + num_dims if axis < 0 else axis


# ----------------------------------------------------------------------------------------
# Elementwise unary primitives.

def _unop(name: str, accepted: _Accepted, opcode: str | None = None,
          result_dtype: Callable[[np.dtype], np.dtype] | None = None,
          custom_impl: Callable[..., Array] | None = None,
          custom_lowering: Callable[..., int] | None = None) -> Primitive:
    """A unary elementwise primitive whose impl is ``_core.unary(opcode)`` and lowering the
    graph's ``unary(opcode)`` unless ``custom_impl`` / ``custom_lowering`` are given."""
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
        out = _wrap(_core.unary(op, x._h), x.weak_type, out_dtype)
        out._committed = x._committed
        return out

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(custom_impl or impl)
    batching.defvectorized(prim)
    register_lowering(prim, custom_lowering or (lambda ctx, x, **params: ctx.builder.unary(op, x)))
    return prim


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dtype == dtypes.complex128 else \
        np.dtype(np.float32) if dtype == dtypes.complex64 else dtype


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return dtypes.complex128 if dtype in (dtypes.float64, dtypes.complex128) else dtypes.complex64


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


def _not_impl(x: Any) -> Array:
    if type(x) is not Array:
        x = _operand(not_p, 0, x)
    dt = x.dtype
    if dt not in _BOOL_OR_INT.dtypes:
        _reject(not_p, (x,), {})
    op = _UNARY_OP['logical_not' if dt is _BOOL else 'bitwise_not']
    return _result(_core.unary(op, x._h), x.weak_type, dt, (x,))


def _not_lowering(ctx: lowering.LoweringContext, x: int) -> int:
    bool_operand = ctx.avals_in[0].dtype == _BOOL
    return ctx.builder.unary(_UNARY_OP['logical_not' if bool_operand else 'bitwise_not'], x)


not_p = _unop('not', _BOOL_OR_INT, 'bitwise_not', custom_impl=_not_impl,
              custom_lowering=_not_lowering)


class RoundingMethod(enum.IntEnum):
    """How ``round`` treats halfway values (``jax.lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_impl(x: Any, *, rounding_method: RoundingMethod) -> Array:
    if type(x) is not Array:
        x = _operand(round_p, 0, x)
    if x.dtype not in _FLOAT.dtypes:
        _reject(round_p, (x,), {"rounding_method": rounding_method})
    op = _UNARY_OP['round_even' if rounding_method == RoundingMethod.TO_NEAREST_EVEN else 'round']
    return _result(_core.unary(op, x._h), x.weak_type, x.dtype, (x,))


def _round_lowering(ctx: lowering.LoweringContext, x: int, *,
                    rounding_method: RoundingMethod) -> int:
    even = rounding_method == RoundingMethod.TO_NEAREST_EVEN
    return ctx.builder.unary(_UNARY_OP['round_even' if even else 'round'], x)


round_p = _unop('round', _FLOAT, custom_impl=_round_impl, custom_lowering=_round_lowering)


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
    acc = _zeros(z)
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


def _conj_impl(x: Any, *, input_dtype: Any) -> Array:
    if type(x) is not Array:
        x = _operand(conj_p, 0, x)
    dt = x.dtype
    if dt not in _CONJ.dtypes:
        _reject(conj_p, (x,), {"input_dtype": input_dtype})
    if dt in _COMPLEX_DTYPES:
        return _result(_core.unary(_UNARY_OP['conj'], x._h), x.weak_type, dt, (x,))
    # A real operand: conj(x) is complex(x, 0).
    return _result(_core.binary(_BINARY_OP['complex'], x._h, 0.0), x.weak_type,
                   _complex_dtype(dt), (x,))


conj_p = Primitive('conj')
conj_p.def_abstract_eval(_conj_abstract_eval)
conj_p.def_impl(_conj_impl)


def _conj_lowering(ctx: lowering.LoweringContext, x: int, *, input_dtype: Any) -> int:
    dt = ctx.avals_in[0].dtype
    if dt in _COMPLEX_DTYPES:
        return ctx.builder.unary(_UNARY_OP['conj'], x)
    return ctx.builder.binary(_BINARY_OP['complex'], x, ctx.full(0, ctx.avals_in[0]))


register_lowering(conj_p, _conj_lowering)


def _conj_transpose_rule(t: Any, x: Any, *, input_dtype: Any) -> list[Any]:
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(t)]
    return [real(t)]


ad.deflinear2(conj_p, _conj_transpose_rule)
batching.defvectorized(conj_p)


def _integer_pow_abstract_eval(x: Any, *, y: int) -> ShapedArray:
    _check_unop_dtype('integer_pow', _NUM, x.dtype)
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"Integers cannot be raised to negative powers, got "
                        f"integer_pow({x.dtype.name}[{','.join(map(str, x.shape))}], {y})")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _integer_pow_impl(x: Any, *, y: int) -> Array:
    if type(x) is not Array:
        x = _operand(integer_pow_p, 0, x)
    h, dt = x._h, x.dtype
    if dt not in _NUM.dtypes or (y < 0 and dt in _INT.dtypes):
        _reject(integer_pow_p, (x,), {"y": y})
    code = _CODE[dt]
    mul = _BINARY_OP['mul']
    # Square-and-multiply with the same multiplications as JAX's lowering, so results agree.
    if y == 0:
        return _result(_core.full(list(h.shape), 1, code, h.device), x.weak_type, dt, (x,))
    n = -y if y < 0 else y
    acc = None
    while n > 0:
        if n & 1:
            acc = h if acc is None else _core.binary(mul, acc, h)
        n >>= 1
        if n > 0:
            h = _core.binary(mul, h, h)
    if y < 0:
        acc = _core.binary(_BINARY_OP['div'], _core.full(list(acc.shape), 1, code, acc.device), acc)
    return _result(acc, x.weak_type, dt, (x,))


integer_pow_p = Primitive('integer_pow')
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
integer_pow_p.def_impl(_integer_pow_impl)


def _integer_pow_lowering(ctx: lowering.LoweringContext, x: int, *, y: int) -> int:
    b, aval = ctx.builder, ctx.avals_in[0]
    if y == 0:
        return ctx.full(1, aval)
    mul = _BINARY_OP['mul']
    n, acc = builtins.abs(y), None
    while n > 0:  # the impl's square-and-multiply
        if n & 1:
            acc = x if acc is None else b.binary(mul, acc, x)
        n >>= 1
        if n > 0:
            x = b.binary(mul, x, x)
    return b.binary(_BINARY_OP['div'], ctx.full(1, aval), acc) if y < 0 else acc


register_lowering(integer_pow_p, _integer_pow_lowering)


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


# ----------------------------------------------------------------------------------------
# Elementwise binary primitives.

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
                except ValueError as e:  # different devices or incompatible shapes
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


def _pow_dtype_rule(x: Any, y: Any) -> np.dtype:
    if dtypes.issubdtype(x.dtype, np.inexact) and dtypes.issubdtype(y.dtype, np.integer):
        return x.dtype
    if x.dtype == y.dtype:
        return x.dtype
    raise TypeError("the first argument to pow must have an inexact dtype (float or "
                    "complex), and the second argument must have an inexact or integer "
                    "dtype, and two inexact dtypes must match, but got "
                    f"{x.dtype} and {y.dtype} respectively.")


def _pow_impl(x: Any, y: Any) -> Array:
    if type(x) is not Array:
        x = _operand(pow_p, 0, x)
    if type(y) is not Array:
        y = _operand(pow_p, 1, y)
    if x.dtype is not y.dtype:
        if x.dtype not in _FLOAT_COMPLEX.dtypes or y.dtype not in _INT.dtypes:
            _reject(pow_p, (x, y), {})
        # An integer exponent: XLA converts it to the base's dtype.
        y = _result(_core.convert(y._h, _CODE[x.dtype]), y.weak_type, x.dtype, (y,))
    return _pow_same_dtype(x, y)


pow_p = Primitive('pow')
pow_p.def_abstract_eval(_naryop_abstract_eval(
    'pow', (_FLOAT_COMPLEX, _NUM), _pow_dtype_rule, require_same=False))
pow_p.def_impl(_pow_impl)
_pow_same_dtype = _binary_impl(pow_p, _BINARY_OP['pow'], _result_table(_FLOAT_COMPLEX))


def _pow_lowering(ctx: lowering.LoweringContext, x: int, y: int) -> int:
    # An integer exponent is converted to the base's dtype, as XLA does.
    y = ctx.builder.convert(y, _CODE[ctx.avals_in[0].dtype])
    return ctx.builder.binary(_BINARY_OP['pow'], x, y)


register_lowering(pow_p, _pow_lowering)


def _pow_jvp_lhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    if dtypes.issubdtype(_dtype(y), np.integer):
        shape = _broadcast_shapes(x, y)
        x = _brcast_to(x, shape)
        y = _brcast_to(_convert_element_type(y, _dtype(x), False), shape)
        jac = select(eq(y, _const(y, 0)), _zeros(y),
                     mul(_replace_zero(y), pow(x, sub(y, _const(y, 1)))))
    else:
        jac = mul(y, pow(x, sub(y, _const(y, 1))))
    return mul(g, jac)


def _pow_jvp_rhs(g: Any, ans: Any, x: Any, y: Any) -> Any:
    return _convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), _dtype(y), False)


ad.defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
batching.defbroadcasting(pow_p)


# ----------------------------------------------------------------------------------------
# Conversions.

def _convert_element_type_abstract_eval(operand: Any, *, new_dtype: np.dtype,
                                        weak_type: bool, sharding: Any = None) -> ShapedArray:
    return ShapedArray(operand.shape, new_dtype, weak_type)


def _convert_element_type_impl(operand: Any, *, new_dtype: np.dtype, weak_type: bool,
                               sharding: Any = None) -> Array:
    code = _CODE[new_dtype]
    out_dtype = _DTYPES[code]
    t = type(operand)
    if t is Array:
        h = operand._h
        return _result(h if operand.dtype is out_dtype else _core.convert(h, code), weak_type,
                       out_dtype, (operand,))
    if t in _PY_SCALARS:
        # Python scalars convert on the host, never overflowing an intermediate dtype
        # (convert_element_type(2**40, float32) is fine, as in JAX).
        value = operand.real if t is complex and out_dtype not in _COMPLEX_DTYPES else operand
        return _wrap(_core.scalar(value, code, 0), weak_type, out_dtype)
    arr = _operand(convert_element_type_p, 0, operand)
    return _wrap(_core.convert(arr._h, code), weak_type, out_dtype)


convert_element_type_p = Primitive('convert_element_type')
convert_element_type_p.def_abstract_eval(_convert_element_type_abstract_eval)
convert_element_type_p.def_impl(_convert_element_type_impl)
register_lowering(convert_element_type_p,
                  lambda ctx, x, *, new_dtype, weak_type, sharding=None:
                  ctx.builder.convert(x, _CODE[np.dtype(new_dtype)]))


def _convert_element_type_jvp(t: Any, ans: Any, operand: Any, *, new_dtype: np.dtype,
                              weak_type: bool, **params: Any) -> Any:
    if ad.tangent_dtype(np.dtype(new_dtype)) == dtypes.float0:
        return ad.Zero.from_primal_value(ans)
    return convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type, **params)


def _convert_element_type_transpose(ct: Any, operand: Any, *, new_dtype: np.dtype,
                                    weak_type: bool, **params: Any) -> list[Any]:
    aval = operand.aval
    if ad.tangent_dtype(aval.dtype) == dtypes.float0:
        return [ad.Zero(ad.tangent_aval(aval))]
    return [convert_element_type_p.bind(ct, new_dtype=_canonical_dtype(aval.dtype),
                                        weak_type=aval.weak_type, **params)]


ad.defjvp2(convert_element_type_p, _convert_element_type_jvp)
ad.primitive_transposes[convert_element_type_p] = _convert_element_type_transpose
batching.defvectorized(convert_element_type_p)


def _warn_complex_to_real(old: np.dtype, new: np.dtype) -> None:
    if old in _COMPLEX_DTYPES and new not in _COMPLEX_DTYPES:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=3)


def _canonical_dtype(dtype: Any) -> np.dtype:
    """The runtime's instance of a supported dtype (so dtypes compare with ``is``)."""
    code = _CODE.get(dtype)
    return _DTYPES[_CODE[np.dtype(dtype)] if code is None else code]


def _convert_element_type(operand: Any, new_dtype: Any = None, weak_type: bool = False) -> Any:
    """``operand`` as ``new_dtype`` with the given weak type; arrays and tracers that
    already match are returned as they are (``lax._convert_element_type``).

    ``new_dtype`` is used as given (callers canonicalize it). Eagerly, a Python scalar
    becomes a 0-d Array without a primitive, as JAX's constants do; under a trace it is a
    ``convert_element_type`` equation (JAX folds it into a literal; see ``weak_scalar``).
    """
    weak_type = bool(weak_type)
    t = type(operand)
    if t in _PY_SCALARS:
        old = _PY_DTYPE[t]
        new = old if new_dtype is None else _canonical_dtype(new_dtype)
        if t is complex:
            _warn_complex_to_real(old, new)
            if new not in _COMPLEX_DTYPES:
                operand = operand.real
        if core._state.trace is not core.EVAL_TRACE:
            return convert_element_type_p.bind(operand, new_dtype=new, weak_type=weak_type)
        # Eagerly this is a host-side constant: the runtime converts the value itself.
        return _wrap(_core.scalar(operand, _CODE[new], 0), weak_type, new)
    if t is Array:
        old, old_weak = operand.dtype, operand.weak_type
    elif isinstance(operand, core.Tracer):
        old, old_weak = operand.aval.dtype, operand.aval.weak_type
    else:
        old, old_weak = _canonical_dtype(dtypes.dtype(operand)), False
    new = old if new_dtype is None else _canonical_dtype(new_dtype)
    if new is old and old_weak == weak_type and t is not np.ndarray and \
            not isinstance(operand, np.generic):
        return operand
    _warn_complex_to_real(old, new)
    return convert_element_type_p.bind(operand, new_dtype=new, weak_type=weak_type)


def weak_scalar(value: bool | int | float | complex, dtype: np.dtype) -> Any:
    """A Python scalar as a weak-typed operand of ``dtype`` for a binary primitive.

    When ``dtype`` is the default dtype of a Python type (float32 for float with x64 off,
    ...), the result is a Python scalar of that type: the impls hand it to C++ as it is
    (no 0-d array is made) and a trace records it as a literal (``mul a 2.0:f32[]``, as
    JAX prints). Otherwise it is a weak 0-d array of ``dtype``.
    """
    dtype = _canonical_dtype(dtype)
    rank = _PY_RANK[type(value)]
    for t in _WEAK_PY_TYPES:
        # Only widening (bool -> int -> float -> complex) keeps the value exact.
        if _PY_DTYPE[t] is dtype and _PY_RANK[t] >= rank:
            return t(value)
    return _convert_element_type(value, dtype, True)


_WEAK_PY_TYPES = (int, float, complex)
_PY_RANK = {bool: 0, int: 1, float: 2, complex: 3}


def _bitcast_convert_type_abstract_eval(operand: Any, *, new_dtype: np.dtype) -> ShapedArray:
    old = operand.dtype
    for dt in (old, new_dtype):
        if dtypes.issubdtype(dt, np.bool_) or dtypes.issubdtype(dt, np.complexfloating):
            if old != new_dtype:
                raise TypeError("lax.bitcast_convert_type does not support bool or complex "
                                "values unless the operand and destination types match. "
                                f"Got operand dtype={old}, {new_dtype=}. "
                                "Consider using the arr.view() method instead.")
    old_bits, new_bits = old.itemsize * 8, np.dtype(new_dtype).itemsize * 8
    shape = operand.shape
    if old_bits > new_bits:
        shape = (*shape, old_bits // new_bits)
    elif old_bits < new_bits:
        dim_size = shape[-1] if shape else 1
        if dim_size * old_bits != new_bits:
            raise ValueError(f"Attempting to convert array of shape {operand.shape} from {old} "
                             f"of size {old_bits} bits to {new_dtype} of size {new_bits}, bits "
                             f"but {dim_size} * {old_bits} != {new_bits}")
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_convert_type_impl(operand: Any, *, new_dtype: np.dtype) -> Array:
    x = operand if type(operand) is Array else _operand(bitcast_convert_type_p, 0, operand)
    new_code = _CODE[new_dtype]
    out_dtype = _DTYPES[new_code]
    special = (_BOOL, *_COMPLEX_DTYPES)
    if x.dtype is not out_dtype and (x.dtype in special or out_dtype in special):
        _reject(bitcast_convert_type_p, (x,), {"new_dtype": new_dtype})
    try:
        return _result(_core.bitcast_convert(x._h, new_code), False, out_dtype, (x,))
    except ValueError as e:
        _reject(bitcast_convert_type_p, (x,), {"new_dtype": new_dtype}, e)
        raise


bitcast_convert_type_p = Primitive('bitcast_convert_type')
bitcast_convert_type_p.def_abstract_eval(_bitcast_convert_type_abstract_eval)
bitcast_convert_type_p.def_impl(_bitcast_convert_type_impl)
register_lowering(bitcast_convert_type_p,
                  lambda ctx, x, *, new_dtype: ctx.builder.bitcast_convert(x, _CODE[np.dtype(new_dtype)]))
ad.defjvp_zero(bitcast_convert_type_p)


def _bitcast_convert_type_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                                     new_dtype: np.dtype) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    # Widening consumes the last axis, which must then not be the batch axis.
    if np.dtype(new_dtype).itemsize > operand.dtype.itemsize and bdim == operand.ndim - 1:
        operand, bdim = batching.moveaxis(operand, bdim, 0), 0
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype), bdim


batching.primitive_batchers[bitcast_convert_type_p] = _bitcast_convert_type_batch_rule


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


_I32 = _CODE[dtypes.int32]
_SELECTOR_DTYPES = (_BOOL, dtypes.int32)


def _select_n_impl(which: Any, *cases: Any) -> Array:
    args = (which, *cases)
    if type(which) is not Array:
        which = _operand(select_n_p, 0, which)
    cases = tuple(c if type(c) is Array else _operand(select_n_p, i + 1, c)
                  for i, c in enumerate(cases))
    wh, wdt = which._h, which.dtype
    if wdt not in _SELECTOR_DTYPES:
        if wdt not in _INT.dtypes:
            _reject(select_n_p, args, {})
        wh = _core.convert(wh, _I32)  # the runtime takes bool or int32 selectors
    elif wdt is _BOOL and len(cases) > 2:
        _reject(select_n_p, args, {})
    try:
        out = _core.select_n(wh, [c._h for c in cases])
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


def _select_n_lowering(ctx: lowering.LoweringContext, which: int, *cases: int) -> int:
    if ctx.avals_in[0].dtype not in _SELECTOR_DTYPES:
        which = ctx.builder.convert(which, _I32)  # the runtime takes bool or int32 selectors
    return ctx.builder.select_n(which, list(cases))


register_lowering(select_n_p, _select_n_lowering)


def _select_n_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    nonzero = [t for t in case_tangents if type(t) is not ad.Zero]
    if not nonzero:
        return out, ad.Zero.from_primal_value(out)
    z = _zeros(nonzero[0])
    return out, select_n_p.bind(which, *[z if type(t) is ad.Zero else t for t in case_tangents])


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    zeros = full_like(ct, 0)
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
            which = broadcast_in_dim_p.bind(which, shape=shape(cases[0]),
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
        which = broadcast_in_dim_p.bind(which, shape=shape(cases[0]), broadcast_dimensions=(0,))
    elif ndim(which) > ndim(cases[0]):  # scalar cases
        cases = [broadcast_in_dim_p.bind(c, shape=shape(which), broadcast_dimensions=())
                 for c in cases]
    return select_n_p.bind(which, *cases), 0


batching.primitive_batchers[select_n_p] = _select_n_batch_rule


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
    except ValueError as e:
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
                                      _brcast_to(g, _shape(x)), _zeros(x)),
          lambda g, lo, x, hi: select(bitwise_and(gt(x, lo), lt(x, hi)), g, _zeros(x)),
          lambda g, lo, x, hi: select(lt(hi, x), _brcast_to(g, _shape(x)), _zeros(x)))


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
        lo = broadcast_in_dim_p.bind(lo, shape=shape(x), broadcast_dimensions=(0,))
    if 0 < ndim(hi) < ndim(x):
        hi = broadcast_in_dim_p.bind(hi, shape=shape(x), broadcast_dimensions=(0,))
    return clamp_p.bind(lo, x, hi), 0


batching.primitive_batchers[clamp_p] = _clamp_batch_rule


# ----------------------------------------------------------------------------------------
# Reductions.

def _check_reduce_axes(operand: Any, axes: Sequence[int]) -> tuple[int, ...]:
    if len(axes) != len(set(axes)):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    if not all(0 <= a < operand.ndim for a in axes):
        raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                         f"{operand.dtype.name}[{','.join(map(str, operand.shape))}].")
    return tuple(d for i, d in enumerate(operand.shape) if i not in set(axes))


def _reduce_number_check(name: str, dtype: np.dtype) -> None:
    if not dtypes.issubdtype(dtype, np.number):
        raise TypeError(f"{name} does not accept dtype {_dtype_to_string(dtype)}. Accepted "
                        "dtypes are subtypes of number.")


def _reduce_logical_check(name: str, dtype: np.dtype) -> None:
    if dtype != np.bool_ and not np.issubdtype(dtype, np.integer):
        raise TypeError(f"logical reduction requires operand dtype bool or int, got {dtype}.")


def _reduction(name: str, opcode: str, dtype_check: Callable[[str, np.dtype], None] | None,
               accepted: frozenset[np.dtype]) -> Primitive:
    """A reduction over ``axes``; ``reduce_sum`` also has JAX's ``out_sharding`` param."""
    prim = Primitive(name)
    op = _REDUCE_OP[opcode]

    def abstract_eval(operand: Any, *, axes: tuple[int, ...],
                      out_sharding: Any = None) -> ShapedArray:
        if dtype_check is not None:
            dtype_check(name, operand.dtype)
        shape = _check_reduce_axes(operand, axes)
        return ShapedArray(shape, operand.dtype, operand.weak_type)

    def impl(operand: Any, *, axes: tuple[int, ...], out_sharding: Any = None) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        if x.dtype not in accepted or builtins.min(axes, default=0) < 0:
            _reject(prim, (x,), {"axes": axes})
        try:
            return _result(_core.reduce(op, x._h, list(axes)), x.weak_type, x.dtype, (x,))
        except (ValueError, IndexError) as e:
            _reject(prim, (x,), {"axes": axes}, e)
            raise

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, *, axes, out_sharding=None:
                      ctx.builder.reduce(op, x, list(axes)))
    return prim


reduce_sum_p = _reduction('reduce_sum', 'sum', _reduce_number_check, _NUM.dtypes)
reduce_prod_p = _reduction('reduce_prod', 'prod', _reduce_number_check, _NUM.dtypes)
reduce_max_p = _reduction('reduce_max', 'max', None, _ANY.dtypes)
reduce_min_p = _reduction('reduce_min', 'min', None, _ANY.dtypes)
reduce_and_p = _reduction('reduce_and', 'and_', _reduce_logical_check, _BOOL_OR_INT.dtypes)
reduce_or_p = _reduction('reduce_or', 'or_', _reduce_logical_check, _BOOL_OR_INT.dtypes)
reduce_xor_p = _reduction('reduce_xor', 'xor_', _reduce_logical_check, _BOOL_OR_INT.dtypes)


def _reduce_sum_transpose(ct: Any, operand: Any, *, axes: tuple[int, ...],
                          **params: Any) -> list[Any]:
    shape = operand.aval.shape
    return [broadcast_in_dim(ct, shape, tuple(i for i in range(len(shape)) if i not in axes))]


def _reduce_prod_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                     axes: tuple[int, ...], **params: Any) -> tuple[Any, Any]:
    """The product rule along a balanced tree of pairwise products (as JAX's
    ``_reduce_jvp``), exact where elements are zero."""
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes, **params)
    shape = _shape(x)
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    if n == 0:
        return out, ad.Zero.from_primal_value(out)
    kept = [i for i in range(len(shape)) if i not in axes]
    flat = (n, *(shape[i] for i in kept))
    perm = (*axes, *kept)
    xs, ts = reshape(x, flat, perm), reshape(t, flat, perm)
    while _shape(xs)[0] > 1:
        m = _shape(xs)[0]
        half = (m + 1) // 2
        rest = [(0, 0, 0)] * (len(flat) - 1)
        lo = lambda a: slice(a, (0,) * len(flat), (half, *flat[1:]))
        hi = lambda a: slice(a, (half, *(0,) * (len(flat) - 1)), (m, *flat[1:]))
        x1, x2, t1, t2 = lo(xs), hi(xs), lo(ts), hi(ts)
        if m % 2:
            x2 = pad(x2, _const(x2, 1), [(0, 1, 0), *rest])
            t2 = pad(t2, _const(t2, 0), [(0, 1, 0), *rest])
        ts = add(mul(t1, x2), mul(x1, t2))
        xs = mul(x1, x2)
    return out, reshape(ts, _shape(out))


def _reduce_chooser_jvp(g: Any, ans: Any, operand: Any, *, axes: tuple[int, ...],
                        **params: Any) -> Any:
    shape = [1 if i in axes else d for i, d in enumerate(_shape(operand))]
    location = _convert_element_type(eq(operand, reshape(ans, shape)), _dtype(g), False)
    counts = reduce_sum(location, axes)
    return div(reduce_sum(mul(g, location), axes), counts)


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)
ad.primitive_jvps[reduce_prod_p] = _reduce_prod_jvp
ad.defjvp2(reduce_max_p, _reduce_chooser_jvp)
ad.defjvp2(reduce_min_p, _reduce_chooser_jvp)
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.defjvp_zero(_p)
for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p,
           reduce_or_p, reduce_xor_p):
    batching.defreducer(_p)


def _argminmax(name: str, is_max: bool) -> Primitive:
    prim = Primitive(name)

    def abstract_eval(operand: Any, *, axes: tuple[int], index_dtype: np.dtype) -> ShapedArray:
        axis, = axes
        if not 0 <= axis < len(operand.shape):
            raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
        if operand.shape[axis] < 1:
            raise ValueError("argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={operand.shape} {axis=}")
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError("index_dtype must be an integer type, but got "
                            f"{_dtype_to_string(index_dtype)}")
        # JAX's lowering compares with gt/lt, which reject complex operands.
        _check_naryop_dtypes('gt' if is_max else 'lt', (_ORDERED,), (operand,))
        return ShapedArray(operand.shape[:axis] + operand.shape[axis + 1:], index_dtype, False)

    def impl(operand: Any, *, axes: tuple[int], index_dtype: np.dtype) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        params = {"axes": axes, "index_dtype": index_dtype}
        axis, = axes
        code = _CODE[index_dtype]
        if axis < 0 or x.dtype not in _ORDERED.dtypes or _DTYPES[code] not in _INT.dtypes:
            _reject(prim, (x,), params)
        try:
            return _result(_core.argreduce(is_max, x._h, axis, code), False, _DTYPES[code], (x,))
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, (x,), params, e)
            raise

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, *, axes, index_dtype: ctx.builder.argreduce(
        is_max, x, axes[0], _CODE[np.dtype(index_dtype)]))
    return prim


argmax_p = _argminmax('argmax', True)
argmin_p = _argminmax('argmin', False)
ad.defjvp_zero(argmax_p)
ad.defjvp_zero(argmin_p)
batching.defreducer(argmax_p)
batching.defreducer(argmin_p)


# ----------------------------------------------------------------------------------------
# Shape and layout primitives.

def _structural(name: str, abstract_eval: Callable[..., ShapedArray],
                run: Callable[..., Any]) -> Primitive:
    """A one-operand primitive whose impl is ``run(_core, handle, **params)`` and whose
    lowering is ``run(builder, value, **params)`` (the graph builder's methods have the
    eager ops' names and signatures); runtime errors are re-raised as the abstract-eval
    rule's JAX errors."""
    prim = Primitive(name)

    def impl(operand: Any, **params: Any) -> Array:
        x = operand if type(operand) is Array else _operand(prim, 0, operand)
        try:
            out = run(_core, x._h, **params)
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, (x,), params, e)
            raise
        return _result(out, x.weak_type, x.dtype, (x,))

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lambda ctx, x, **params: run(ctx.builder, x, **params))
    return prim


def _reshape_abstract_eval(operand: Any, *, new_sizes: tuple[int, ...],
                           dimensions: tuple[int, ...] | None, sharding: Any = None) -> ShapedArray:
    if not all(d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if dimensions is not None and set(dimensions) != set(range(len(operand.shape))):
        raise TypeError("reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {dimensions} for shape {operand.shape}.")
    size, new_size = int(np.prod(operand.shape)), int(np.prod(new_sizes))
    if size != new_size:
        # JAX only fails this at lowering; the text is jnp.reshape's.
        raise TypeError(f"cannot reshape array of shape {operand.shape} (size {size}) into "
                        f"shape {new_sizes} (size {new_size})")
    return ShapedArray(tuple(new_sizes), operand.dtype, operand.weak_type)


def _reshape_run(ops: Any, h: Any, *, new_sizes: tuple[int, ...],
                 dimensions: tuple[int, ...] | None, sharding: Any = None) -> Any:
    if dimensions is not None:
        h = ops.transpose(h, list(dimensions))
    return ops.reshape(h, list(new_sizes))


reshape_p = _structural('reshape', _reshape_abstract_eval, _reshape_run)


def _reshape_transpose(ct: Any, operand: Any, *, new_sizes: tuple[int, ...],
                       dimensions: tuple[int, ...] | None, **params: Any) -> list[Any]:
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    return [transpose(reshape(ct, [shape[d] for d in dimensions]), np.argsort(dimensions))]


ad.deflinear2(reshape_p, _reshape_transpose)


def _reshape_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                        new_sizes: tuple[int, ...], dimensions: tuple[int, ...] | None,
                        sharding: Any = None) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    if dimensions is not None:
        dimensions = (0, *(d + 1 for d in dimensions))
    return reshape_p.bind(operand, new_sizes=(operand.shape[0], *new_sizes),
                          dimensions=dimensions, sharding=sharding), 0


batching.primitive_batchers[reshape_p] = _reshape_batch_rule


def _transpose_abstract_eval(operand: Any, *, permutation: tuple[int, ...]) -> ShapedArray:
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, got "
                        f"{type(permutation)}.")
    if tuple(sorted(permutation)) != tuple(range(len(operand.shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {operand.shape}.")
    return ShapedArray(tuple(operand.shape[i] for i in permutation), operand.dtype,
                       operand.weak_type)


transpose_p = _structural('transpose', _transpose_abstract_eval,
                          lambda ops, h, *, permutation: ops.transpose(h, list(permutation)))
ad.deflinear2(transpose_p,
              lambda t, _, *, permutation: [transpose(t, np.argsort(permutation))])


def _transpose_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                          permutation: tuple[int, ...]) -> tuple[Any, int]:
    bdim, = dims
    perm = (bdim, *(i if i < bdim else i + 1 for i in permutation))
    return transpose(vals[0], perm), 0


batching.primitive_batchers[transpose_p] = _transpose_batch_rule


def _broadcast_in_dim_abstract_eval(operand: Any, *, shape: tuple[int, ...],
                                    broadcast_dimensions: tuple[int, ...]) -> ShapedArray:
    _check_shapelike('broadcast_in_dim', 'shape', shape)
    _check_shapelike('broadcast_in_dim', 'broadcast_dimensions', broadcast_dimensions)
    ndim = len(operand.shape)
    if ndim != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to "
                        f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                        f"operand ndim {ndim}.")
    if len(shape) < ndim:
        raise TypeError("broadcast_in_dim target broadcast shape must have equal or higher "
                        f"rank to the operand shape; got operand ndim {ndim} and target "
                        f"broadcast ndim {len(shape)}.")
    if not set(broadcast_dimensions).issubset(set(range(len(shape)))):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {broadcast_dimensions} for operand ndim {ndim} and "
                        f"shape {shape}.")
    if not all(operand.shape[i] in (1, shape[broadcast_dimensions[i]]) for i in range(ndim)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be "
                        "equal to their corresponding dimensions in the target broadcast "
                        f"shape; got operand of shape {tuple(operand.shape)}, target broadcast "
                        f"shape {shape}, broadcast_dimensions {broadcast_dimensions} ")
    if len(broadcast_dimensions) != len(set(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(tuple(shape), operand.dtype, operand.weak_type)


def _broadcast_in_dim_impl(operand: Any, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> Array:
    x = operand if type(operand) is Array else _operand(broadcast_in_dim_p, 0, operand)
    h = x._h
    if builtins.min(shape, default=0) < 0:  # the runtime does not check a 0-d operand's shape
        _reject(broadcast_in_dim_p, (x,), {"shape": shape,
                                           "broadcast_dimensions": broadcast_dimensions})
    try:
        out = _core.broadcast_in_dim(h, list(shape), list(broadcast_dimensions))
    except ValueError as e:
        broadcast_in_dim_p.abstract_eval(x.aval, shape=shape,
                                         broadcast_dimensions=broadcast_dimensions)
        if list(broadcast_dimensions) == sorted(broadcast_dimensions):
            raise e
        # Valid but unsorted dimensions: the runtime wants them increasing, so permute
        # the operand's axes first.
        perm = sorted(range(len(broadcast_dimensions)), key=broadcast_dimensions.__getitem__)
        out = _core.broadcast_in_dim(_core.transpose(h, perm), list(shape),
                                     sorted(broadcast_dimensions))
    return _result(out, x.weak_type, x.dtype, (x,))


broadcast_in_dim_p = Primitive('broadcast_in_dim')
broadcast_in_dim_p.def_abstract_eval(_broadcast_in_dim_abstract_eval)
broadcast_in_dim_p.def_impl(_broadcast_in_dim_impl)


def _broadcast_in_dim_lowering(ctx: lowering.LoweringContext, x: int, *, shape: tuple[int, ...],
                               broadcast_dimensions: tuple[int, ...], sharding: Any = None) -> int:
    dims = list(broadcast_dimensions)
    if dims != sorted(dims):  # the graph wants them increasing: permute the operand's axes
        x = ctx.builder.transpose(x, sorted(range(len(dims)), key=dims.__getitem__))
        dims.sort()
    return ctx.builder.broadcast_in_dim(x, list(shape), dims)


register_lowering(broadcast_in_dim_p, _broadcast_in_dim_lowering)
# JAX prints only the dimensions: the shape is the result's type.
core.pp_params_rules[broadcast_in_dim_p] = \
    lambda p: {"broadcast_dimensions": p["broadcast_dimensions"]}


def _broadcast_in_dim_transpose(ct: Any, operand: Any, *, shape: tuple[int, ...],
                                broadcast_dimensions: tuple[int, ...]) -> list[Any]:
    # Sum over the new axes and the broadcast size-1 axes, then restore those.
    unit_dims = [i for i, s in enumerate(operand.aval.shape) if s == 1]
    bdims = [d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims]
    out = reduce_sum(ct, tuple(i for i in range(len(shape)) if i not in bdims))
    if bdims != sorted(bdims):
        out = transpose(out, np.argsort(np.argsort(bdims)))
    return [expand_dims(out, unit_dims) if unit_dims else out]


ad.deflinear2(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                                 shape: tuple[int, ...],
                                 broadcast_dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    return broadcast_in_dim_p.bind(
        operand, shape=(operand.shape[0], *shape),
        broadcast_dimensions=(0, *(d + 1 for d in broadcast_dimensions))), 0


batching.primitive_batchers[broadcast_in_dim_p] = _broadcast_in_dim_batch_rule


def _compute_squeeze_shape(shape: tuple[int, ...], dimensions: tuple[int, ...]) -> tuple[int, ...]:
    dims_set = set(dimensions)
    if len(dims_set) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    if not all(0 <= d < len(shape) for d in dims_set):
        raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
    if any(shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got {shape=} and {dimensions=}")
    return tuple(s for i, s in enumerate(shape) if i not in dims_set)


def _shape_of(ops: Any, h: Any) -> tuple[int, ...]:
    """The shape of an eager handle, or of a value of a graph builder."""
    return tuple(h.shape) if ops is _core else ops.shape(h)


squeeze_p = _structural(
    'squeeze',
    lambda operand, *, dimensions: ShapedArray(
        _compute_squeeze_shape(operand.shape, dimensions), operand.dtype, operand.weak_type),
    lambda ops, h, *, dimensions: ops.reshape(
        h, list(_compute_squeeze_shape(_shape_of(ops, h), dimensions))))
ad.deflinear2(squeeze_p, lambda t, operand, *, dimensions: [reshape(t, operand.aval.shape)])


def _squeeze_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                        dimensions: tuple[int, ...]) -> tuple[Any, int]:
    operand = batching.moveaxis(vals[0], dims[0], 0)
    return squeeze_p.bind(operand, dimensions=tuple(d + 1 for d in dimensions)), 0


batching.primitive_batchers[squeeze_p] = _squeeze_batch_rule


def _slice_abstract_eval(operand: Any, *, start_indices: tuple[int, ...],
                         limit_indices: tuple[int, ...],
                         strides: tuple[int, ...] | None) -> ShapedArray:
    _check_shapelike("slice", "start_indices", start_indices)
    _check_shapelike("slice", "limit_indices", limit_indices)
    shape = operand.shape
    if len(shape) != len(start_indices):
        raise TypeError("slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start_indices} for operand "
                        f"shape {shape}.")
    if len(start_indices) != len(limit_indices):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if not all(map(operator.ge, shape, limit_indices)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit_indices} for operand shape {shape}.")
    if not all(si >= 0 for si in start_indices):
        raise TypeError("slice start_indices must be greater than or equal to zero, got "
                        f"start_indices of {start_indices}.")
    if not all(map(operator.ge, limit_indices, start_indices)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                        f"got start_indices {start_indices} and limit_indices {limit_indices}.")
    diff = tuple(map(operator.sub, limit_indices, start_indices))
    if strides is None or tuple(strides) == (1,) * len(shape):
        return ShapedArray(diff, operand.dtype, operand.weak_type)
    _check_shapelike("slice", "strides", strides)
    if len(strides) != len(shape):
        raise TypeError("slice strides must have length equal to the number of dimensions of "
                        f"the operand, got strides {strides} for operand shape {shape}.")
    if not all(s > 0 for s in strides):  # JAX checks s >= 0 and then divides by zero
        raise TypeError(f"slice strides must be positive, got {strides}")
    out = tuple(0 if d == 0 else (d - 1) // s + 1 for d, s in zip(diff, strides))
    return ShapedArray(out, operand.dtype, operand.weak_type)


slice_p = _structural(
    'slice', _slice_abstract_eval,
    lambda ops, h, *, start_indices, limit_indices, strides: ops.slice(
        h, list(start_indices), list(limit_indices), [] if strides is None else list(strides)))


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple[int, ...],
                     limit_indices: tuple[int, ...],
                     strides: tuple[int, ...] | None) -> list[Any]:
    shape = operand.aval.shape
    if strides is None or all(s == 1 for s in strides):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(shape))
    else:
        ct_shape = np.array(_shape(ct))
        real_limits = np.add(start_indices, np.where(
            ct_shape == 0, 0, np.add(1, np.multiply(np.subtract(ct_shape, 1), strides))))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [pad(ct, _const(ct, 0), [tuple(map(int, p)) for p in pads])]


ad.deflinear2(slice_p, _slice_transpose)


def _slice_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                      start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                      strides: tuple[int, ...] | None) -> tuple[Any, int]:
    operand, = vals
    bdim, = dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(bdim, 0)
    limit.insert(bdim, operand.shape[bdim])
    if strides is not None:
        strides = list(strides)
        strides.insert(bdim, 1)
        strides = tuple(strides)
    return slice_p.bind(operand, start_indices=tuple(start), limit_indices=tuple(limit),
                        strides=strides), bdim


batching.primitive_batchers[slice_p] = _slice_batch_rule


def _copy_impl(x: Any) -> Array:
    x = x if type(x) is Array else _operand(copy_p, 0, x)
    h = x._h
    # A one-case select writes a fresh buffer: the copy shares nothing with x.
    zero = _core.scalar(0, _I32, h.device)
    return _result(_core.select_n(zero, [h]), x.weak_type, x.dtype, (x,))


copy_p = Primitive('copy')
copy_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype, x.weak_type))
copy_p.def_impl(_copy_impl)
# Graph values are immutable and outputs get their own buffers: a copy is the value itself.
register_lowering(copy_p, lambda ctx, x: x)
ad.deflinear2(copy_p, lambda t, _: [copy_p.bind(t)])
batching.defvectorized(copy_p)


def _rev_abstract_eval(operand: Any, *, dimensions: tuple[int, ...]) -> ShapedArray:
    _check_shapelike('rev', 'dimensions', dimensions)
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not builtins.max(dimensions) < len(operand.shape):
        raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {len(operand.shape)}.")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _rev_run(ops: Any, h: Any, *, dimensions: tuple[int, ...]) -> Any:
    if dimensions and builtins.min(dimensions) < 0:  # the runtime would wrap them
        raise ValueError("negative dimension")
    return ops.rev(h, list(dimensions))


rev_p = _structural('rev', _rev_abstract_eval, _rev_run)
ad.deflinear2(rev_p, lambda t, _, *, dimensions: [rev(t, dimensions)])


def _rev_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                    dimensions: tuple[int, ...]) -> tuple[Any, int]:
    bdim, = dims
    return rev_p.bind(vals[0], dimensions=tuple(d + 1 if d >= bdim else d
                                                for d in dimensions)), bdim


batching.primitive_batchers[rev_p] = _rev_batch_rule


def _pad_abstract_eval(operand: Any, padding_value: Any, *,
                       padding_config: tuple[tuple[int, int, int], ...]) -> ShapedArray:
    if padding_value.shape != ():
        raise ValueError(f"padding_value must be a scalar; got "
                         f"np.shape(padding_value)={padding_value.shape}")
    op_shape = operand.shape
    if len(padding_config) != len(op_shape):
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {op_shape}")
    if not all(i >= 0 for _, _, i in padding_config):
        raise ValueError("interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    result = tuple(lo + hi + (0 if d == 0 else (d - 1) * (i + 1) + 1)
                   for (lo, hi, i), d in zip(padding_config, op_shape))
    if not all(d >= 0 for d in result):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{result}, for padding_config {padding_config} and operand shape "
                         f"{op_shape}")
    if operand.dtype != padding_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{operand.dtype} and {padding_value.dtype}.")
    return ShapedArray(result, operand.dtype, _weak(operand, padding_value))


def _pad_impl(operand: Any, padding_value: Any, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> Array:
    args = (operand, padding_value)
    params = {"padding_config": padding_config}
    x = operand if type(operand) is Array else _operand(pad_p, 0, operand)
    v = padding_value if type(padding_value) is Array else _operand(pad_p, 1, padding_value)
    if v.dtype is not x.dtype:
        _reject(pad_p, args, params)
    try:
        lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
        out = _core.pad(x._h, v._h, list(lo), list(hi), list(interior))
    except (TypeError, ValueError) as e:
        moved = _colocated(pad_p, (x, v))
        if moved is not None:
            return _pad_impl(*moved, padding_config=padding_config)
        _reject(pad_p, args, params, e)
        raise
    return _result(out, x.weak_type and v.weak_type, x.dtype, (x, v))


pad_p = Primitive('pad')
pad_p.def_abstract_eval(_pad_abstract_eval)
pad_p.def_impl(_pad_impl)


def _pad_lowering(ctx: lowering.LoweringContext, x: int, v: int, *,
                  padding_config: tuple[tuple[int, int, int], ...]) -> int:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return ctx.builder.pad(x, v, list(lo), list(hi), list(interior))


register_lowering(pad_p, _pad_lowering)


def _pad_transpose(t: Any, operand: Any, padding_value: Any, *,
                   padding_config: tuple[tuple[int, int, int], ...]) -> list[Any]:
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    total = lambda x: reduce_sum(x, tuple(range(_ndim(t))))
    unpadded = pad(t, _const(t, 0), [(-a, -b, 0) for a, b in zip(lo, hi)])
    t_operand = slice(unpadded, (0,) * len(lo), _shape(unpadded), [i + 1 for i in interior])
    t_padv = sub(total(t), total(t_operand)) if ad.is_undefined_primal(padding_value) else None
    return [t_operand if ad.is_undefined_primal(operand) else None, t_padv]


ad.deflinear2(pad_p, _pad_transpose)


def _pad_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                    padding_config: tuple[tuple[int, int, int], ...]) -> tuple[Any, int]:
    """JAX's rule; a padding value that differs per example is written with a select."""
    operand, padding_value = vals
    operand_bdim, value_bdim = dims
    if operand_bdim is None:
        operand = batching.broadcast(operand, padding_value.shape[value_bdim], 0)
        operand_bdim = 0
    config = list(padding_config)
    config.insert(operand_bdim, (0, 0, 0))
    config = tuple(config)
    if value_bdim is None:
        return pad_p.bind(operand, padding_value, padding_config=config), operand_bdim
    x = pad_p.bind(operand, _convert_element_type(0, operand.dtype), padding_config=config)
    mask = pad_p.bind(full_like(operand, True, np.bool_), False, padding_config=config)
    value = broadcast_in_dim(batching.moveaxis(padding_value, value_bdim, 0), x.shape,
                             (operand_bdim,))
    return select(mask, x, value), operand_bdim


batching.primitive_batchers[pad_p] = _pad_batch_rule


def _concatenate_abstract_eval(*operands: Any, dimension: int) -> ShapedArray:
    if not operands:
        raise TypeError("concatenate expects at least one operand, got 0.")
    if len({len(o.shape) for o in operands}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(o.shape) for o in operands)}.")
    if not 0 <= dimension < len(operands[0].shape):
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(o.shape) for o in operands)}.")
    shapes = [o.shape[:dimension] + o.shape[dimension + 1:] for o in operands]
    if shapes[:-1] != shapes[1:]:
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        "than the one being concatenated: concatenating along dimension "
                        f"{dimension} for shapes {', '.join(str(o.shape) for o in operands)}.")
    _check_same_dtypes('concatenate', *operands)
    ex = operands[0].shape
    size = sum(o.shape[dimension] for o in operands)
    return ShapedArray(ex[:dimension] + (size,) + ex[dimension + 1:], operands[0].dtype,
                       _weak(*operands))


def _concatenate_impl(*operands: Any, dimension: int) -> Array:
    xs = [o if type(o) is Array else _operand(concatenate_p, i, o) for i, o in enumerate(operands)]
    if dimension < 0:  # the runtime would wrap it
        _reject(concatenate_p, xs, {"dimension": dimension})
    try:
        out = _core.concatenate([x._h for x in xs], dimension)
    except (TypeError, ValueError, IndexError) as e:
        moved = _colocated(concatenate_p, xs)
        if moved is not None:
            return _concatenate_impl(*moved, dimension=dimension)
        _reject(concatenate_p, xs, {"dimension": dimension}, e)
        raise
    return _result(out, all(x.weak_type for x in xs), xs[0].dtype, xs)


concatenate_p = Primitive('concatenate')
concatenate_p.def_abstract_eval(_concatenate_abstract_eval)
concatenate_p.def_impl(_concatenate_impl)
register_lowering(concatenate_p,
                  lambda ctx, *xs, dimension: ctx.builder.concatenate(list(xs), dimension))


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list[Any]:
    shape = _shape(ct)
    outs, start = [], 0
    for o in operands:
        size = (o.aval.shape if ad.is_undefined_primal(o) else _shape(o))[dimension]
        if ad.is_undefined_primal(o):
            begin = [0] * len(shape)
            end = list(shape)
            begin[dimension], end[dimension] = start, start + size
            outs.append(slice(ct, begin, end))
        else:
            outs.append(None)
        start += size
    return outs


ad.deflinear2(concatenate_p, _concatenate_transpose)


def _concatenate_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                            dimension: int) -> tuple[Any, int]:
    size = batching.batch_size(vals, dims)
    operands = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    return concatenate_p.bind(*operands, dimension=dimension + 1), 0


batching.primitive_batchers[concatenate_p] = _concatenate_batch_rule


def _iota_abstract_eval(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
                        sharding: Any = None) -> ShapedArray:
    _check_shapelike("iota", "shape", shape)
    if not _is_accepted(dtype, _NUM):
        raise TypeError(f"iota does not accept dtype {_dtype_to_string(dtype)}. Accepted "
                        f"dtypes are subtypes of {_NUM.names}.")
    if not 0 <= dimension < len(shape):
        raise ValueError("iota dimension must be between 0 and len(shape), got "
                         f"{dimension=} for {shape=}")
    return ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int,
               sharding: Any = None) -> Array:
    code = _CODE[dtype]
    out_dtype = _DTYPES[code]
    if out_dtype not in _NUM.dtypes or not 0 <= dimension < len(shape) or \
            builtins.min(shape, default=0) < 0:
        iota_p.abstract_eval(dtype=dtype, shape=shape, dimension=dimension, sharding=sharding)
    return _wrap(_core.iota(code, list(shape), dimension, 0), False, out_dtype)


iota_p = Primitive('iota')
iota_p.def_abstract_eval(_iota_abstract_eval)
iota_p.def_impl(_iota_impl)
register_lowering(iota_p, lambda ctx, *, dtype, shape, dimension, sharding=None:
                  ctx.builder.iota(_CODE[np.dtype(dtype)], list(shape), dimension))
ad.defjvp_zero(iota_p)
# iota has no operands, so it is never batched and needs no batching rule.


# ----------------------------------------------------------------------------------------
# dot_general.

class Precision(enum.Enum):
    """Matmul precision (``jax.lax.Precision``); tinyxla always computes in full precision."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Precision.{self.name}"


_PRECISION_STRINGS = {
    'highest': Precision.HIGHEST, 'float32': Precision.HIGHEST, 'high': Precision.HIGH,
    'bfloat16_3x': Precision.HIGH, 'tensorfloat32': Precision.HIGH,
    'default': Precision.DEFAULT, 'bfloat16': Precision.DEFAULT, 'fastest': Precision.DEFAULT}


def canonicalize_precision(precision: Any) -> tuple[Precision, Precision] | None:
    """None, or a (lhs, rhs) pair of Precisions (``jax.lax.canonicalize_precision``).

    JAX's DotAlgorithm presets are not supported.
    """
    if precision is None:
        default = config.jax_default_matmul_precision
        return None if default is None else canonicalize_precision(default)
    if isinstance(precision, str) and precision in _PRECISION_STRINGS:
        p = _PRECISION_STRINGS[precision]
        return p, p
    if isinstance(precision, Precision):
        return precision, precision
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        pair = tuple(_PRECISION_STRINGS.get(p) if isinstance(p, str) else p for p in precision)
        if all(isinstance(p, Precision) for p in pair):
            return pair  # type: ignore[return-value]
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        f"- a tuple of two lax.Precision values or strings;\nbut got {precision}.")


def _dot_type_properties(dt: np.dtype) -> tuple[bool, int, int, int, bool]:
    # The order XLA's HigherPrecisionType uses to pick a result type for mixed inputs.
    c = _real_dtype(dt)
    floating = dtypes.issubdtype(c, np.floating)
    bits = 1 if c == np.bool_ else c.itemsize * 8
    return (dtypes.issubdtype(dt, np.complexfloating),
            dtypes.finfo(c).maxexp if floating else -1,
            dtypes.finfo(c).nmant if floating else -1,
            bits, not dtypes.issubdtype(c, np.unsignedinteger))


def _dot_general_dtype(lhs: np.dtype, rhs: np.dtype, preferred: np.dtype | None) -> np.dtype:
    lp, rp = _dot_type_properties(lhs), _dot_type_properties(rhs)
    if lp > rp:
        out = lhs
    elif rp > lp:
        out = rhs
    else:
        if lhs != rhs:
            raise TypeError(f'lax.dot_general argument type error: {lhs}, {rhs}')
        out = lhs
    if preferred is None or preferred == out:
        return out
    bits = lambda d: 1 if d == np.bool_ else np.dtype(d).itemsize * 8
    if not dtypes.issubdtype(out, np.floating) and bits(preferred) < bits(out):
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got preferred_element_type of {preferred} for result type of {out}.")
    return np.dtype(preferred)


def _dot_general_abstract_eval(lhs: Any, rhs: Any, *, dimension_numbers: Any,
                               precision: Any = None,
                               preferred_element_type: np.dtype | None = None) -> ShapedArray:
    (lc, rc), (lb, rb) = dimension_numbers
    ln, rn = len(lhs.shape), len(rhs.shape)
    if not all(0 <= d < ln for d in (*lc, *lb)):
        raise TypeError("dot_general requires lhs dimension numbers to be nonnegative and less "
                        "than the number of axes of the lhs value, got "
                        f"lhs_batch of {lb} and lhs_contracting of {lc} for lhs of rank {ln}")
    if not all(0 <= d < rn for d in (*rc, *rb)):
        raise TypeError("dot_general requires rhs dimension numbers to be nonnegative and less "
                        "than the number of axes of the rhs value, got "
                        f"rhs_batch of {rb} and rhs_contracting of {rc} for rhs of rank {rn}")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                        f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
    for side, batch, contract in (("lhs", lb, lc), ("rhs", rb, rc)):
        if len(set(batch)) != len(batch):
            raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, "
                            f"got {side}_batch {batch}.")
        if len(set(contract)) != len(contract):
            raise TypeError(f"dot_general requires {side} contracting dimensions to be "
                            f"distinct, got {side}_contracting {contract}.")
        if set(batch) & set(contract):
            raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                            f"contracting dimensions, got {side}_batch {batch} and "
                            f"{side}_contracting {contract}.")
    lbs, rbs = tuple(lhs.shape[i] for i in lb), tuple(rhs.shape[i] for i in rb)
    if lbs != rbs:
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to "
                        f"have the same shape, got {lbs} and {rbs}.")
    lcs, rcs = tuple(lhs.shape[i] for i in lc), tuple(rhs.shape[i] for i in rc)
    if lcs != rcs:
        raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                        f"got {lcs} and {rcs}.")
    dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    shape = (lbs + tuple(d for i, d in enumerate(lhs.shape) if i not in (*lc, *lb))
             + tuple(d for i, d in enumerate(rhs.shape) if i not in (*rc, *rb)))
    return ShapedArray(shape, dtype, _weak(lhs, rhs))


def _dot_general_impl(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None,
                      preferred_element_type: np.dtype | None = None) -> Array:
    x = lhs if type(lhs) is Array else _operand(dot_general_p, 0, lhs)
    y = rhs if type(rhs) is Array else _operand(dot_general_p, 1, rhs)
    params = {"dimension_numbers": dimension_numbers, "precision": precision,
              "preferred_element_type": preferred_element_type}
    xh, yh = x._h, y._h
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = x.dtype if preferred_element_type is None else \
        _DTYPES[_CODE[preferred_element_type]]
    pref = -1
    if x.dtype is not y.dtype or out_dtype is not x.dtype:
        out_dtype = _DTYPES[_CODE[dot_general_p.abstract_eval(x.aval, y.aval, **params).dtype]]
        code = _CODE[out_dtype]
        if x.dtype is y.dtype:
            pref = code  # the runtime accumulates and writes in the wider dtype
        else:
            # Mixed dtypes compute in the result dtype, as XLA does.
            xh, yh = _core.convert(xh, code), _core.convert(yh, code)
    try:
        out = _core.dot_general(xh, yh, list(lc), list(rc), list(lb), list(rb), pref)
    except (TypeError, ValueError) as e:
        moved = _colocated(dot_general_p, (x, y))
        if moved is not None:
            return _dot_general_impl(*moved, **params)
        _reject(dot_general_p, (x, y), params, e)
        raise
    return _result(out, x.weak_type and y.weak_type, out_dtype, (x, y))


dot_general_p = Primitive('dot_general')
dot_general_p.def_abstract_eval(_dot_general_abstract_eval)
dot_general_p.def_impl(_dot_general_impl)


def _dot_general_lowering(ctx: lowering.LoweringContext, x: int, y: int, *, dimension_numbers: Any,
                          precision: Any = None,
                          preferred_element_type: np.dtype | None = None) -> int:
    b = ctx.builder
    (lc, rc), (lb, rb) = dimension_numbers
    x_dtype, y_dtype = ctx.avals_in[0].dtype, ctx.avals_in[1].dtype
    out_code = _CODE[np.dtype(ctx.avals_out[0].dtype)]
    pref = -1
    if x_dtype != y_dtype:  # mixed dtypes compute in the result dtype, as XLA does
        x, y = b.convert(x, out_code), b.convert(y, out_code)
    elif out_code != _CODE[np.dtype(x_dtype)]:
        pref = out_code  # the runtime accumulates and writes in the wider dtype
    return b.dot_general(x, y, list(lc), list(rc), list(lb), list(rb), pref)


register_lowering(dot_general_p, _dot_general_lowering)


def _dot_general_pp_params(params: dict) -> dict:
    """As JAX prints them: dimension numbers as lists, unset options hidden."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown = {"dimension_numbers": ((list(lc), list(rc)), (list(lb), list(rb)))}
    for k in ("precision", "preferred_element_type"):
        if params.get(k) is not None:
            shown[k] = params[k]
    return shown


core.pp_params_rules[dot_general_p] = _dot_general_pp_params


def _ranges_like(*xs: Sequence[int]) -> list[tuple[int, ...]]:
    out, start = [], 0
    for x in xs:
        out.append(tuple(range(start, start + len(x))))
        start += len(x)
    return out


def _dot_general_transpose_lhs(g: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any = None, preferred_element_type: Any = None,
                               swap_ans: bool = False) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = x.aval.ndim
    x_kept = [i for i in range(x_ndim) if i not in x_contract and i not in x_batch]
    y_kept = [i for i in range(_ndim(y)) if i not in y_contract and i not in y_batch]
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
    x_contract_sorted_by_y = [int(i) for i in np.take(x_contract, np.argsort(y_contract))]
    unsorted_axes = list(x_batch) + x_kept + x_contract_sorted_by_y
    out = dot_general(g, y, dims, precision=precision,
                      preferred_element_type=preferred_element_type)
    x_bar = transpose(out, tuple(int(i) for i in np.argsort(unsorted_axes)))
    if _dtype(x_bar) != x.aval.dtype:
        if _dtype(x_bar) in _COMPLEX_DTYPES and x.aval.dtype not in _COMPLEX_DTYPES:
            # A real operand of a complex product: its cotangent is the real part (as the
            # transpose of JAX's real-to-complex convert_element_type, without its warning).
            x_bar = real(x_bar)
        x_bar = _convert_element_type(x_bar, x.aval.dtype, x.aval.weak_type)
    return x_bar


def _dot_general_transpose_rhs(g: Any, x: Any, y: Any, *, dimension_numbers: Any,
                               precision: Any = None, preferred_element_type: Any = None) -> Any:
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return _dot_general_transpose_lhs(g, y, x, dimension_numbers=swapped, precision=precision,
                                      preferred_element_type=preferred_element_type,
                                      swap_ans=True)


ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


def _dot_general_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], *,
                            dimension_numbers: Any, precision: Any = None,
                            preferred_element_type: np.dtype | None = None) -> tuple[Any, int]:
    """JAX's rule, always one dot_general: two batched operands gain a batch dimension;
    one batched operand keeps its batch axis as a free dimension, so a vector-matrix
    product over a batch becomes a single matrix product."""
    lhs, rhs = vals
    lbd, rbd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    bump = lambda ds, b: tuple(d + 1 if d >= b else d for d in ds)
    if lbd is not None and rbd is not None:
        lb, rb = (lbd, *bump(lb, lbd)), (rbd, *bump(rb, rbd))
        lc, rc = bump(lc, lbd), bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        lb, lc = bump(lb, lbd), bump(lc, lbd)
        free = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
        out_dim = len(lb) + free.index(lbd)
    else:
        rb, rc = bump(rb, rbd), bump(rc, rbd)
        free = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
        out_dim = batching.ndim_of(lhs) - len(lc) + free.index(rbd)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                              precision=precision,
                              preferred_element_type=preferred_element_type), out_dim


batching.primitive_batchers[dot_general_p] = _dot_general_batch_rule


# ----------------------------------------------------------------------------------------
# The public API (jax.lax).

def _dtype(x: Any) -> np.dtype:
    return dtypes.dtype(x)


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


def round(x: Any, rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Elementwise round to an integer value (``jax.lax.round``); ``rounding_method`` is a
    RoundingMethod or its int value."""
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


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


def atan2(x: Any, y: Any) -> Any:
    """Elementwise two-argument arc tangent of x / y (``jax.lax.atan2``)."""
    return atan2_p.bind(x, y)


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


def conj(x: Any) -> Any:
    """Elementwise complex conjugate; real operands become complex (``jax.lax.conj``)."""
    return conj_p.bind(x, input_dtype=_dtype(x))


def complex(x: Any, y: Any) -> Any:
    """Elementwise x + i*y (``jax.lax.complex``)."""
    return complex_p.bind(x, y)


def abs(x: Any) -> Any:
    """Elementwise absolute value; complex operands give their magnitude (``jax.lax.abs``)."""
    return abs_p.bind(x)


def square(x: Any) -> Any:
    """Elementwise x * x (``jax.lax.square``)."""
    return square_p.bind(x)


def integer_pow(x: Any, y: int) -> Any:
    """Elementwise x**y for a static integer y (``jax.lax.integer_pow``)."""
    return integer_pow_p.bind(x, y=y)


def population_count(x: Any) -> Any:
    """Elementwise count of set bits (``jax.lax.population_count``)."""
    return population_count_p.bind(x)


def clz(x: Any) -> Any:
    """Elementwise count of leading zero bits (``jax.lax.clz``)."""
    return clz_p.bind(x)


def bitwise_not(x: Any) -> Any:
    """Elementwise NOT; logical for bool (``jax.lax.bitwise_not``)."""
    return not_p.bind(x)


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


def pow(x: Any, y: Any) -> Any:
    """Elementwise x**y; y may be an integer array (``jax.lax.pow``)."""
    return pow_p.bind(x, y)


def max(x: Any, y: Any) -> Any:
    """Elementwise maximum; NaN propagates (``jax.lax.max``)."""
    return max_p.bind(x, y)


def min(x: Any, y: Any) -> Any:
    """Elementwise minimum; NaN propagates (``jax.lax.min``)."""
    return min_p.bind(x, y)


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


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """Elementwise cast; float to int saturates, NaN gives 0 (``jax.lax.convert_element_type``)."""
    new_dtype = dtypes.check_user_dtype_supported(new_dtype, 'convert_element_type')
    return _convert_element_type(operand, new_dtype, weak_type=False)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterprets the bits of each element as ``new_dtype`` (``jax.lax.bitcast_convert_type``)."""
    new_dtype = dtypes.check_user_dtype_supported(new_dtype, 'bitcast_convert_type')
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


def select_n(which: Any, *cases: Any) -> Any:
    """Picks ``cases[which]`` elementwise; ``which`` is bool or integer (``jax.lax.select_n``)."""
    if len(cases) == 0:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(which, *cases)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Elementwise ``on_true if pred else on_false`` (``jax.lax.select``)."""
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """Elementwise min(max(x, min), max) with scalar or same-shape bounds (``jax.lax.clamp``)."""
    return clamp_p.bind(min, x, max)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` without promotion (``jax.lax.reduce_sum``; no ``out_sharding``)."""
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product over ``axes`` (``jax.lax.reduce_prod``)."""
    return reduce_prod_p.bind(operand, axes=tuple(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over ``axes``; empty axes give the dtype's lowest value (``jax.lax.reduce_max``)."""
    return reduce_max_p.bind(operand, axes=tuple(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over ``axes`` (``jax.lax.reduce_min``)."""
    return reduce_min_p.bind(operand, axes=tuple(axes))


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical AND over ``axes`` (``jax.lax.reduce_and``)."""
    return reduce_and_p.bind(operand, axes=tuple(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical OR over ``axes`` (``jax.lax.reduce_or``)."""
    return reduce_or_p.bind(operand, axes=tuple(axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise/logical XOR over ``axes`` (``jax.lax.reduce_xor``)."""
    return reduce_xor_p.bind(operand, axes=tuple(axes))


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the first maximum along ``axis``; NaN counts as the maximum (``jax.lax.argmax``)."""
    index_dtype = dtypes.check_user_dtype_supported(index_dtype, 'argmax')
    return argmax_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """Index of the first minimum along ``axis``; NaN counts as the minimum (``jax.lax.argmin``)."""
    index_dtype = dtypes.check_user_dtype_supported(index_dtype, 'argmin')
    return argmin_p.bind(operand, axes=(axis,), index_dtype=index_dtype)


def _ndim(x: Any) -> int:
    return x.ndim if type(x) is Array or isinstance(x, core.Tracer) else np.ndim(x)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if type(x) is Array or isinstance(x, core.Tracer) else np.shape(x)


def _is_array(x: Any) -> bool:
    return type(x) is Array or isinstance(x, core.Tracer)


def reshape(operand: Any, new_sizes: Any, dimensions: Sequence[int] | None = None) -> Any:
    """The elements (after transposing by ``dimensions``) in a new shape (``jax.lax.reshape``;
    no ``out_sharding``). An array already of that shape is returned as it is."""
    new_sizes = canonicalize_shape(new_sizes)
    shape = _shape(operand)
    dims = None if dimensions is None else tuple(map(operator.index, dimensions))
    same_dims = dims is None or dims == tuple(range(len(shape)))
    if shape and shape == new_sizes and same_dims and _is_array(operand):
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes,
                          dimensions=None if same_dims else dims, sharding=None)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permutes the axes (``jax.lax.transpose``); the identity permutation returns ``operand``."""
    permutation = tuple(operator.index(d) for d in permutation)
    if permutation == tuple(range(_ndim(operand))) and _is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def broadcast_in_dim(operand: Any, shape: Sequence[int],
                     broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcasts ``operand`` to ``shape``; its axis i becomes axis
    ``broadcast_dimensions[i]`` (``jax.lax.broadcast_in_dim``; no ``out_sharding``)."""
    if _ndim(operand) == len(shape) and not len(broadcast_dimensions) and _is_array(operand):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=tuple(shape),
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Adds leading axes of ``sizes`` (``jax.lax.broadcast``)."""
    if len(sizes) == 0:
        return asarray(operand)
    ndim = _ndim(operand)
    dims = tuple(range(len(sizes), len(sizes) + ndim))
    return broadcast_in_dim(operand, tuple(sizes) + tuple(_shape(operand)), dims)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Inserts size-1 axes at ``dimensions`` (``jax.lax.expand_dims``)."""
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f'repeated axis in lax.expand_dims: {dimensions}')
    ndim_out = _ndim(array) + len(dimensions)
    dims = [_canonicalize_axis(i, ndim_out) for i in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f'repeated axis in lax.expand_dims: {dims}')
    dims_set = frozenset(dims)
    result_shape = list(_shape(array))
    for i in sorted(dims_set):
        result_shape.insert(i, 1)
    broadcast_dims = [i for i in range(ndim_out) if i not in dims_set]
    return broadcast_in_dim(array, result_shape, broadcast_dims)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Removes the size-1 axes ``dimensions`` (``jax.lax.squeeze``)."""
    ndim = _ndim(array)
    dimensions = tuple(sorted(_canonicalize_axis(i, ndim) for i in dimensions))
    if not dimensions and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dimensions)


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """The static slice ``operand[start:limit:strides]`` per axis (``jax.lax.slice``)."""
    return slice_p.bind(operand, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices),
                        strides=None if strides is None else tuple(strides))


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverses the order of elements along ``dimensions`` (``jax.lax.rev``)."""
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pads each axis with (low, high, interior) elements of ``padding_value``; negative low
    or high padding crops (``jax.lax.pad``)."""
    return pad_p.bind(operand, padding_value,
                      padding_config=tuple(tuple(c) for c in padding_config))


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Joins arrays along ``dimension`` (``jax.lax.concatenate``)."""
    if len(operands) == 0:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    if len(operands) == 1 and _is_array(operands[0]):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


def iota(dtype: Any, size: int) -> Any:
    """[0, 1, ..., size-1] of ``dtype`` (``jax.lax.iota``)."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Any, dimension: int) -> Any:
    """An array whose elements count along ``dimension`` (``jax.lax.broadcasted_iota``;
    no ``out_sharding``)."""
    dtype = dtypes.check_user_dtype_supported(dtype, "broadcasted_iota")
    shape = canonicalize_shape(shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=operator.index(dimension),
                       sharding=None)


def asarray(x: Any) -> Any:
    """An array from an array-like without copying arrays (``jax.lax.asarray``)."""
    if _is_array(x):
        return x
    if isinstance(x, (bool, np.ndarray, np.generic)):
        return _convert_element_type(x, weak_type=False)
    if isinstance(x, (int, float, builtins.complex)):
        return _convert_element_type(x, dtypes.dtype(x), weak_type=True)
    raise TypeError(f"asarray: expected ArrayLike, got {x} of type {type(x)}.")


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (``jax.lax.full``;
    no ``sharding``). Without ``dtype`` the fill value's dtype and weak type are kept."""
    shape = canonicalize_shape(shape)
    if np.shape(fill_value):
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        weak_type = dtypes.is_weakly_typed(fill_value)
        fill_dtype = _dtype(fill_value)
    else:
        weak_type = False
        fill_dtype = dtypes.check_user_dtype_supported(dtype, "full")
    return broadcast(_convert_element_type(fill_value, fill_dtype, weak_type), shape)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``
    (``jax.lax.full_like``; no ``sharding``)."""
    fill_shape = _shape(x) if shape is None else canonicalize_shape(shape)
    weak_type = dtype is None and dtypes.is_weakly_typed(x)
    dtype = _dtype(x) if dtype is None else _dtype(dtype)
    return full(fill_shape, _convert_element_type(fill_value, dtype, weak_type))


def _array_copy(x: Any) -> Any:
    """A copy of ``x`` in a buffer of its own (``jax._src.lax.lax._array_copy``)."""
    return copy_p.bind(x)


def zeros_like_array(x: Any) -> Any:
    """Zeros of ``x``'s shape and dtype (``jax._src.lax.lax.zeros_like_array``)."""
    return full_like(x, 0)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """General tensor contraction (``jax.lax.dot_general``; no ``out_sharding``).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``; the result's axes are batch, lhs free, rhs free. ``precision`` is
    validated and recorded but tinyxla always computes at full precision.
    """
    return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
               preferred_element_type=preferred_element_type)


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None) -> Any:
    """Vector/matrix products, or ``dot_general`` with ``dimension_numbers`` (``jax.lax.dot``)."""
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    if dimension_numbers is None:
        ln, rn = len(lhs_shape), len(rhs_shape)
        if 1 <= ln <= 2 and 1 <= rn <= 2 and lhs_shape[-1] == rhs_shape[0]:
            dimension_numbers = (((ln - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple"
                " un-batched matrix-matrix, matrix-vector, or vector-vector products;"
                f" got lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb)))
    preferred = (None if preferred_element_type is None else
                 dtypes.check_user_dtype_supported(preferred_element_type, 'dot'))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=preferred)


def stop_gradient(x: Any) -> Any:
    """Every leaf of the pytree ``x``, with zero gradient (``jax.lax.stop_gradient``).

    Today it is the identity on values; the AD rules give it its meaning.
    """
    from tinyxla._src import tree_util
    return tree_util.tree_map(lambda leaf: stop_gradient_p.bind(asarray(leaf)), x)
