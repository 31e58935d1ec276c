"""What the lax impls share on the way to their ``_core`` calls.

The C++ op codes, the op interface the impls run emitters on (``EAGER``), the dtypes of
Python scalars in the current x64 mode, a concrete operand as an Array (with JAX's error
for a non-array value), JAX's error for an eager call the fast path rejected, the
wrapping of a result handle, and JAX's placement rule for operands on several devices.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array, _to_array, _wrap
from tinyxla._src.config import config
from tinyxla._src.core import Primitive

_UNARY_OP = {name: i for i, name in enumerate(_core.UNARY_OPS)}
_BINARY_OP = {name: i for i, name in enumerate(_core.BINARY_OPS)}
_REDUCE_OP = {name: i for i, name in enumerate(_core.REDUCE_OPS)}
_I32 = _CODE[dtypes.int32]
_PY_SCALARS = frozenset({bool, int, float, complex})


# The dtypes of Python scalars in the current x64 mode.
_PY_DTYPE: dict[type, np.dtype] = {}


def _refresh_py_dtypes(name: str | None = None, value: Any = None) -> None:
    for t in _PY_SCALARS:
        _PY_DTYPE[t] = _DTYPES[_CODE[dtypes.canonicalize_dtype(dtypes.python_scalar_dtypes[t])]]


_refresh_py_dtypes()
config.add_update_hook(_refresh_py_dtypes)


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


class _EagerOps:
    """``_core``'s eager functions under the graph builder's method names: the op interface
    an emitter (``lowering.register_emitter``) writes to, run on handles."""

    unary = staticmethod(_core.unary)
    binary = staticmethod(_core.binary)
    convert = staticmethod(_core.convert)
    select_n = staticmethod(_core.select_n)
    broadcast_in_dim = staticmethod(_core.broadcast_in_dim)
    transpose = staticmethod(_core.transpose)
    reshape = staticmethod(_core.reshape)
    slice = staticmethod(_core.slice)
    rev = staticmethod(_core.rev)
    pad = staticmethod(_core.pad)
    dot_general = staticmethod(_core.dot_general)

    @staticmethod
    def op(name: str, attrs: dict, inputs: Sequence[Any]) -> Any:
        """A registered C++ op by name, run eagerly (``GraphBuilder.op``'s signature)."""
        return _core.make_op(name, attrs)(*inputs)

    @staticmethod
    def shape(h: Any) -> tuple[int, ...]:
        return tuple(h.shape)

    @staticmethod
    def dtype_code(h: Any) -> int:
        return h.dtype_code

    @staticmethod
    def full_like(h: Any, value: Any) -> Any:
        """A handle of ``h``'s shape and dtype filled with ``value``, on ``h``'s device."""
        return _core.full(list(h.shape), value, h.dtype_code, h.device)


EAGER = _EagerOps()
