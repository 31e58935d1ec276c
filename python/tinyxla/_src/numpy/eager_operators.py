"""The eager ``+``, ``-`` and ``*`` of Arrays without the ``jnp`` → ``lax`` → primitive
chain (seven Python calls for ``x + 1``): on the eager trace, the operand cases whose result
has the Array's own dtype go straight to ``_core.binary``, the runtime call the chain ends
in. Every other case, and any error, takes the general operator (``jnp.add`` and so on), so
results, weak types, committed devices and error messages are the general path's.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes
from tinyxla._src.array import Array, _wrap
from tinyxla._src.lax.eager import _BINARY_OP

_CODES = {"add": _BINARY_OP["add"], "subtract": _BINARY_OP["sub"], "multiply": _BINARY_OP["mul"]}
# Same-dtype Array operands: any dtype but bool (whose add and multiply are or and and).
_SAME_DTYPE = frozenset(dtypes.SUPPORTED_DTYPES) - {dtypes.bool_dtype}
# Python int and float scalars keep these dtypes: a float32 or float64 Array's (a float
# scalar rounds once, from the double, on either path), an int32 Array's for an int in its
# range. Narrower and wider cases promote, check ranges or round twice: the general path.
_FLOAT_SCALAR_OK = frozenset({np.dtype("float32"), np.dtype("float64")})
_INT32 = np.dtype("int32")
_INT32_MIN, _INT32_END = -(1 << 31), 1 << 31


def fast_binop(fun_name: str, reflected: bool,
               general: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``general`` (Array's operator for ``jnp.<fun_name>``) with the eager fast path in front
    of it; ``general`` itself for operators without one."""
    code = _CODES.get(fun_name)
    if code is None:
        return general
    binary = _core.binary
    state, eval_trace = core._state, core.EVAL_TRACE

    def op(self: Any, other: Any) -> Any:
        # An Array laid out over a mesh (its _committed is its layout, not a bool) takes the
        # general path, which lays the result out.
        if state.trace is eval_trace and type(self) is Array and self._committed.__class__ is bool:
            t = type(other)
            dt = self.dtype
            try:
                if t is Array:
                    if other.dtype is dt and dt in _SAME_DTYPE and \
                            other._committed.__class__ is bool:
                        h, oh = self._h, other._h
                        n, on = h.ndim, oh.ndim
                        if n == on or not n or not on:
                            out = _wrap(binary(code, oh, h) if reflected else binary(code, h, oh),
                                        self.weak_type and other.weak_type, dt)
                            out._committed = self._committed or other._committed
                            return out
                elif (t is float and dt in _FLOAT_SCALAR_OK
                      or t is int and (dt in _FLOAT_SCALAR_OK or dt is _INT32)
                      and _INT32_MIN <= other < _INT32_END):
                    h = self._h
                    out = _wrap(binary(code, other, h) if reflected else binary(code, h, other),
                                self.weak_type, dt)
                    out._committed = self._committed
                    return out
            except (ValueError, TypeError):  # devices or shapes: the general path says so
                pass
        return general(self, other)

    op.__doc__ = general.__doc__
    return op
