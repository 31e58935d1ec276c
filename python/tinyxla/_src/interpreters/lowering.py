"""Lowering a closed jaxpr to something that runs: ``executable_for(closed_jaxpr)``.

Executables are cached on the jaxpr object, so a jit cache hit reuses its executable.
"""
from __future__ import annotations

from typing import Any, Sequence

from tinyxla._src import core


class JaxprExecutable:
    """Runs a closed jaxpr by dispatching each equation eagerly (each op is asynchronous)."""

    __slots__ = ("closed",)

    def __init__(self, closed: core.ClosedJaxpr):
        self.closed = closed

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        with core.set_current_trace(core.EVAL_TRACE):
            return core.eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)

    def text(self) -> str:
        return str(self.closed)


_executables: "dict[int, tuple[core.ClosedJaxpr, JaxprExecutable]]" = {}


def executable_for(closed: core.ClosedJaxpr) -> JaxprExecutable:
    hit = _executables.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    exe = JaxprExecutable(closed)
    _executables[id(closed)] = (closed, exe)
    return exe
