"""``jax.scipy.special.softmax`` and ``log_softmax``: ``jax.nn``'s, over all axes by
default."""
from __future__ import annotations

from typing import Any

from tinyxla._src.nn import functions as nn


def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """Mirrors ``jax.scipy.special.softmax``: ``jax.nn.softmax`` with ``axis=None`` (all
    axes) by default."""
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """Mirrors ``jax.scipy.special.log_softmax``: ``jax.nn.log_softmax`` with
    ``axis=None`` (all axes) by default."""
    return nn.log_softmax(x, axis=axis)
