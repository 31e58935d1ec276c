"""The array-API functions of ``jax.numpy.linalg`` that are ``jax.numpy``'s own with the
matrix axes fixed last: ``cross``, ``outer``, ``diagonal``, ``trace``,
``matrix_transpose``, ``matmul``, ``tensordot``, ``vecdot``, ``multi_dot`` and
``matrix_norm``, with JAX's stricter argument checks."""
from __future__ import annotations

import itertools
from typing import Any, Sequence

from tinyxla._src.numpy import products, triangles, vector_products
from tinyxla._src.numpy.einsum import einsum
from tinyxla._src.numpy.linalg import norm
from tinyxla._src.numpy.promotion import ensure_arraylike
from tinyxla._src.numpy.shape import matrix_transpose as _matrix_transpose


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Mirrors ``jax.numpy.linalg.cross``: the cross product of 3-vectors along ``axis``."""
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={x1.shape[axis]} and x2.shape[axis]={x2.shape[axis]}")
    return vector_products.cross(x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    """Mirrors ``jax.numpy.linalg.outer``: the outer product of two 1-d arrays."""
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("Input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}")
    return x1[:, None] * x2[None, :]


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: str | int = "fro") -> Any:
    """Mirrors ``jax.numpy.linalg.matrix_norm``: ``norm`` over the last two axes."""
    x = ensure_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def matrix_transpose(x: Any, /) -> Any:
    """Mirrors ``jax.numpy.linalg.matrix_transpose``: the last two axes swapped."""
    x = ensure_arraylike("jnp.linalg.matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={x.ndim}")
    return _matrix_transpose(x)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.vecdot``: ``sum(conj(x1) * x2, axis)``, broadcasting."""
    x1, x2 = ensure_arraylike("jnp.linalg.vecdot", x1, x2)
    return vector_products.vecdot(x1, x2, axis=axis, precision=precision,
                                  preferred_element_type=preferred_element_type)


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.matmul``."""
    x1, x2 = ensure_arraylike("jnp.linalg.matmul", x1, x2)
    return products.matmul(x1, x2, precision=precision,
                           preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.tensordot`` (no ``out_sharding``)."""
    x1, x2 = ensure_arraylike("jnp.linalg.tensordot", x1, x2)
    return products.tensordot(x1, x2, axes=axes, precision=precision,
                              preferred_element_type=preferred_element_type)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Mirrors ``jax.numpy.linalg.diagonal``: the diagonals of the last two axes."""
    x = ensure_arraylike("jnp.linalg.diagonal", x)
    return triangles.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.trace``: the traces of the last two axes."""
    x = ensure_arraylike("jnp.linalg.trace", x)
    return triangles.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """Mirrors ``jax.numpy.linalg.multi_dot``: the chained product in the cheapest order
    (einsum's path optimizer); the first and last arrays may be vectors."""
    arrs = list(ensure_arraylike("jnp.linalg.multi_dot", *arrays))
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array "
                         f"shapes {[a.shape for a in arrs]}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension "
                         f"of following array. Got array shapes {[a.shape for a in arrs]}")
    axes: list[tuple[int, ...]] = [(i, i + 1) for i in range(len(arrs))]
    if arrs[0].ndim == 1:
        axes[0] = axes[0][1:]
    if arrs[-1].ndim == 1:
        axes[-1] = axes[-1][:1]
    return einsum(*itertools.chain(*zip(arrs, axes)), optimize="auto", precision=precision)
