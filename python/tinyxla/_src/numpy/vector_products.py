"""Products of vectors: vecdot, matvec, vecmat, cross and kron.

Mirrors ``jax.numpy``: vecdot conjugates its first operand and contracts one axis,
matvec/vecmat broadcast their batch dimensions (vecmat conjugates the vector), each one
``dot_general``; cross is built from the components, kron from one broadcast product.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import promotion, ufuncs
from tinyxla._src.numpy.products import _dot_general, _result
from tinyxla._src.numpy.promotion import canonicalize_axis, ensure_arraylike
from tinyxla._src.numpy.shape import moveaxis

ArrayLike = Any


def _batched_contraction(name: str, x1: Any, x2: Any, core1: int, core2: int,
                         contract: tuple[int, int], precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """dot_general of x1 and x2 whose last ``core`` axes are the operands and whose
    leading axes broadcast as a batch; ``contract`` is one core axis of each."""
    b1, b2 = x1.shape[:x1.ndim - core1], x2.shape[:x2.ndim - core2]
    batch = promotion.broadcast_shapes(b1, b2)
    x1 = promotion.broadcast_to_shape(x1, batch + x1.shape[x1.ndim - core1:])
    x2 = promotion.broadcast_to_shape(x2, batch + x2.shape[x2.ndim - core2:])
    nb = len(batch)
    bdims = tuple(range(nb))
    dt, weak = _result(name, x1, x2, preferred_element_type)
    return _dot_general(x1, x2, ((nb + contract[0],), (nb + contract[1],)), (bdims, bdims),
                        dt, weak, precision)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """Mirrors ``jax.numpy.vecdot``: sum(conj(x1) * x2) along ``axis``, other axes
    broadcast."""
    x1, x2 = ensure_arraylike("jnp.vecdot", x1, x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with {axis=}")
    x1 = moveaxis(x1, axis, -1)
    x2 = moveaxis(x2, axis, -1)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        x1 = lax.conj(x1)
    return _batched_contraction("vecdot", x1, x2, 1, 1, (0, 0), precision,
                                preferred_element_type)


def _check_signature(signature: str, x1: Any, core1: tuple[str, ...], x2: Any,
                     core2: tuple[str, ...]) -> None:
    """The errors ``jnp.vectorize`` raises for ``signature`` (JAX builds these two
    functions with it)."""
    where = f"on vectorized function with excluded=frozenset() and signature={signature!r}"
    sizes: dict[str, int] = {}
    for x, core in ((x1, core1), (x2, core2)):
        if x.ndim < len(core):
            raise ValueError(f"input with shape {x.shape} does not have enough dimensions for "
                             f"all core dimensions {core} {where}")
        for name, size in zip(core, x.shape[x.ndim - len(core):]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(f"inconsistent size for core dimension {name!r}: {size} vs "
                                 f"{sizes[name]} {where}")


def matvec(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.matvec``: matrices (..., n, m) times vectors (..., m)."""
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    _check_signature("(n,m),(m)->(n)", x1, ("n", "m"), x2, ("m",))
    return _batched_contraction("matvec", x1, x2, 2, 1, (1, 0))


def vecmat(x1: ArrayLike, x2: ArrayLike, /) -> Any:
    """Mirrors ``jax.numpy.vecmat``: conj(vectors) (..., n) times matrices (..., n, m)."""
    x1, x2 = ensure_arraylike("matvec", x1, x2)
    _check_signature("(n),(n,m)->(m)", x1, ("n",), x2, ("n", "m"))
    return _batched_contraction("vecmat", ufuncs.conj(x1), x2, 1, 2, (0, 0))


def cross(a: ArrayLike, b: ArrayLike, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Mirrors ``jax.numpy.cross``: 3-vectors (2-vectors count as z = 0; two 2-vectors
    give the scalar z component)."""
    promotion.check_arraylike("cross", a, b)
    a, b = promotion.ensure_array(a), promotion.ensure_array(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    mul, sub = ufuncs.multiply, ufuncs.subtract
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return sub(mul(a[..., 0], b[..., 1]), mul(a[..., 1], b[..., 0]))
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else lax.full_like(a0, 0)
    b2 = b[..., 2] if b.shape[-1] == 3 else lax.full_like(b0, 0)
    parts = promotion.broadcast_arrays_of(sub(mul(a1, b2), mul(a2, b1)),
                                          sub(mul(a2, b0), mul(a0, b2)),
                                          sub(mul(a0, b1), mul(a1, b0)))
    c = lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)
    return moveaxis(c, 0, canonicalize_axis(axisc, c.ndim))


def kron(a: ArrayLike, b: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.kron``: the Kronecker product (the lower-rank operand gets
    leading unit axes)."""
    promotion.check_arraylike("kron", a, b)
    a, b = promotion.promote_dtypes(a, b)
    nd = max(a.ndim, b.ndim)
    a = lax.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = lax.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a2 = lax.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b2 = lax.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    out_shape = tuple(int(x) * int(y) for x, y in zip(a.shape, b.shape))
    return lax.reshape(ufuncs.multiply(a2, b2), out_shape)
