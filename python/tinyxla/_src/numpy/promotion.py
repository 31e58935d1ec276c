"""Argument checks, dtype promotion and shape broadcasting shared by the jnp functions.

Mirrors ``jax._src.numpy.util`` (``check_arraylike``, ``promote_dtypes*``,
``promote_args*``, ``promote_shapes``, ``_broadcast_arrays``) and the axis helpers of
``jax._src.util``.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.array import Array
from tinyxla._src.config import config
from tinyxla._src.lax import lax
from tinyxla._src.numpy.array_constructors import PY_SCALAR_TYPES, asarray, convert, is_array


# The range a Python int must fit: JAX parses it as the default int dtype.
_PY_INT_BOUNDS = {False: (-2**31, 2**31 - 1), True: (-2**63, 2**63 - 1)}


def is_arraylike(x: Any) -> bool:
    """JAX's notion of array-like: arrays, numpy arrays and scalars, Python scalars."""
    return (type(x) in PY_SCALAR_TYPES or isinstance(x, (Array, np.ndarray, np.generic))
            or dtypes._is_array(x) or hasattr(x, "__jax_array__") or np.isscalar(x))


def check_arraylike(fun_name: str, *args: Any) -> None:
    """Raises JAX's TypeError for the first argument that is not array-like (lists, tuples...).

    Mirrors ``jax._src.numpy.util.check_arraylike``.
    """
    for pos, arg in enumerate(args):
        if not is_arraylike(arg):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, "
                            f"got {type(arg)} at position {pos}.")


def check_python_int(value: int, arg_name: str = "x") -> None:
    """JAX's OverflowError for a Python int operand outside the default int dtype's range.

    JAX parses such operands as jit arguments, so the message names the argument.
    """
    lo, hi = _PY_INT_BOUNDS[config.jax_enable_x64]
    if not lo <= value <= hi:
        raise OverflowError(
            "An overflow was encountered while parsing an argument to a jitted "
            f"computation, whose argument path is {arg_name}. Got {type(value)} "
            f"with value {value}")


def check_jit_args(fun: Any, arg_names: Sequence[str], args: Sequence[Any]) -> None:
    """JAX's error for a jitted jnp function given a non-numeric value (a str, an object
    array): JAX's jnp functions are jitted, so the jit argument parser reports it."""
    for name, a in zip(arg_names, args):
        if isinstance(a, str) or (isinstance(a, (np.ndarray, np.generic))
                                  and a.dtype not in dtypes._VALID_DTYPES):
            raise TypeError(
                f"Error interpreting argument to {fun!r} as an abstract array. The "
                f"problematic value is of type {type(a)} and was passed to the function at "
                f"path {name}.\nThis typically means that a jit-wrapped function was called "
                "with a non-array argument, and this argument was not marked as static using "
                "the static_argnums or static_argnames parameters of jax.jit.")


def _array_protocol(x: Any) -> Any:
    m = getattr(x, "__jax_array__", None)
    return m() if m is not None else x


def ensure_array(x: Any) -> Any:
    """x as an array: arrays pass through, Python scalars become weak 0-d arrays."""
    if is_array(x):
        return x
    x = _array_protocol(x)
    if is_array(x):
        return x
    dt, weak = dtypes._operand(x) if type(x) in PY_SCALAR_TYPES else (None, False)
    if dt is None:
        return asarray(x)
    if type(x) is int:
        dtypes.check_python_int_range(x, dt)
    return lax._convert_element_type(x, dt, weak)


def ensure_arraylike(fun_name: str, *args: Any) -> Any:
    """check_arraylike, then each argument as an array; one argument gives one array.

    Mirrors ``jax._src.numpy.util.ensure_arraylike``.
    """
    check_arraylike(fun_name, *args)
    if len(args) == 1:
        return ensure_array(args[0])
    return tuple(ensure_array(a) for a in args)


def _check_scalars(args: Sequence[Any], arg_names: Sequence[str]) -> None:
    for name, a in zip(arg_names, args):
        if type(a) is int:
            check_python_int(a, name)


def promote_dtypes(*args: Any) -> list[Any]:
    """Converts the arguments to their common dtype (mirrors ``jax._src.numpy.util.promote_dtypes``)."""
    if len(args) < 2:
        return [ensure_array(a) for a in args]
    to_dtype, weak = dtypes.lattice_result_type(*args)
    return [convert(a, to_dtype, weak) for a in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """Like promote_dtypes, but integer and bool results become floating (``promote_dtypes_inexact``)."""
    to_dtype, weak = dtypes.lattice_result_type(*args)
    to_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(to_dtype))
    return [convert(a, to_dtype, weak) for a in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """Like promote_dtypes, but a bool result becomes int32 (``promote_dtypes_numeric``)."""
    to_dtype, weak = dtypes.lattice_result_type(*args)
    to_dtype = dtypes.to_numeric_dtype(to_dtype)
    return [convert(a, to_dtype, weak) for a in args]


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast of shapes, with JAX's ValueError (``jax.numpy.broadcast_shapes``)."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    nd = max(len(s) for s in shapes)
    out = [1] * nd
    for s in shapes:
        for i, d in enumerate(s, nd - len(s)):
            if d != out[i]:
                if out[i] == 1:
                    out[i] = d
                elif d != 1:
                    raise ValueError("Incompatible shapes for broadcasting: shapes="
                                     f"{[tuple(s) for s in shapes]}")
    return tuple(out)


def broadcast_to_shape(x: Any, shape: tuple[int, ...]) -> Any:
    """x broadcast to ``shape`` (already known to be compatible) with one broadcast_in_dim."""
    if x.shape == shape:
        return x
    nd = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(nd - x.ndim, nd)))


def _broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with leading size-1 axes up to ``rank`` (``lax.broadcast_to_rank``)."""
    shape = tuple(np.shape(x))
    if len(shape) == rank:
        return x
    x = ensure_array(x)
    new_shape = (1,) * (rank - len(shape)) + shape
    return lax.broadcast_in_dim(x, new_shape, tuple(range(rank - len(shape), rank)))


def promote_shapes(fun_name: str, *args: Any) -> list[Any]:
    """NumPy rank promotion (mirrors ``jax._src.numpy.util.promote_shapes``).

    Operands of different non-zero ranks get leading size-1 axes (one broadcast_in_dim
    each), or JAX's warning or error under ``jax_numpy_rank_promotion``; size-1 axes and
    0-d operands are left for the lax primitive to broadcast, as in JAX, so shapes that
    do not broadcast raise the primitive's error.
    """
    if len(args) < 2:
        return list(args)
    shapes = [np.shape(a) for a in args]
    rank0 = len(shapes[0])
    if all(len(s) == rank0 for s in shapes[1:]):
        return list(args)
    if len({len(s) for s in shapes if s}) < 2:
        return list(args)
    if config.jax_numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(fun_name, shapes)
    rank = len(broadcast_shapes(*shapes))
    return [_broadcast_to_rank(a, rank) for a in args]


def _rank_promotion_warning_or_error(fun_name: str, shapes: Sequence[tuple[int, ...]]) -> None:
    listed = " ".join(map(str, shapes))
    if config.jax_numpy_rank_promotion == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes "
                      f"{listed}. Set the jax_numpy_rank_promotion config option to 'allow' to "
                      "disable this warning; for more information, see "
                      "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    else:
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion='raise'. "
                         "For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def _prepare(fun_name: str, args: tuple[Any, ...], arg_names: Sequence[str]) -> tuple[Any, ...]:
    check_arraylike(fun_name, *args)
    _check_scalars(args, arg_names)
    return tuple(_array_protocol(a) for a in args)


# ``arg_names`` of promote_args* are the parameter names JAX's overflow error names.
def promote_args(fun_name: str, *args: Any, arg_names: Sequence[str] = ("x", "y")) -> list[Any]:
    """check_arraylike, promote_dtypes, then promote_shapes (mirrors ``promote_args``)."""
    args = _prepare(fun_name, args, arg_names)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args: Any,
                         arg_names: Sequence[str] = ("x", "y")) -> list[Any]:
    """promote_args with an inexact result dtype (mirrors ``promote_args_inexact``)."""
    args = _prepare(fun_name, args, arg_names)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args: Any,
                         arg_names: Sequence[str] = ("x", "y")) -> list[Any]:
    """promote_args with a non-bool result dtype (mirrors ``promote_args_numeric``)."""
    args = _prepare(fun_name, args, arg_names)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def broadcast_arrays_of(*args: Any) -> list[Any]:
    """Arrays broadcast to their common shape, 0-d ones included (``_broadcast_arrays``)."""
    shapes = [np.shape(a) for a in args]
    if all(s == shapes[0] for s in shapes):
        return [ensure_array(a) for a in args]
    out_shape = broadcast_shapes(*shapes)
    return [broadcast_to_shape(ensure_array(a), out_shape) for a in args]


def canonicalize_axis(axis: Any, ndim: int) -> int:
    """A non-negative axis, with numpy's error for one out of range (``jax._src.util.canonicalize_axis``)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis



def concrete_or_error(force: Any, value: Any, context: str = "") -> Any:
    """``force(value)`` for a concrete value; JAX's ConcretizationTypeError (with
    ``context``) for a traced one (``jax._src.core.concrete_or_error``)."""
    if isinstance(value, core.Tracer):
        raise errors.ConcretizationTypeError(value, context)
    return value if force is None else force(value)
