"""Lowering a closed jaxpr to something that runs: ``executable_for(closed_jaxpr)``.

Executables are cached on the jaxpr object, so a jit cache hit reuses its executable.
"""
from __future__ import annotations

from typing import Any, Sequence

from tinyxla._src import core
from tinyxla._src.array import Array
from tinyxla._src.numpy.creation import asarray


class JaxprExecutable:
    """Runs a closed jaxpr by dispatching each equation eagerly (each op is asynchronous).
    The C++ graph compiler (``_core.compile``) is not wired in yet."""

    __slots__ = ("closed",)

    def __init__(self, closed: core.ClosedJaxpr):
        self.closed = closed

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        with core.set_current_trace(core.EVAL_TRACE):
            outs = core.eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)
        # An output that is an input or a literal is a Python or numpy value: make it an Array.
        return [x if isinstance(x, Array) else asarray(x) for x in outs]

    def text(self) -> str:
        return str(self.closed)


def executable_for(closed: core.ClosedJaxpr) -> JaxprExecutable:
    """The executable of ``closed``, built once and kept on the jaxpr."""
    exe = closed._executable
    if exe is None:
        exe = closed._executable = JaxprExecutable(closed)
    return exe
