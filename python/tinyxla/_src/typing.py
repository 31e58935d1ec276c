"""Static type annotations (mirrors ``jax._src.typing``): ``ArrayLike`` for values that
convert implicitly to an array, ``DTypeLike`` for values that name a dtype. Both are
``typing.Union``s, usable with ``isinstance`` as in JAX."""
from __future__ import annotations

import typing
from typing import Any, Protocol, Sequence, Union

import numpy as np

from tinyxla._src.array import Array

DType = np.dtype


@typing.runtime_checkable
class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (``jnp.float32``, arrays)."""

    @property
    def dtype(self, /) -> DType: ...


DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
DTypeLike.__doc__ = "Type annotation for values that name a JAX-compatible dtype."

StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]

# Sequences and strings are not array-like, as in JAX.
ArrayLike = Union[Array, np.ndarray, StaticScalar]
ArrayLike.__doc__ = "Type annotation for JAX array-like objects."

DimSize = Union[int, Any]
Shape = Sequence[DimSize]
