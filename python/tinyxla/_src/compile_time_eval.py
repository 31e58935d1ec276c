"""``jax.ensure_compile_time_eval``: inside the block, operations on concrete values run
eagerly even while a function is being traced (for jit, grad, vmap ...), so their
results are concrete Arrays usable in Python control flow; operations on tracers are
still staged by the enclosing transformation."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from tinyxla._src import core


class _CompileTimeEvalTrace(core.Trace):
    """Evaluates primitives of concrete operands; hands the others to the trace that was
    current when the block was entered."""

    def __init__(self, parent: core.Trace):
        self.parent = parent

    def process_primitive(self, primitive: core.Primitive, args: Sequence[Any],
                          params: dict) -> Any:
        if any(isinstance(x, core.Tracer) for x in args):
            with core.set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        return core.EVAL_TRACE.process_primitive(primitive, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Runs operations on concrete values eagerly inside the block
    (``jax.ensure_compile_time_eval``); outside any transformation it changes nothing."""
    parent = core.current_trace()
    if parent is core.EVAL_TRACE:
        yield
        return
    with core.set_current_trace(_CompileTimeEvalTrace(parent)):
        yield
