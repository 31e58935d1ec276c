"""Dtype classes and the shape and dtype rules the lax abstract-eval rules share.

Mirrors the helpers of ``jax._src.lax.lax`` (``unop_dtype_rule``, ``naryop_dtype_rule``,
``check_same_dtypes``, ``broadcasting_shape_rule``, ``_check_shapelike``). The impls test
membership in the concrete dtypes of an ``_Accepted`` (the identical objects Arrays carry);
the abstract-eval rules use JAX's abstract types and raise JAX's error class and text.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array

_BOOL = dtypes.bool_dtype
_COMPLEX_DTYPES = (dtypes.complex64, dtypes.complex128)


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


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64) if dtype == dtypes.complex128 else \
        np.dtype(np.float32) if dtype == dtypes.complex64 else dtype


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return dtypes.complex128 if dtype in (dtypes.float64, dtypes.complex128) else dtypes.complex64


# ----------------------------------------------------------------------------------------
# Abstract-eval building blocks (JAX's unop/naryop dtype and shape rules).

def _dtype_to_string(dtype: Any) -> str:
    return np.dtype(dtype).name


def _weak(*avals: Any) -> bool:
    return all(a.weak_type for a in avals)


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
    if type(shape) is tuple and all(type(d) is int and 0 <= d < _MAX_DIM for d in shape):
        dims = shape
    else:
        try:
            shape = tuple(shape)
        except TypeError:
            shape = (shape,)
        try:
            dims = tuple(map(operator.index, shape))
        except TypeError:
            msg = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
            if context:
                msg += f" {context}."
            raise TypeError(msg) from None
        if any(abs(d) >= _MAX_DIM for d in dims):
            raise TypeError(f"Shapes must be 1D sequences of integers smaller than 2**63, got {dims}.")
    if len(dims) > 1 and 0 not in dims and math.prod(dims) >= _MAX_DIM:
        # XLA's status text; jax 0.10.2 aborts the process on it.
        raise ValueError(f"overflow in static extent product: dimensions={list(dims)}.")
    return dims


_MAX_DIM = 2 ** 63


def _canonicalize_axis(axis: Any, num_dims: int) -> int:
    """An axis in [-num_dims, num_dims) as one in [0, num_dims) (``util.canonicalize_axis``)."""
    axis = operator.index(axis)
    if not -num_dims <= axis < num_dims:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
    return axis + num_dims if axis < 0 else axis


# ----------------------------------------------------------------------------------------
# The dtype and shape of an operand (an Array, a tracer, or an array-like).

def _dtype(x: Any) -> np.dtype:
    return dtypes.dtype(x)


def _ndim(x: Any) -> int:
    return x.ndim if type(x) is Array or isinstance(x, core.Tracer) else np.ndim(x)


def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if type(x) is Array or isinstance(x, core.Tracer) else np.shape(x)


def _is_array(x: Any) -> bool:
    return type(x) is Array or isinstance(x, core.Tracer)
