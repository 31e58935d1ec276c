"""tinyxla's tools beyond JAX: pictures of the compiled graph."""
from __future__ import annotations

from typing import Any, Callable

from tinyxla._src.sharded_jit import jit


def graph_svg(f: Callable, *args: Any, layout: str = "auto", **kwargs: Any) -> str:
    """SVG of the graph ``jit(f)`` compiles for these arguments: kernels as boxes with
    their ops, shapes and dtypes, values as edges labelled with their buffers, in-place
    reuse of the memory plan marked. ``f`` may already be jitted. ``layout``: "auto"
    (Graphviz's ``dot`` when on the PATH, else the built-in layout), "dot" or "builtin"."""
    fun = f if hasattr(f, "lower") else jit(f)
    return fun.lower(*args, **kwargs).compile().as_svg(layout)
