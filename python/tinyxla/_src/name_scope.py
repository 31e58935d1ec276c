"""``jax.named_scope`` and ``jax.named_call``: names for the operations of a block or a
function. JAX records them in the jaxpr's source information for profilers and HLO
metadata; tinyxla's jaxprs carry no names, so these only check their arguments and
leave every value unchanged."""
from __future__ import annotations

import contextlib
import functools
from typing import Callable, Iterator, TypeVar

F = TypeVar("F", bound=Callable)


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A named block of operations (``jax.named_scope``); ``name`` must be a string."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun`` under the name ``name`` (default its ``__name__``) (``jax.named_call``)."""
    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)
    return named  # type: ignore[return-value]
