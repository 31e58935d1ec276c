"""A staging trace that keys its jaxpr by content while recording it.

vmap, called eagerly, traces its function at every call and runs the traced jaxpr's
cached executable (``vmap.executable_for_content``). Walking the jaxpr afterwards to key
that cache costs a few microseconds a call; ``KeyedJaxprTrace`` instead moves along a
global trie as it records: each event (an argument's aval, a constant's aval, an
equation's primitive, operands and params, the outputs) is one dict lookup from the
current node, and the node reached names the whole sequence of events so far.

Why a node id is a sound key: a node is minted once, for one (parent node, event) edge,
and ids are never reused (not even after the trie is cleared), so a node id stands for
exactly one event sequence, which determines the jaxpr: constvars and invars in the order
of their events, equations in order, operands by the position of the event that made
them. An event's operands are variables by that position (ints >= 0) and literals by an
interned id (ints < 0) that stands for one literal type and exact value.

The batching fast paths (``BatchTrace._stage_elementwise`` and ``_replay_rule``) record
their events through ``edges`` and ``advance``; an equation recorded any other way (the
generic ``process_primitive``) stops the keying (``keyed`` False), and vmap falls back
to walking the jaxpr.
"""
from __future__ import annotations

import itertools
from typing import Any

from tinyxla._src import core
from tinyxla._src.config import config
from tinyxla._src.core import Literal, ShapedArray, Var
from tinyxla._src.interpreters.partial_eval import DynamicJaxprTrace, DynamicJaxprTracer

_TRIE_SIZE = 1 << 16
# The trie: (node, *event) -> (child node, payload), the payload being what the event's
# recording computed once (an equation's output avals, a rule's template, the
# executable). The fast paths read it directly (``edges.get``): one call less per op.
edges: dict[tuple, tuple[int, Any]] = {}
# Node ids: 0 and 1 are the roots (x64 off, on); ids are never reused.
_new_node = itertools.count(2).__next__
# Literal ids, negative so they never equal a variable's position.
_new_literal_id = itertools.count(-1, -1).__next__
# (type, value) of a Python scalar -> (its Literal, its id); see py_literal. The
# elementwise fast path reads it directly for a nonzero int, float or bool.
py_literals: dict[tuple, tuple[Literal, int]] = {}
# (aval, repr of value) of another literal -> its id.
_literal_ids: dict[tuple, int] = {}

# Event tags: the second item of an edge key, so events of different kinds never meet.
ARG, CONST, ELEMENTWISE, RULE, OUTPUTS = "a", "c", "e", "r", "o"


class KeyedJaxprTrace(DynamicJaxprTrace):
    """A ``DynamicJaxprTrace`` whose ``node`` names the events recorded so far (while
    ``keyed``); ``index`` maps each variable to the position of the event that made it."""

    def __init__(self):
        super().__init__()
        self.node = int(bool(config.jax_enable_x64))
        self.index: dict[Var, int] = {}
        self.keyed = True

    def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
        tracer = super().new_arg(aval)
        if self.keyed:
            self._event((self.node, ARG, aval), tracer.var)
        return tracer

    def const_ref(self, x: Any) -> tuple[Var | Literal, int | None]:
        """``to_var`` of a concrete value closed over, and its reference in the key (None
        when it has none), recording a new constant's event."""
        var = self._const_vars.get(id(x))  # seen before (``consts`` keeps ``x`` alive)
        if var is None:
            var = self.to_var(x)
            if type(var) is Literal:  # a numpy scalar
                return var, literal_id(var)
            if self.keyed:
                self._event((self.node, CONST, var.aval), var)
        return var, self.index.get(var)

    def _event(self, key: tuple, var: Var) -> None:
        hit = edges.get(key)
        self.node = hit[0] if hit is not None else advance(key, None)
        index = self.index
        index[var] = len(index)

    def process_primitive(self, primitive: core.Primitive, args: Any, params: dict) -> Any:
        # Recorded without an event: the jaxpr is keyed by walking it instead.
        self.keyed = False
        return super().process_primitive(primitive, args, params)

    def outputs_key(self, outvars: list) -> tuple | None:
        """The edge key of the outputs event, whose payload is the executable; None when
        the jaxpr is not keyed (or an output is a literal)."""
        if not self.keyed:
            return None
        index = self.index
        key = [self.node, OUTPUTS]
        for v in outvars:
            i = index.get(v) if type(v) is Var else None
            if i is None:
                return None
            key.append(i)
        return tuple(key)


def advance(key: tuple, payload: Any) -> int:
    """Mints the child node for the edge ``key`` (a miss), keeping ``payload`` on it."""
    if len(edges) >= _TRIE_SIZE:
        edges.clear()
    child = _new_node()
    edges[key] = (child, payload)
    return child


def py_literal(x: bool | int | float | complex) -> tuple[Literal, int]:
    """The interned Literal of a Python scalar (of its default aval) and its id.
    Keyed by type and value; zeros (0.0 == -0.0) and complexes (whose parts may be signed
    zeros) by repr, which tells them apart."""
    t = type(x)
    key = (t, x) if x and t is not complex else (t, repr(x))
    hit = py_literals.get(key)
    if hit is None:
        if len(py_literals) >= _TRIE_SIZE:
            py_literals.clear()
        hit = py_literals[key] = (Literal(x, core.get_aval(x)), _new_literal_id())
    return hit


def literal_id(lit: Literal) -> int:
    """The id of any literal: by aval and repr (exact value and type, -0.0 apart)."""
    key = (lit.aval, repr(lit.val))
    i = _literal_ids.get(key)
    if i is None:
        if len(_literal_ids) >= _TRIE_SIZE:
            _literal_ids.clear()
        i = _literal_ids[key] = _new_literal_id()
    return i


def _clear(*_: Any) -> None:
    # Python scalars' avals follow the x64 flag; the edges go with the ids they name.
    py_literals.clear()
    _literal_ids.clear()
    edges.clear()


config.add_update_hook(_clear)
