"""What differentiation needs of the operations it does not define: zeros of an aval and
the sum of two tangents (mirrors ``jax._src.ad_util``).

Both are filled in by lax, which sits above the interpreters: ``aval_zeros_likers``
maps an aval type to the function making its zeros, and ``add_jaxvals_p`` gets its
eager impl from lax's ``add``. So the interpreters use them without importing lax.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import lowering

# aval type -> zeros of such an aval (registered by lax).
aval_zeros_likers: dict[type, Callable[[Any], Any]] = {}


def zeros_like_aval(aval: ShapedArray) -> Any:
    """Zeros of ``aval`` (a numpy array for float0, whose values are never used)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return aval_zeros_likers[type(aval)](aval)


# add_any: the sum of two tangents or cotangents (JAX's ``add_jaxvals_p``). A primitive of
# its own so that transposition knows the sum is of linear values. Its impl is lax's add.
add_jaxvals_p = Primitive("add_any")


@add_jaxvals_p.def_abstract_eval
def _add_jaxvals_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


lowering.register_lowering(
    add_jaxvals_p, lambda ctx, x, y: ctx.builder.binary(_core.BINARY_OPS.index("add"), x, y))
