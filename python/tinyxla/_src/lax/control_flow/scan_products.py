"""Products in a ``scan`` body made whole-scan products when the scan is lowered
(tinyxla only; the jaxpr keeps JAX's form). Small per-trip products are the slow part of
RNN-like loops; one large product runs near the machine's peak.

- A product of ``xs`` slices and loop constants only (an RNN's input projection
  ``x_t @ U``) is computed for every trip before the loop, as one product over the
  stacked ``xs``, and read by the body as one more ``xs``. Done when its per-trip result
  is at most 4x its ``xs`` operands.
- A carry that the body only updates as ``acc + dot_general(u, v)`` (or ``acc +
  transpose(dot_general(u, v))``), where nothing else reads ``acc`` nor the product, ends
  as ``acc0 + sum_t dot_general(u_t, v_t)``: one ``dot_general`` after the loop that also
  contracts the trip axis of the stacked ``u`` and ``v``. A ``u`` that is an ``xs`` slice
  is that ``xs``; any other is stacked as an extra ``ys``. That is how the weight
  cotangents of an RNN's backward scan are formed. Done when the stacked operands are
  smaller than the accumulator, so the loop writes less per trip than it did.

Either way the sums are the same but blocked differently, so rounding may differ (as for
any change of a product's blocking).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from tinyxla._src import core
from tinyxla._src.ad_util import add_jaxvals_p
from tinyxla._src.core import ClosedJaxpr, Jaxpr, JaxprEqn, ShapedArray
from tinyxla._src.lax.dot import dot_general_p
from tinyxla._src.lax.elementwise import add_p
from tinyxla._src.lax.shape_ops import transpose_p


@dataclass
class SunkAccumulator:
    """Carry ``carry`` ends as ``post`` (a jaxpr of ``(acc0, U, V)``) applied to its initial
    value and the stacked operands: ``("xs", i)`` (the scan's ``xs`` operand i) or
    ``("ys", k)`` (the rewritten body's ``ys`` output k)."""
    carry: int
    post: ClosedJaxpr
    operands: tuple[tuple[str, int], tuple[str, int]]


def _size(aval: ShapedArray) -> int:
    return math.prod(int(d) for d in aval.shape)


def sink_dot_accumulators(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int
                          ) -> tuple[ClosedJaxpr, int, list[SunkAccumulator]]:
    """The body without the carries it only accumulates products into, its new carry
    count, and how each removed carry is formed after the loop (none: ``jaxpr`` as is)."""
    j = jaxpr.jaxpr
    if num_carry == 0 or not j.eqns:
        return jaxpr, num_carry, []
    uses: dict[int, int] = {}
    for e in j.eqns:
        for v in e.invars:
            uses[id(v)] = uses.get(id(v), 0) + 1
    for v in j.outvars:
        uses[id(v)] = uses.get(id(v), 0) + 1
    producer = {id(v): e for e in j.eqns for v in e.outvars}
    consts = {id(v) for v in (*j.constvars, *j.invars[:num_consts])}  # never stacked
    xs_pos = {id(v): i for i, v in enumerate(j.invars[num_consts + num_carry:])}
    carry_in = j.invars[num_consts:num_consts + num_carry]

    dropped: set[int] = set()  # ids of eqns taken out of the body
    stacked: list[Any] = []  # body values stacked as extra ys
    sunk: list[SunkAccumulator] = []
    for c, (acc, out) in enumerate(zip(carry_in, j.outvars[:num_carry])):
        e_add = producer.get(id(out))
        if (e_add is None or e_add.primitive not in (add_p, add_jaxvals_p) or
                uses.get(id(acc), 0) != 1 or uses.get(id(out), 0) != 1 or
                not any(v is acc for v in e_add.invars)):
            continue
        term = e_add.invars[1] if e_add.invars[0] is acc else e_add.invars[0]
        chain = []
        e = producer.get(id(term))
        if e is not None and e.primitive is transpose_p and uses.get(id(term), 0) == 1:
            chain.append(e)
            e = producer.get(id(e.invars[0]))
        if (e is None or e.primitive is not dot_general_p or
                uses.get(id(e.outvars[0]), 0) != 1 or term.aval.dtype != acc.aval.dtype):
            continue
        sources, cost = [], 0
        for u in e.invars:
            if type(u) is core.Literal or id(u) in consts:
                break
            if id(u) in xs_pos:
                sources.append(("xs", xs_pos[id(u)]))
                continue
            k = next((k for k, s in enumerate(stacked) if s is u), None)
            if k is None:
                cost += _size(u.aval)
            sources.append(("ys", k))
        if len(sources) != 2 or cost >= _size(acc.aval):
            continue
        for k, (u, (kind, pos)) in enumerate(zip(e.invars, sources)):
            if kind == "ys" and pos is None:
                pos = next((i for i, s in enumerate(stacked) if s is u), None)
                if pos is None:
                    stacked.append(u)
                    pos = len(stacked) - 1
                sources[k] = ("ys", pos)
        sunk.append(SunkAccumulator(c, _post(e, chain, e_add, acc, length), tuple(sources)))
        dropped.update(id(x) for x in (e, *chain, e_add))
    if not sunk:
        return jaxpr, num_carry, []
    gone = {s.carry for s in sunk}
    num_ys = len(j.outvars) - num_carry
    body = Jaxpr(j.constvars,
                 [v for i, v in enumerate(j.invars) if i - num_consts not in gone],
                 [*[v for c, v in enumerate(j.outvars[:num_carry]) if c not in gone],
                  *j.outvars[num_carry:], *stacked],
                 [e for e in j.eqns if id(e) not in dropped])
    for s in sunk:  # ys positions after the body's own ys
        s.operands = tuple((kind, pos + num_ys if kind == "ys" else pos)
                           for kind, pos in s.operands)
    return ClosedJaxpr(body, jaxpr.consts), num_carry - len(sunk), sunk


def _post(dot: JaxprEqn, chain: Sequence[JaxprEqn], add: JaxprEqn, acc: core.Var,
          length: int) -> ClosedJaxpr:
    """``acc0 + chain(dot_general(U, V))`` over operands stacked on a new leading axis,
    which the product also contracts."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    shift = lambda dims: tuple(int(d) + 1 for d in dims)
    params = dict(dot.params, dimension_numbers=(((0, *shift(lc)), (0, *shift(rc))),
                                                 (shift(lb), shift(rb))))
    ins = [core.Var(ShapedArray((length, *u.aval.shape), u.aval.dtype)) for u in dot.invars]
    acc0 = core.Var(acc.aval)
    eqns = [JaxprEqn(dot_general_p, ins, dot.outvars, params), *chain,
            JaxprEqn(add.primitive, [acc0 if v is acc else v for v in add.invars], add.outvars,
                     add.params)]
    return ClosedJaxpr(Jaxpr([], [acc0, *ins], add.outvars, eqns), [])


@dataclass
class HoistedProduct:
    """A body product computed before the loop: ``post`` (a jaxpr) of the operands
    ``("xs", i)`` (the whole ``xs`` operand i) or ``("const", i)``, giving the stacked
    results that the body reads as its last ``xs``."""
    post: ClosedJaxpr
    operands: tuple[tuple[str, int], ...]


def hoist_xs_products(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int
                      ) -> tuple[ClosedJaxpr, list[HoistedProduct]]:
    """The body reading its products of ``xs`` slices and constants as extra ``xs``
    (appended in order), and how each is computed before the loop."""
    j = jaxpr.jaxpr
    consts = {id(v): i for i, v in enumerate(j.invars[:num_consts])}
    xs_pos = {id(v): i for i, v in enumerate(j.invars[num_consts + num_carry:])}
    hoisted, new_xs, dropped = [], [], set()
    for e in j.eqns:
        if e.primitive is not dot_general_p:
            continue
        ins = e.invars
        if not all(type(u) is not core.Literal and (id(u) in consts or id(u) in xs_pos)
                   for u in ins):
            continue
        sliced = [id(u) in xs_pos for u in ins]
        if not any(sliced) or _size(e.outvars[0].aval) > 4 * sum(
                _size(u.aval) for u, x in zip(ins, sliced) if x):
            continue
        hoisted.append(HoistedProduct(
            _stacked_product(e, sliced, length),
            tuple(("xs", xs_pos[id(u)]) if x else ("const", consts[id(u)])
                  for u, x in zip(ins, sliced))))
        new_xs.append(e.outvars[0])
        dropped.add(id(e))
    if not hoisted:
        return jaxpr, []
    body = Jaxpr(j.constvars, [*j.invars, *new_xs], j.outvars,
                 [e for e in j.eqns if id(e) not in dropped])
    return ClosedJaxpr(body, jaxpr.consts), hoisted


def _stacked_product(dot: JaxprEqn, sliced: Sequence[bool], length: int) -> ClosedJaxpr:
    """``dot`` over operands stacked on a new leading axis where ``sliced``, its result
    stacked on a leading axis: the trip axis is a batch dim when both operands have it,
    else a free dim moved to the front."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    shift = lambda dims, on: tuple(int(d) + on for d in dims)
    sl, sr = (int(x) for x in sliced)
    if sl and sr:
        dims = ((shift(lc, 1), shift(rc, 1)), ((0, *shift(lb, 1)), (0, *shift(rb, 1))))
        at = 0
    else:
        dims = ((shift(lc, sl), shift(rc, sr)), (shift(lb, sl), shift(rb, sr)))
        lhs_free = len(dot.invars[0].aval.shape) - len(lc) - len(lb)
        at = len(lb) + (0 if sl else lhs_free)
    ins = [core.Var(ShapedArray((length, *u.aval.shape) if x else u.aval.shape, u.aval.dtype))
           for u, x in zip(dot.invars, sliced)]
    params = dict(dot.params, dimension_numbers=dims)
    out = core.Var(dot_general_p.abstract_eval(*[v.aval for v in ins], **params))
    eqns = [JaxprEqn(dot_general_p, ins, [out], params)]
    if at:
        perm = (at, *[d for d in range(len(out.aval.shape)) if d != at])
        moved = core.Var(transpose_p.abstract_eval(out.aval, permutation=perm))
        eqns.append(JaxprEqn(transpose_p, [out], [moved], {"permutation": perm}))
        out = moved
    return ClosedJaxpr(Jaxpr([], ins, [out], eqns), [])
