"""Arrays from other sources: fromfunction, fromiter, frombuffer, fromstring.

Mirrors the functions of the same names in ``jax._src.numpy.lax_numpy``: ``fromfunction``
calls the function once on index arrays, under nested vmaps (so the function sees scalar
indices per element, as in JAX); buffers and strings are read with numpy. ``fromiter``
raises JAX's NotImplementedError: consuming an iterator is a side effect.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src.numpy.creation import arange, asarray
from tinyxla._src.numpy.shape import canonicalize_shape
from tinyxla._src.vmap import vmap


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """Mirrors ``jax.numpy.fromfunction``: ``function(i, j, ...)`` over the index grid."""
    shape = canonicalize_shape(shape, context="shape argument of jnp.fromfunction()")
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Mirrors ``jax.numpy.fromiter``: not implemented, as in JAX (it is impure)."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) "
        "instead, although care should be taken if np.fromiter is used within a jax "
        "transformations because of its potential side-effect of consuming the iterable "
        "object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """Mirrors ``jax.numpy.frombuffer``: numpy's reading of the bytes, as an Array."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """Mirrors ``jax.numpy.fromstring``: numpy's parsing of the text (``sep`` required)."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))
