"""``jax_check_tracer_leaks`` / ``jax.checking_leaks()``: once a trace is done, a tracer
of it still alive (stored in a global, a list, an object...) raises JAX's "Leaked trace"
error naming the tracer, where it came from and what holds it."""
from __future__ import annotations

import gc
import types
import weakref
from typing import Any

from tinyxla._src import core, errors


def _container_path(holder: Any, obj: Any) -> str:
    """How ``holder`` reaches ``obj``: ``[0]``, ``['key']`` or ``.attr`` ("" if unknown)."""
    if isinstance(holder, (list, tuple)):
        for i, x in enumerate(holder):
            if x is obj:
                return f"[{i}]"
    if isinstance(holder, dict):
        for k, v in holder.items():
            if v is obj:
                return f"[{k!r}]"
    return ""


def _referrers(obj: Any, ignore: set[int], depth: int = 2) -> list[str]:
    """JAX's "<X id> is referred to by <Y id>[i]" lines, following containers up to
    ``depth`` levels and naming module globals; ``ignore`` holds the ids of the checker's
    own lists."""
    lines: list[str] = []
    holders = gc.get_referrers(obj)
    ignore = ignore | {id(holders), id(lines)}
    for holder in holders:
        if id(holder) in ignore or isinstance(holder, (types.FrameType, weakref.ReferenceType)):
            continue
        if isinstance(holder, dict) and "__builtins__" in holder:  # a module's globals
            for k, v in holder.items():
                if v is obj:
                    lines.append(f"<{type(obj).__name__} {id(obj)}> is referred to by "
                                 f"{holder.get('__name__')}.{k}")
            continue
        if isinstance(holder, core.Tracer) or not isinstance(holder, (list, tuple, dict, set)):
            continue
        lines.append(f"<{type(obj).__name__} {id(obj)}> is referred to by "
                     f"<{type(holder).__name__} {id(holder)}>{_container_path(holder, obj)}")
        if depth > 1:
            lines += _referrers(holder, ignore, depth - 1)
    return lines


def _trace_name(trace: Any) -> str:
    """JAX's name of the trace's kind (tinyxla's subclasses report their JAX base)."""
    for cls in type(trace).__mro__:
        if cls.__name__ in ("DynamicJaxprTrace", "BatchTrace", "JVPTrace"):
            return cls.__name__
    return type(trace).__name__


def check(trace_ref: "weakref.ref[Any]") -> None:
    """Raises JAX's leaked-trace Exception if the finished trace is still referenced by
    one of its tracers."""
    if trace_ref() is None:
        return
    gc.collect()
    trace = trace_ref()
    if trace is None:
        return
    leaked = [t for t in gc.get_referrers(trace)
              if isinstance(t, core.Tracer) and getattr(t, "_trace", None) is trace]
    del trace
    if not leaked:
        return
    parts: list[str] = []
    for t in leaked:
        lines = _referrers(t, {id(leaked), id(parts)})
        parts.append(f"{t!r}{errors._origin(t)}\n" + "".join(f"{line}\n" for line in lines))
    raise Exception(f"Leaked trace {_trace_name(leaked[0]._trace)}. Leaked tracer(s):\n\n"
                    + "".join(parts))
