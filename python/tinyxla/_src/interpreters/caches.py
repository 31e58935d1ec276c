"""The caches of the transform layer, behind one interface.

Every cache is a ``Cache``: a plain dict (``entries``: lookups are ``dict.get``, the hot
paths' one call) bounded to ``size`` entries, whose ``put`` drops the oldest entry when full (or,
for the memos, which refill cheaply, all of them: dropping entries one by one from the
front of a large dict makes each next drop scan past the holes). The
ones whose entries follow the configuration (x64 changes abstract evaluation and the
dtypes of Python scalars) are made with ``follows_config=True`` and are emptied on any
config update. This module holds:

- jit's caches, keyed as JAX keys them: by the function (weakly held, so its entries go
  when it dies) and the options that change what tracing makes (static argnums and
  argnames), shared by every ``jit`` wrapper of that function (``jit_caches``);
  ``clear_all`` empties every cache (``jax.clear_caches``). ``per_jaxpr`` memoizes a Jaxpr -> Jaxpr transform (``jvp_jaxpr``, ``batch_jaxpr``) on
  the jaxpr object.
- vmap's content key. An eagerly called vmap traces its function at every call and runs
  the traced jaxpr's executable, cached by the jaxpr's content (``jaxpr_content_key``,
  ``executable_for_content``). The staging traces (``keyed_staging``) key the jaxpr while
  recording it instead, by moving along a trie (``edges``, ``advance``): each event (an
  argument's aval, a constant's aval, an equation, the outputs) is one dict lookup from
  the current node, and the node reached names the whole sequence of events so far.
  A node is minted once, for one (parent node, event) edge, and ids are never reused
  (not even after the trie is cleared), so a node id stands for exactly one event
  sequence, which determines the jaxpr. Literals are referred to by interned ids
  (``py_literal``, ``literal_id``), negative so they never equal a variable's position.
- batching's memos: one example's aval of a batched aval (``example_aval``), the output
  aval of an elementwise equation (``elementwise_aval``), and the equations a batching
  rule makes for operands of given avals and dims (``rule_template``), replayed onto
  other variables of those avals.
"""
from __future__ import annotations

import functools
import itertools
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.config import config
from tinyxla._src.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var
from tinyxla._src.interpreters import lowering
from tinyxla._src.interpreters.partial_eval import DynamicJaxprTrace, DynamicJaxprTracer

_following_config: list[Cache] = []
# Every cache, for clear_all; weakly held, so a dead function's caches go.
_all_caches: weakref.WeakSet[Cache] = weakref.WeakSet()


class Cache:
    """At most ``size`` entries in the plain dict ``entries`` (read it directly: a dict
    subclass's ``get`` costs more than dict's): ``put`` drops the oldest entry when
    full, or every entry if ``drop_all``; emptied on config updates if ``follows_config``."""

    __slots__ = ("entries", "size", "drop_all", "__weakref__")

    def __init__(self, size: int, follows_config: bool = False, drop_all: bool = False):
        self.entries: dict[Any, Any] = {}
        self.size = size
        self.drop_all = drop_all
        _all_caches.add(self)
        if follows_config:
            _following_config.append(self)

    def put(self, key: Any, value: Any) -> Any:
        """Stores ``value`` under ``key`` and returns it."""
        entries = self.entries
        if len(entries) >= self.size:
            if self.drop_all:
                entries.clear()
            else:
                entries.pop(next(iter(entries)))
        entries[key] = value
        return value

    def clear(self) -> None:
        self.entries.clear()

    def __len__(self) -> int:
        return len(self.entries)


def _clear_following_config(*_: Any) -> None:
    for cache in _following_config:
        cache.clear()


config.add_update_hook(_clear_following_config)


def clear_all() -> None:
    """Empties every cache (``jax.clear_caches``): jit's traces and executables, vmap's
    executables and the memos."""
    for cache in list(_all_caches):
        cache.clear()


# ---------------------------------------------------------------------------------------
# jit's caches, per function.

_JIT_CACHE_SIZE = 4096  # entries per function, as JAX's jit cache


class JitCaches:
    """One function's caches under one set of ``jit`` options: ``signatures`` (argument
    signature -> traced entry) is shared by all options that trace alike (the static
    argnums and argnames); ``fast`` and ``fast_trees`` (the call paths that skip the
    signature) by the wrappers of the very same options."""

    __slots__ = ("signatures", "fast", "fast_trees")

    def __init__(self, signatures: Cache, fast: Cache | None):
        self.signatures = signatures
        self.fast = fast
        self.fast_trees = Cache(_JIT_CACHE_SIZE)


# function -> {("trace", trace options): signatures Cache,
#              ("call", trace options, call options): JitCaches}
_by_function: weakref.WeakKeyDictionary[Callable, dict] = weakref.WeakKeyDictionary()


def jit_caches(fun: Callable, trace_options: tuple, call_options: tuple,
               fast_path: bool) -> JitCaches:
    """The caches of ``jit(fun, ...)``, shared by every wrapper of ``fun`` with these
    options. A function that cannot be held weakly (or hashed) gets caches of its own."""
    try:
        per_fun = _by_function.get(fun)
        if per_fun is None:
            per_fun = _by_function[fun] = {}
        hit = per_fun.get(("call", trace_options, call_options))
    except TypeError:
        return JitCaches(Cache(_JIT_CACHE_SIZE), Cache(_JIT_CACHE_SIZE) if fast_path else None)
    if hit is None:
        signatures = per_fun.get(("trace", trace_options))
        if signatures is None:
            signatures = per_fun[("trace", trace_options)] = Cache(_JIT_CACHE_SIZE)
        hit = per_fun[("call", trace_options, call_options)] = JitCaches(
            signatures, Cache(_JIT_CACHE_SIZE) if fast_path else None)
    return hit


def jit_cached_functions() -> int:
    """How many functions have jit caches (they go when the functions die)."""
    return len(_by_function)


def per_jaxpr(size: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Memoizes ``transform(closed, *key)`` on the jaxpr object (held, so its id stays
    unique), the key and the x64 mode, in a ``Cache`` of ``size`` entries."""
    def decorator(transform: Callable[..., Any]) -> Callable[..., Any]:
        cache = Cache(size)

        @functools.wraps(transform)
        def cached(closed: ClosedJaxpr, *key: Any) -> Any:
            k = (id(closed), config.jax_enable_x64, *key)
            hit = cache.entries.get(k)
            if hit is not None and hit[0] is closed:
                return hit[1]
            out = transform(closed, *key)
            cache.put(k, (closed, out))
            return out
        return cached
    return decorator


# ---------------------------------------------------------------------------------------
# vmap's content key: the trie the staging traces move along, and literal ids.

_TRIE_SIZE = 1 << 16
# (node, *event) -> (child node, payload), the payload being what the event's recording
# computed once (an equation's output avals, a rule's template, the executable). The
# fast paths read it directly (``edges.entries.get``). The edges go with the ids they
# name (and Python scalars' avals follow x64), so they follow the config.
edges = Cache(_TRIE_SIZE, follows_config=True, drop_all=True)
# Node ids: 0 and 1 are the roots (x64 off, on); ids are never reused.
_new_node = itertools.count(2).__next__
# Literal ids, negative so they never equal a variable's position.
_new_literal_id = itertools.count(-1, -1).__next__
# (type, value) of a Python scalar -> (its Literal, its id); see py_literal. The
# elementwise fast path reads it directly for a nonzero int, float or bool.
py_literals = Cache(_TRIE_SIZE, follows_config=True, drop_all=True)
# (aval, repr of value) of another literal -> its id.
_literal_ids = Cache(_TRIE_SIZE, follows_config=True, drop_all=True)

# Event tags: the second item of an edge key, so events of different kinds never meet.
ARG, CONST, ELEMENTWISE, RULE, OUTPUTS = "a", "c", "e", "r", "o"


def root_node() -> int:
    """The node an empty event sequence names (one per x64 mode)."""
    return int(bool(config.jax_enable_x64))


def advance(key: tuple, payload: Any) -> int:
    """Mints the child node for the edge ``key`` (a miss), keeping ``payload`` on it."""
    child = _new_node()
    edges.put(key, (child, payload))
    return child


def py_literal(x: bool | int | float | complex) -> tuple[Literal, int]:
    """The interned Literal of a Python scalar (of its default aval) and its id.
    Keyed by type and value; zeros (0.0 == -0.0) and complexes (whose parts may be signed
    zeros) by repr, which tells them apart."""
    t = type(x)
    key = (t, x) if x and t is not complex else (t, repr(x))
    hit = py_literals.entries.get(key)
    if hit is None:
        hit = py_literals.put(key, (Literal(x, core.get_aval(x)), _new_literal_id()))
    return hit


def literal_id(lit: Literal) -> int:
    """The id of any literal: by aval and repr (exact value and type, -0.0 apart)."""
    key = (lit.aval, repr(lit.val))
    i = _literal_ids.entries.get(key)
    if i is None:
        i = _literal_ids.put(key, _new_literal_id())
    return i


# ---------------------------------------------------------------------------------------
# vmap's executables, by the content of the jaxpr.

_CONTENT_CACHE_SIZE = 4096
_executables = Cache(_CONTENT_CACHE_SIZE)
_subjaxpr_keys = Cache(_CONTENT_CACHE_SIZE)


def executable_for_content(jaxpr: Jaxpr) -> Callable[[list], list]:
    """The executable of ``jaxpr`` (constvars first, then invars, all as arguments),
    shared by every jaxpr with the same content."""
    try:
        key = (jaxpr_content_key(jaxpr), config.jax_enable_x64)
        exe = _executables.entries.get(key)
    except TypeError:  # an unhashable parameter: compile without caching
        key = exe = None
    if exe is None:
        flat = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns)
        exe = lowering.executable_for(ClosedJaxpr(flat, []))
        if key is not None:
            _executables.put(key, exe)
    return exe


def jaxpr_content_key(jaxpr: Jaxpr) -> tuple:
    """A hashable key equal for jaxprs that compute the same thing: the avals of the
    constvars and invars, each equation's primitive, parameters (sub-jaxprs by content)
    and operands (variables by position, literals by type and exact value), and the
    outputs. Output avals follow from these, so they are left out."""
    index: dict[Var, int] = {}
    head = []
    for v in itertools.chain(jaxpr.constvars, jaxpr.invars):
        index[v] = len(index)
        head.append(v.aval)
    parts: list[Any] = [len(jaxpr.constvars), tuple(head)]
    append = parts.append
    # The hot loop of a vmap call, kept plain (no comprehension frames): one flat list,
    # each equation as primitive, params, operand count, operands.
    for eqn in jaxpr.eqns:
        params = eqn.params
        invars = eqn.invars
        append(eqn.primitive)
        append(_params_key(params) if params else ())
        append(len(invars))
        for v in invars:
            append(index[v] if type(v) is Var else _literal_key(v))
        for v in eqn.outvars:
            index[v] = len(index)
    append(len(jaxpr.outvars))
    for v in jaxpr.outvars:
        append(index[v] if type(v) is Var else _literal_key(v))
    return tuple(parts)


def _literal_key(lit: Literal) -> tuple:
    # repr tells -0.0 from 0.0 (which compare equal) and keeps the value's type.
    return (lit.aval, repr(lit.val))


def _params_key(params: dict) -> tuple:
    items = tuple(params.items())
    for _, v in items:
        if isinstance(v, (ClosedJaxpr, Jaxpr)):  # sub-jaxprs are keyed by content
            return tuple((k, _param_key(v)) for k, v in items)
    return items


def _param_key(v: Any) -> Any:
    if isinstance(v, ClosedJaxpr):
        hit = _subjaxpr_keys.entries.get(id(v))
        if hit is not None and hit[0] is v:
            return hit[1]
        key = (jaxpr_content_key(v.jaxpr), tuple(_const_key(c) for c in v.consts))
        _subjaxpr_keys.put(id(v), (v, key))
        return key
    if isinstance(v, Jaxpr):
        return jaxpr_content_key(v)
    return v


def _const_key(c: Any) -> Any:
    """A sub-jaxpr's constants are part of its meaning; small ones are keyed by value,
    others by identity (the sub-jaxpr is cached, so they are the same objects)."""
    aval = core.get_aval(c)
    if aval.size <= 16 and not isinstance(c, core.Tracer):
        return (aval, np.asarray(c).tobytes())
    return ("id", id(c))


# ---------------------------------------------------------------------------------------
# batching's memos: avals and rule templates.

_MEMO_SIZE = 8192
# (batched aval, batch dim) -> one example's aval
_example_avals = Cache(_MEMO_SIZE, follows_config=True, drop_all=True)
# (primitive, *in avals, *params) -> out aval
_aval_memo = Cache(_MEMO_SIZE, follows_config=True, drop_all=True)
# (primitive, *params, *(aval, dim) per operand) -> RuleTemplate
_rule_templates = Cache(_MEMO_SIZE, follows_config=True, drop_all=True)


def example_aval(full: ShapedArray, d: int) -> ShapedArray:
    """One example's aval of a value batched along ``d``. Staged values share their avals
    (memoized abstract evaluation): so can their one-example avals."""
    key = (full, d)
    aval = _example_avals.entries.get(key)
    if aval is None:
        aval = _example_avals.put(
            key, ShapedArray(full.shape[:d] + full.shape[d + 1:], full.dtype, full.weak_type))
    return aval


def elementwise_aval(primitive: core.Primitive, invars: list, params: dict) -> ShapedArray:
    """The output aval of an elementwise equation, memoized by input avals and params."""
    avals = [v.aval for v in invars]
    try:
        key = (primitive, *avals, *params.items())
        out = _aval_memo.entries.get(key)
    except TypeError:  # an unhashable parameter
        key = out = None
    if out is None:
        out = primitive.abstract_eval(*avals, **params)
        if key is not None:
            _aval_memo.put(key, out)
    return out


def rule_template(primitive: core.Primitive, rule: Callable[..., Any], invars: list,
                  dims: Sequence[int | None], params: dict) -> RuleTemplate | None:
    """The template of ``rule`` for operands of these avals and dims (recorded once)."""
    avals = [v.aval for v in invars]
    key: list[Any] = [primitive, *params.items()]
    for a, d in zip(avals, dims):
        key.append(a)
        key.append(d)
    try:
        key_t = tuple(key)
        template = _rule_templates.entries.get(key_t)
    except TypeError:  # an unhashable parameter
        return None
    if template is None:
        template = RuleTemplate.record(primitive, rule, avals, dims, params)
        if template is None:
            return None
        _rule_templates.put(key_t, template)
    return template


class RuleTemplate:
    """The equations one batching rule made for operands of given avals and dims, with
    the operands as arguments: replayed onto other variables of the same avals."""

    __slots__ = ("args", "eqns", "outvars", "out_dim")

    def __init__(self, args: list[Var], eqns: list[JaxprEqn], outvars: list, out_dim: Any):
        self.args = args
        self.eqns = eqns
        self.outvars = outvars
        self.out_dim = out_dim

    @staticmethod
    def record(primitive: core.Primitive, rule: Callable[..., Any], avals: list[ShapedArray],
               dims: Sequence[int | None], params: dict) -> RuleTemplate | None:
        """Runs ``rule`` on fresh staged operands; None if it captured a constant."""
        trace = DynamicJaxprTrace()
        operands = [trace.new_arg(a) for a in avals]
        state = core._state
        prev = state.trace
        state.trace = trace
        try:
            out, out_dim = rule(operands, dims, **params)
        finally:
            state.trace = prev
            trace.valid = False
        outs = out if primitive.multiple_results else [out]
        outvars = [trace.to_var(o) for o in outs]
        if trace.constvars:
            return None
        return RuleTemplate(trace.args, trace.eqns, outvars, out_dim)

    def replay(self, stage: Any, invars: list, multiple_results: bool) -> tuple[Any, Any]:
        """The rule's equations appended to ``stage`` (a ``KeyedJaxprTrace``) on
        ``invars``; the output tracers and batch dims."""
        env: dict[Var, Any] = dict(zip(self.args, invars))
        eqns = stage.eqns
        index = stage.index
        for eqn in self.eqns:
            outs = [Var(v.aval) for v in eqn.outvars]
            env.update(zip(eqn.outvars, outs))
            for v in outs:
                index[v] = len(index)
            eqns.append(JaxprEqn(eqn.primitive,
                                 [env[v] if type(v) is Var else v for v in eqn.invars],
                                 outs, eqn.params))
        results = [DynamicJaxprTracer(stage, v.aval, env[v] if type(v) is Var else v)
                   for v in self.outvars]
        return (results if multiple_results else results[0]), self.out_dim
