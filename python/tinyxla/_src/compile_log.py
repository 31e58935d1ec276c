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

from tinyxla._src import tree_keys, tree_util
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


class _LeafType(type):
    """The type of the array leaves in a tree being compared, printed as JAX prints it."""

    def __str__(cls) -> str:
        return "pytree leaf"


_LEAF = _LeafType("_Leaf", (), {})()


class Static:
    """A static argument in a tree being compared; as JAX's ``tree_util.Static`` node, its
    value is the node's metadata."""

    __slots__ = ("val",)

    def __init__(self, val: Any):
        self.val = val

    def __repr__(self) -> str:
        return f"Static(val={self.val!r})"


def _full_tree(key: tuple, static_argnums: Sequence[int]) -> tuple:
    """The call's (args, kwargs) with array leaves as ``_LEAF`` and static arguments in
    place, as JAX sees the arguments' tree."""
    tree, _, static, static_kw, _ = key
    dyn, dyn_kw = tree_util.tree_unflatten(tree, [_LEAF] * tree.num_leaves)
    args = list(dyn)
    for i, (_, v) in zip(static_argnums, static):
        args.insert(i, Static(v))
    kwargs = dict(dyn_kw)
    kwargs.update({k: Static(v) for k, _, v in static_kw})
    return (tuple(args), kwargs)


def _tree_differences(path: tuple, t1: Any, t2: Any) -> list[tuple[tuple, str, str, str]]:
    """JAX's ``tree_util.equality_errors``: (path, now, before, why) for the first
    difference along each branch."""
    # Array leaves (and other leaves) never differ in structure; static arguments
    # are nodes whose metadata is their value.
    leaves = tree_util._node_type(t1) is None and tree_util._node_type(t2) is None
    if leaves and Static not in (type(t1), type(t2)):
        return []
    if type(t1) is not type(t2):
        return [(path, str(type(t1)), str(type(t2)), "their Python types differ")]
    if type(t1) is Static:
        if t1.val == t2.val and type(t1.val) is type(t2.val):
            return []
        return [(path, f"{type(t1)} with pytree metadata {t1!r}",
                 f"{type(t2)} with pytree metadata {t2!r}",
                 "the pytree node metadata does not match")]
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        return [(path, f"{type(t1).__name__} of length {len(t1)}",
                 f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")]
    kids1, meta1 = tree_util.flatten_one_level_with_keys(t1)
    kids2, meta2 = tree_util.flatten_one_level_with_keys(t2)
    if len(kids1) != len(kids2):
        keys1 = {getattr(k, "key", k) for k, _ in kids1}
        keys2 = {getattr(k, "key", k) for k, _ in kids2}
        diff = " ".join(repr(k) for k in keys1 ^ keys2)
        plural = lambda n: "ren" if n > 1 else ""  # noqa: E731
        return [(path, f"{type(t1)} with {len(kids1)} child{plural(len(kids1))}",
                 f"{type(t2)} with {len(kids2)} child{plural(len(kids2))}",
                 "the numbers of children do not match"
                 + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))]
    if meta1 != meta2:
        return [(path, f"{type(t1)} with pytree metadata {meta1}",
                 f"{type(t2)} with pytree metadata {meta2}",
                 "the pytree node metadata does not match")]
    out = []
    for (k, c1), (_, c2) in zip(kids1, kids2):
        out += _tree_differences((*path, k), c1, c2)
    return out


def _salt_values(salt: int) -> dict[str, Any]:
    """The config values that jit's cache-key salt encodes (see ``api._refresh_fast_salt``)."""
    return {"jax_enable_x64": bool(salt & 1), "jax_disable_jit": bool(salt >> 1 & 1),
            "jax_numpy_dtype_promotion": "strict" if salt >> 2 & 1 else "standard",
            "jax_numpy_rank_promotion": ("allow", "warn", "raise")[salt >> 3 & 3],
            "jax_threefry_partitionable": bool(salt >> 5 & 1),
            "jax_debug_nans or jax_debug_infs": bool(salt >> 6 & 1)}


def _difference(key: tuple, old: tuple, arg_names: Sequence[str],
                static_argnums: Sequence[int]) -> tuple[int, int, str]:
    """JAX's ``diff_tracing_cache_keys``: (severity, number of differences, explanation)
    for the first kind of difference (config, tree, types), lower severity first."""
    if key[4] != old[4]:
        now, before = _salt_values(key[4]), _salt_values(old[4])
        lines = [f"  * {n} differs: now {now[n]} and before {before[n]}"
                 for n in now if now[n] != before[n]]
        return (0, len(lines), "Tracing context doesn't match, e.g. due to config or "
                "context manager.\n" + "\n".join(lines))
    tree_diffs = [f"  * at input path {tree_keys.keystr(tuple(p))}, now {a} and before {b}, "
                  f"so {why}" for p, a, b, why in _tree_differences(
                      (), _full_tree(key, static_argnums), _full_tree(old, static_argnums))]
    if tree_diffs:
        return 1, len(tree_diffs), "different input pytree:\n" + "\n".join(tree_diffs)
    lines = []
    weak_hint = False
    for name, a, b in zip(arg_names, key[1], old[1]):
        if a != b:
            now, before = a.str_short(True), b.str_short(True)
            if a.weak_type != b.weak_type:
                weak_hint = True
                now += f"{{weak_type={a.weak_type}}}"
                before += f"{{weak_type={b.weak_type}}}"
            lines.append(f"  * at {name}, now {now} and before {before}")
    if lines:
        return 3, len(lines), "different input types:\n" + "\n".join(lines) + (
            "https://docs.jax.dev/en/latest/type_promotion.html#weak-types" if weak_hint else "")
    return 4, 0, "cache miss explanation unavailable"


def explain_cache_miss(fun: Callable, cache: dict, key: tuple, arg_names: Sequence[str],
                       static_argnums: Sequence[int] = ()) -> None:
    """Logs why ``key`` (jit's cache key: tree, avals, static args, static kwargs, the
    config salt) missed ``cache``, in JAX's words, against the closest key seen before
    (``jax._src.interpreters.partial_eval.explain``)."""
    name = getattr(fun, "__name__", "<unnamed function>")
    head = f"TRACING CACHE MISS at {_call_site()}:\n"
    if not cache:
        logger.warning(head + f"  never seen function:\n    {name} id={id(fun)} defined at "
                       f"{_where(fun)}")
        return
    closest = min(_difference(key, old, arg_names, static_argnums) for old in cache)
    logger.warning(head + f"  for {name} defined at {_where(fun)}\n  all previously seen cache "
                   "keys differ. For the closest previous key:\n  " + closest[2])
