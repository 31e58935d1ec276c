"""Compile logging: ``jax_log_compiles`` and ``jax_explain_cache_misses``.

Mirrors the messages of ``jax._src.dispatch`` and ``jax._src.pjit`` (logged at WARNING, as
JAX does when the options are on) on the ``tinyxla`` logger. Where JAX names XLA
("Finished XLA compilation of jit(f)"), tinyxla names its own compiler.
"""
from __future__ import annotations

import contextlib
import inspect
import logging
import os
import time
from typing import Any, Callable, Iterator, Sequence

from tinyxla._src.config import config

logger = logging.getLogger("tinyxla")


@contextlib.contextmanager
def timed(message: str, name: str) -> Iterator[None]:
    """Logs ``message % name`` with the elapsed time when ``jax_log_compiles`` is on."""
    if not config.jax_log_compiles:
        yield
        return
    start = time.perf_counter()
    yield
    logger.warning(message + " in %.9f sec", name, time.perf_counter() - start)


def log_compile(name: str, avals: Sequence[Any]) -> None:
    """JAX's "Compiling jit(f) with global shapes and types (...)." line."""
    if config.jax_log_compiles:
        types = ", ".join(map(repr, avals)) + ("," if len(avals) == 1 else "")
        logger.warning("Compiling jit(%s) with global shapes and types (%s).", name, types)


def _where(fun: Callable) -> str:
    try:
        code = inspect.unwrap(fun).__code__
        return f"{code.co_filename}:{code.co_firstlineno}"
    except AttributeError:
        return "<unknown>"


def _call_site() -> str:
    """The first frame outside tinyxla, as ``file:line (function)``."""
    frame = inspect.currentframe()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def explain_cache_miss(fun: Callable, cache: dict, key: tuple, arg_names: Sequence[str]) -> None:
    """Logs why ``key`` (jit's cache key: tree, avals, static args, static kwargs, the
    config salt whose bit 0 is x64)
    missed ``cache``, comparing it with the closest key seen before."""
    name = getattr(fun, "__name__", "<unnamed function>")
    head = f"TRACING CACHE MISS at {_call_site()}:\n"
    if not cache:
        logger.warning(head + f"  never seen function:\n    {name} id={id(fun)} defined at "
                       f"{_where(fun)}")
        return

    def distance(old: tuple) -> int:
        return sum(a != b for a, b in zip(old, key))

    closest = min(cache, key=distance)
    tree, avals, static, static_kw, salt = key
    old_tree, old_avals, old_static, old_static_kw, old_salt = closest
    reasons = []
    if tree != old_tree:
        reasons.append(f"  different input pytree:\n  * now {tree} and before {old_tree}")
    elif avals != old_avals:
        lines = [f"  * at {n}, now {a.str_short()} and before {b.str_short()}"
                 for n, a, b in zip(arg_names, avals, old_avals) if a != b]
        reasons.append("  different input types:\n" + "\n".join(lines))
    if static != old_static or static_kw != old_static_kw:
        now = [v for _, v in static] + [v for _, _, v in static_kw]
        before = [v for _, v in old_static] + [v for _, _, v in old_static_kw]
        reasons.append(f"  different static arguments:\n  * now {now} and before {before}")
    if (salt ^ old_salt) & 1:
        reasons.append(f"  different jax_enable_x64: now {bool(salt & 1)} and before "
                       f"{bool(old_salt & 1)}")
    elif salt != old_salt:
        reasons.append("  different config values: jax_numpy_dtype_promotion, "
                       "jax_numpy_rank_promotion or jax_threefry_partitionable changed")
    logger.warning(head + f"  for {name} defined at {_where(fun)}\n  all previously seen cache "
                   "keys differ. For the closest previous key:\n" + "\n".join(reasons))
