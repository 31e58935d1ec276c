"""Conversions: ``convert_element_type`` and ``bitcast_convert_type``, with the weak-typed
constants (``weak_scalar``, ``_const``) and ``asarray`` built on them.

Mirrors the conversion part of ``jax._src.lax.lax``: each primitive with its abstract eval,
impl, lowering, JVP, transpose and batching rules, and its public function.
"""
from __future__ import annotations

import builtins
import warnings
from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, devices, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array, _wrap
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.lax.eager import _PY_DTYPE, _PY_SCALARS, _operand, _reject, _result
from tinyxla._src.lax.type_rules import _BOOL, _COMPLEX_DTYPES, _dtype, _is_array


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
        return _wrap(_core.scalar(value, code, devices.default_index()), weak_type, out_dtype)
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
        return _wrap(_core.scalar(operand, _CODE[new], devices.default_index()), weak_type, new)
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


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """Elementwise cast; float to int saturates, NaN gives 0 (``jax.lax.convert_element_type``)."""
    new_dtype = dtypes.check_user_dtype_supported(new_dtype, 'convert_element_type')
    if type(operand) is complex:
        # JAX casts a Python scalar with the target's Python type: complex -> real fails.
        kind = np.dtype(new_dtype).kind
        if kind == 'f':
            raise TypeError("float() argument must be a string or a real number, not 'complex'")
        if kind in 'iu':
            raise TypeError("int() argument must be a string, a bytes-like object or a real "
                            "number, not 'complex'")
    return _convert_element_type(operand, new_dtype, weak_type=False)


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


def _const(x: Any, value: Any) -> Any:
    return weak_scalar(value.item() if isinstance(value, np.generic) else value, _dtype(x))


def asarray(x: Any) -> Any:
    """An array from an array-like without copying arrays (``jax.lax.asarray``)."""
    if _is_array(x):
        return x
    if isinstance(x, (bool, np.ndarray, np.generic)):
        return _convert_element_type(x, weak_type=False)
    if isinstance(x, (int, float, builtins.complex)):
        return _convert_element_type(x, dtypes.dtype(x), weak_type=True)
    raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")


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
    except (ValueError, TypeError) as e:
        _reject(bitcast_convert_type_p, (x,), {"new_dtype": new_dtype}, e)
        raise


bitcast_convert_type_p = Primitive('bitcast_convert_type')
bitcast_convert_type_p.def_abstract_eval(_bitcast_convert_type_abstract_eval)
bitcast_convert_type_p.def_impl(_bitcast_convert_type_impl)
register_lowering(bitcast_convert_type_p,
                  lambda ctx, x, *, new_dtype:
                  ctx.builder.bitcast_convert(x, _CODE[np.dtype(new_dtype)]))
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


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterprets the bits of each element as ``new_dtype`` (``jax.lax.bitcast_convert_type``)."""
    new_dtype = dtypes.check_user_dtype_supported(new_dtype, 'bitcast_convert_type')
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)
