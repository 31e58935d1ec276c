"""The eager ``+``, ``-`` and ``*`` of Arrays without the ``jnp`` → ``lax`` → primitive
chain (seven Python calls for ``x + 1``): the operators are C methods of Array
(``_core.eager_operator``) that, on the eager trace, run the operand cases whose result has
the Array's own dtype as one binary op and build the result Array themselves. Every other
case, and any error, takes the general operator (``jnp.add`` and so on), so results, weak
types, committed devices and error messages are the general path's.

The fast cases: an Array whose ``_committed`` is a bool (one laid out over a mesh keeps
the general path, which lays the result out) and

- another such Array of the same dtype, any but bool (whose add and multiply are or and
  and), of the same rank or a 0-d one; the result is weak when both are, committed when
  either is;
- a Python float, for a float32 or float64 Array (the scalar rounds once, from the double,
  on either path); a Python int in int32's range, for a float32, float64 or int32 Array.
  Narrower and wider cases promote, check ranges or round twice: the general path.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes
from tinyxla._src.array import Array
from tinyxla._src.lax.eager import _BINARY_OP

_CODES = {"add": _BINARY_OP["add"], "subtract": _BINARY_OP["sub"], "multiply": _BINARY_OP["mul"]}

_core.setup_eager_operators(
    Array, core._state, core.EVAL_TRACE,
    same_dtypes=tuple(d for d in dtypes.SUPPORTED_DTYPES if d != dtypes.bool_dtype),
    float_scalar_dtypes=(np.dtype("float32"), np.dtype("float64")),
    int32=np.dtype("int32"))


def fast_binop(name: str, fun_name: str, reflected: bool,
               general: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Array's operator ``name`` (``general``, the operator for ``jnp.<fun_name>``) with the
    eager fast path in front of it; ``general`` itself for operators without one."""
    code = _CODES.get(fun_name)
    if code is None:
        return general
    return _core.eager_operator(name, code, reflected, general)
