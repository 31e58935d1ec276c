"""Print options and array-to-text functions: numpy's own, as in JAX.

Arrays print through numpy (``Array.__repr__`` formats the values with
``np.array2string``), so numpy's print options govern them; ``jax.numpy`` re-exports
numpy's functions and so does this module.
"""
from __future__ import annotations

from typing import Any

import numpy as np

array_repr = np.array_repr
array_str = np.array_str


def get_printoptions() -> dict[str, Any]:
    """Alias of ``numpy.get_printoptions`` (mirrors ``jax.numpy.get_printoptions``)."""
    return np.get_printoptions()


def set_printoptions(*args: Any, **kwargs: Any) -> None:
    """Alias of ``numpy.set_printoptions`` (mirrors ``jax.numpy.set_printoptions``)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args: Any, **kwargs: Any) -> Any:
    """Alias of ``numpy.printoptions`` (mirrors ``jax.numpy.printoptions``): a context
    manager."""
    return np.printoptions(*args, **kwargs)
