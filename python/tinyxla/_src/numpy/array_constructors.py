"""jnp.array and jnp.asarray: Python scalars, nested lists, numpy arrays and buffers to arrays.

Mirrors ``jax._src.numpy.array_constructors``, with JAX's dtype inference, weak types and
errors. Host data is converted with numpy once, to its final dtype, and copied to the
runtime once. The promotion and shape helpers build on this module, so it imports
neither.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.array import Array, _from_numpy
from tinyxla._src.lax import lax

ArrayLike = Any
PY_SCALAR_TYPES = (bool, int, float, complex)


def is_array(x: Any) -> bool:
    """Whether x is a tinyxla Array or a tracer (anything carrying a ``weak_type``)."""
    return type(x) is Array or dtypes._is_array(x)


def convert(x: Any, dtype: np.dtype, weak_type: bool = False) -> Any:
    """x as an array of ``dtype`` and weak type ``weak_type`` (``lax._convert_element_type``).

    Arrays that already match are returned as they are.
    """
    if is_array(x) and x.dtype == dtype and x.weak_type == weak_type:
        return x
    return lax._convert_element_type(x, dtype, weak_type)


def _stage_error(x: Any) -> TypeError:
    return TypeError(f"Error interpreting argument to stage as a JAX value. The problematic "
                     f"value is of type {type(x)} and was passed to stage at position 0.\n")


def _leaves(obj: Any, out: list[Any]) -> None:
    """The non-list, non-tuple leaves of a nested list/tuple, in order."""
    if isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    else:
        out.append(obj)


def _invalid_value(x: Any) -> TypeError:
    return TypeError(f"Value '{x}' with dtype {np.asarray(x).dtype} is not a valid JAX array "
                     "type. Only arrays of numeric types are supported by JAX.")


def _promotion_operand(leaf: Any) -> Any:
    """What stands for a leaf in the dtype inference: its type for Python scalars, the
    leaf for arrays, and what np.asarray makes of anything else (as JAX falls back to)."""
    if type(leaf) in PY_SCALAR_TYPES:
        return type(leaf)
    if not (is_array(leaf) or isinstance(leaf, (np.ndarray, np.generic))):
        leaf = np.asarray(leaf)
    if np.dtype(leaf.dtype) not in dtypes._VALID_DTYPES:
        raise _invalid_value(leaf)
    return leaf


def _infer_dtype(leaves: list[Any]) -> tuple[np.dtype, bool]:
    if not leaves:
        return dtypes.default_float_dtype(), False
    operands: dict[Any, None] = {}
    arrays = []
    for leaf in leaves:
        op = _promotion_operand(leaf)
        if isinstance(op, type):
            operands[op] = None
        else:
            arrays.append(op)
    return dtypes.lattice_result_type(*operands, *arrays)


def _stack_leading(arrs: list[Any]) -> Any:
    """Stacks equally shaped arrays along a new leading axis (as JAX builds jnp.array lists)."""
    return lax.concatenate([lax.expand_dims(a, (0,)) for a in arrs], 0)


def array(object: Any, dtype: Any = None, *args: Any, copy: bool = True,  # noqa: A002
          order: str | None = "K", ndmin: int = 0, device: Any = None) -> Any:
    """Mirrors ``jax.numpy.array``.

    Weakly typed only when the input is (a Python scalar, a weak array) and no dtype is
    given. Lists and tuples take the dtype JAX infers from their leaves. Arrays are
    immutable, so ``copy`` never copies; ``device`` is accepted and ignored (one device).
    """
    if args:
        if len(args) > 3:
            raise TypeError(f"array() takes at most 5 positional arguments but "
                            f"{len(args) + 2} were given")
        for i, name in enumerate(["copy", "order", "ndmin"]):
            if i < len(args) and [copy, order, ndmin][i] != [True, "K", 0][i]:
                raise TypeError(f"array() got multiple values for argument '{name}'")
        copy, order, ndmin = (list(args) + [copy, order, ndmin][len(args):])[:3]
        warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally "
                      "is deprecated. Use keyword arguments instead.", DeprecationWarning,
                      stacklevel=2)
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "array")
    weak = dtype is None and dtypes.is_weakly_typed(object)
    if isinstance(object, np.ma.MaskedArray):
        raise ValueError("numpy masked arrays are not supported as direct inputs to JAX "
                         "functions. Use arr.filled() to convert the value to a standard "
                         "numpy array.")
    if type(object) in PY_SCALAR_TYPES:
        if dtype is None:
            dtype = dtypes._operand(object)[0]
            if type(object) is int:
                dtypes.check_python_int_range(object, dtype)
        out: Any = np.asarray(object, dtype=dtype)
    elif is_array(object):
        out = object
        dtype = dtype or object.dtype
    else:
        m = getattr(object, "__jax_array__", None)
        if m is not None:
            return array(m(), dtype, copy=copy, ndmin=ndmin)
        if isinstance(object, (np.ndarray, np.generic)):
            if object.dtype not in dtypes._VALID_DTYPES:
                if dtype is None:
                    raise _stage_error(object)
                raise _invalid_value(object)
            out = object
            dtype = dtype or dtypes.canonicalize_dtype(object.dtype)
        elif isinstance(object, (list, tuple)):
            leaves: list[Any] = []
            _leaves(object, leaves)
            if any(leaf is None for leaf in leaves):
                raise ValueError("None is not a valid value for jnp.array")
            leaves = [leaf.__jax_array__() if hasattr(leaf, "__jax_array__") else leaf
                      for leaf in leaves]
            if dtype is None:
                dtype = _infer_dtype(leaves)[0]
            if any(is_array(leaf) for leaf in leaves):
                out = _stack_leading([array(e, dtype=dtype) for e in object]) if object else \
                    np.array([], dtype=dtype)
            else:
                out = np.asarray(object, dtype=dtype)
        elif object is None:
            raise ValueError("None is not a valid value for jnp.array")
        else:
            # Buffers (bytes, memoryview...) as numpy sees them; anything else (a range)
            # as np.asarray makes it, as JAX falls back to.
            try:
                out = np.asarray(memoryview(object))
            except TypeError:
                out = np.asarray(object)
            if out.dtype not in dtypes._VALID_DTYPES:
                raise _invalid_value(object)
            dtype = dtype or dtypes.canonicalize_dtype(out.dtype)
    if isinstance(out, (np.ndarray, np.generic)):
        # Host data goes to the runtime once, already in its final dtype.
        out = _from_numpy(np.asarray(out).astype(dtype, copy=False))
    result = convert(out, dtype, weak)
    if ndmin > result.ndim:
        result = lax.reshape(result, (1,) * (ndmin - result.ndim) + tuple(result.shape))
    return result


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None) -> Any:
    """Mirrors ``jax.numpy.asarray``: ``array`` that returns matching arrays unchanged."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "asarray")
    if dtype is None and is_array(a):
        return a
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device)
