"""``lax.while_loop``, ``lax.fori_loop``, ``lax.scan`` and ``lax.map``: the ``while`` and
``scan`` primitives (mirrors ``jax._src.lax.control_flow.loops``).

Each primitive holds its body as closed jaxprs whose constants are leading operands
(``cond_nconsts``/``body_nconsts``, ``num_consts``), with all its rules side by side:

- ``while``: abstract eval; impl (the region graph; a Python loop of the compiled cond
  and body when the body cannot be lowered); lowering; jvp (tangent
  carry found by fixpoint, zeros instantiated); linearize (primal loop, and the jvp loop
  staged for tangents: forward mode and ``jacfwd`` work); transpose raises JAX's
  reverse-mode error; batching (a batched predicate runs until every member is done,
  finished members kept by ``select_n``).
- ``scan``: abstract eval; impl (as ``while``); lowering; jvp (fixpoint as above); linearize as JAX's partial
  eval (the known scan also returns the residuals, stacked per iteration, except those
  that are loop constants; a linear scan over them); transpose (a scan the other way,
  constants' cotangents accumulated in the carry); batching (carry batched by fixpoint,
  ``xs`` batched on their axis 1).

Both lower to the C++ ``while_loop`` region, which the executor runs trip after trip
without returning to Python, the carry moved from one trip to the next (a buffer only the
loop holds is updated in place). For ``while`` the region's body is the loop body followed
by the condition on its result (the first predicate is the condition inlined before the
loop); ``scan`` is a region over a counter, as in JAX: each trip reads its ``xs`` slices
with ``dynamic_slice`` and writes its ``ys`` into the stacked outputs, carried through the
loop, with ``dynamic_update_slice`` (in place after the first trip). Eagerly, a loop runs
as that one-region graph, compiled once per content.

``fori_loop`` with static bounds is a ``scan`` (reverse-differentiable), otherwise a
``while``, as in JAX.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes, errors
from tinyxla._src.array import Array, _to_array
from tinyxla._src.core import ClosedJaxpr, Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.caches import executable_for_content
from tinyxla._src.lax.control_flow import common
from tinyxla._src.lax.control_flow.common import split_list
from tinyxla._src.lax.control_flow.scan_products import hoist_xs_products, sink_dot_accumulators
from tinyxla._src.lax.conversion import convert_element_type
from tinyxla._src.lax.elementwise import add, lt, select_n
from tinyxla._src.lax.reductions import reduce_or
from tinyxla._src.lax.shape_ops import broadcast_in_dim, concatenate, full, reshape
from tinyxla._src.lax.shape_ops import slice as lax_slice
from tinyxla._src.lax.slicing import dynamic_index_in_dim
from tinyxla._src.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

while_p = Primitive("while", multiple_results=True)
scan_p = Primitive("scan", multiple_results=True)

_ADD = _core.BINARY_OPS.index("add")
_SUB = _core.BINARY_OPS.index("sub")
_LT = _core.BINARY_OPS.index("lt")


_REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
    "start/stop.")


def _run(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """``closed`` on ``args`` through its compiled executable (shared by equal jaxprs)."""
    return executable_for_content(closed.jaxpr)([*closed.consts, *args])


def _nonzero(t: Any) -> bool:
    return type(t) is not ad.Zero


def _instantiate(t: Any, primal: Any) -> Any:
    return ad.instantiate_zeros(t) if type(t) is not ad.Zero else \
        ad.zeros_like_aval(ad.tangent_aval(core.get_aval(primal)))


# ---------------------------------------------------------------------------------------
# while

@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    # As JAX: the body's output types, weak types included.
    return list(body_jaxpr.out_avals)


@while_p.def_impl
def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    outs = common.run_compiled(while_p, args, dict(
        cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
        body_nconsts=body_nconsts))
    if outs is not None:
        return outs
    # A body that cannot be lowered: the loop runs here, each trip's body compiled.
    cconsts, bconsts, carry = split_list(args, [cond_nconsts, body_nconsts])
    carry = [x if type(x) is Array else _to_array(x) for x in carry]
    while bool(_run(cond_jaxpr, [*cconsts, *carry])[0]):
        carry = _run(body_jaxpr, [*bconsts, *carry])
    return carry


def _carry_fixpoint(body: ClosedJaxpr, const_nz: Sequence[bool], carry_nz: Sequence[bool],
                    xs_nz: Sequence[bool] = ()) -> list[bool]:
    """Which carries have nonzero tangents: those nonzero on entry, and those the body
    makes nonzero, until nothing changes."""
    carry_nz = [nz and common.can_have_tangent(a)
                for nz, a in zip(carry_nz, body.in_avals[len(const_nz):])]
    none = (False,) * len(body.out_avals)
    while True:
        _, out_nz = common.jvp_jaxpr(body, (*const_nz, *carry_nz, *xs_nz), none)
        new = [a or b for a, b in zip(carry_nz, out_nz[:len(carry_nz)])]
        if new == carry_nz:
            return carry_nz
        carry_nz = new


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = split_list(primals, [cond_nconsts, body_nconsts])
    _, bconst_t, carry_t = split_list(tangents, [cond_nconsts, body_nconsts])
    bconst_nz = [_nonzero(t) for t in bconst_t]
    carry_nz = _carry_fixpoint(body_jaxpr, bconst_nz, [_nonzero(t) for t in carry_t])
    jvp, _ = common.jvp_jaxpr(body_jaxpr, (*bconst_nz, *carry_nz), tuple(carry_nz))
    nb, nc, nbt = len(bconsts), len(carry), sum(bconst_nz)
    nct = sum(carry_nz)
    # jvp takes (bconsts, carry, bconst tangents, carry tangents); the loop wants the
    # constants first.
    order = [*range(nb), *range(nb + nc, nb + nc + nbt), *range(nb, nb + nc),
             *range(nb + nc + nbt, nb + nc + nbt + nct)]
    body = common.permute_invars(jvp, order)
    tangent_avals = [ad.tangent_aval(a) for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    cond = common.with_ignored_inputs(cond_jaxpr, tangent_avals)
    ct_in = [_instantiate(t, p) for t, p, nz in zip(carry_t, carry, carry_nz) if nz]
    outs = while_p.bind(*cconsts, *bconsts, *[t for t in bconst_t if _nonzero(t)], *carry, *ct_in,
                        cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
                        body_nconsts=nb + nbt)
    it = iter(outs[nc:])
    return outs[:nc], [next(it) if nz else ad.Zero.from_primal_value(p)
                       for p, nz in zip(outs[:nc], carry_nz)]


def _while_linearize(trace, primals, tangents, **params):
    # The primal loop runs as it is; the tangents come from the jvp loop staged on the
    # tangent trace (not transposable: the transpose rule raises JAX's error).
    primal_outs = while_p.bind(*primals, **params)
    _, touts = ad.call_with(trace.tangent_trace, _while_jvp, primals, tangents, **params)
    return primal_outs, touts


def _while_transpose(cts, *args, **params):
    raise ValueError(_REVERSE_MODE_ERROR)


ad.primitive_jvps[while_p] = _while_jvp
ad.primitive_linearizations[while_p] = _while_linearize
ad.primitive_transposes[while_p] = _while_transpose


def _front(x: Any, d: int | None) -> Any:
    return x if d is None else batching.moveaxis(x, d, 0)


def _batched_carry(body: ClosedJaxpr, axis_data: Any, const_dims: Sequence[int | None],
                   carry_b: Sequence[bool], xs_dims: Sequence[int | None] = ()) -> list[bool]:
    """Which carries are batched: those batched on entry, and those the body makes
    batched, until nothing changes (batched values at axis 0)."""
    carry_b = list(carry_b)
    while True:
        _, out_dims = batching.batch_jaxpr(
            body, axis_data, [*const_dims, *[0 if b else None for b in carry_b], *xs_dims])
        new = [b or d is not None for b, d in zip(carry_b, out_dims[:len(carry_b)])]
        if new == carry_b:
            return carry_b
        carry_b = new


def _while_batch(axis_data, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = axis_data.size
    cconsts, bconsts, carry = split_list(vals, [cond_nconsts, body_nconsts])
    cd, bd, kd = split_list(dims, [cond_nconsts, body_nconsts])
    cdims = [None if d is None else 0 for d in cd]
    bdims = [None if d is None else 0 for d in bd]
    carry_b = _batched_carry(body_jaxpr, axis_data, bdims, [d is not None for d in kd])
    _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, axis_data,
                                          [*cdims, *[0 if b else None for b in carry_b]])
    if pred_dim is not None:
        carry_b = [True] * len(carry)
    kdims = [0 if b else None for b in carry_b]
    cconsts = [_front(x, d) for x, d in zip(cconsts, cd)]
    bconsts = [_front(x, d) for x, d in zip(bconsts, bd)]
    carry = [batching.bdim_at_front(x, d, size) if b else x for x, d, b in zip(carry, kd, carry_b)]
    body_b, _ = batching.batch_jaxpr(body_jaxpr, axis_data, [*bdims, *kdims], tuple(carry_b))
    cond_b, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, [*cdims, *kdims], pred_dim is not None)
    if pred_dim is None:
        outs = while_p.bind(*cconsts, *bconsts, *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                            cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
        return outs, kdims
    # A batched predicate: loop while any member goes on; a finished member keeps its carry.
    nc = len(cconsts)

    def any_cond(*args):
        return [reduce_or(common.closed_call(cond_b, *args)[0], (0,))]

    def masked_body(*args):
        cc, bc, xs = split_list(args, [nc, len(bconsts)])
        pred = common.closed_call(cond_b, *cc, *xs)[0]
        new = common.closed_call(body_b, *bc, *xs)
        return [select_n(broadcast_in_dim(pred, batching.shape_of(x), (0,)), x, y)
                for x, y in zip(xs, new)]

    carry_avals = [core.get_aval(x) for x in carry]
    cond_any = pe.trace_to_jaxpr(any_cond, [*cond_b.in_avals])
    body_masked = pe.trace_to_jaxpr(masked_body, [*cond_b.in_avals[:nc], *body_b.in_avals[:len(bconsts)],
                                                  *carry_avals])
    outs = while_p.bind(*cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=cond_any,
                        body_jaxpr=body_masked, cond_nconsts=nc, body_nconsts=nc + len(bconsts))
    return outs, kdims


batching.axis_primitive_batchers[while_p] = _while_batch


def _while_lowering(ctx, *operands, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                    cond_nconsts: int, body_nconsts: int):
    cconsts, bconsts, carry = split_list(operands, [cond_nconsts, body_nconsts])
    pred0 = lowering.inline_jaxpr(ctx.builder, cond_jaxpr, [*cconsts, *carry])[0]
    body = _core.GraphBuilder()
    cp, bp, kp = split_list(common.graph_parameters(body, ctx.avals_in), [cond_nconsts, body_nconsts])
    new = lowering.inline_jaxpr(body, body_jaxpr, [*bp, *kp])
    pred = lowering.inline_jaxpr(body, cond_jaxpr, [*cp, *new])[0]
    body.set_outputs([*new, pred])
    return ctx.builder.while_loop(pred0, [*cconsts, *bconsts, *carry],
                                  cond_nconsts + body_nconsts, body)


lowering.register_lowering(while_p, _while_lowering)


core.pp_fresh_names.add(while_p)


# ---------------------------------------------------------------------------------------
# scan

@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, jaxpr, length, reverse, linear, unroll, num_consts, num_carry,
                        _split_transpose):
    # As JAX: the carry has the body's output types, weak types included.
    outs = jaxpr.out_avals
    return [*outs[:num_carry],
            *[ShapedArray((length, *o.shape), o.dtype, o.weak_type) for o in outs[num_carry:]]]


def _stack(ys: Sequence[Any], aval: ShapedArray, length: int) -> Any:
    if length == 0:
        return full((0, *aval.shape), 0, aval.dtype)
    return concatenate([reshape(y, (1, *aval.shape)) for y in ys], 0)


@scan_p.def_impl
def _scan_impl(*args, jaxpr, length, reverse, linear, unroll, num_consts, num_carry,
               _split_transpose):
    outs = common.run_compiled(scan_p, args, dict(
        jaxpr=jaxpr, length=length, reverse=reverse, linear=linear, unroll=unroll,
        num_consts=num_consts, num_carry=num_carry, _split_transpose=_split_transpose))
    if outs is not None:
        return outs
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    carry = [x if type(x) is Array else _to_array(x) for x in carry]
    ys: list[list[Any]] = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = _run(jaxpr, [*consts, *carry, *[dynamic_index_in_dim(x, i, 0, False) for x in xs]])
        carry = outs[:num_carry]
        ys.append(outs[num_carry:])
    if reverse:
        ys.reverse()
    y_avals = jaxpr.out_avals[num_carry:]
    return [*carry, *[_stack([y[k] for y in ys], a, length) for k, a in enumerate(y_avals)]]


def _scan_nonzeros(jaxpr: ClosedJaxpr, const_t: Sequence[Any], carry_t: Sequence[Any],
                   xs_t: Sequence[Any]) -> tuple[list[bool], list[bool], list[bool]]:
    """Which constants, carries (by fixpoint) and xs have nonzero tangents."""
    const_nz = [_nonzero(t) for t in const_t]
    xs_nz = [_nonzero(t) for t in xs_t]
    return const_nz, _carry_fixpoint(jaxpr, const_nz, [_nonzero(t) for t in carry_t], xs_nz), xs_nz


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, linear, **params):
    consts, carry, xs = split_list(primals, [num_consts, num_carry])
    const_t, carry_t, xs_t = split_list(tangents, [num_consts, num_carry])
    const_nz, carry_nz, xs_nz = _scan_nonzeros(jaxpr, const_t, carry_t, xs_t)
    ny = len(jaxpr.out_avals) - num_carry
    jvp, out_nz = common.jvp_jaxpr(jaxpr, (*const_nz, *carry_nz, *xs_nz),
                                   (*carry_nz, *(False,) * ny))
    nk, nc, nx = num_consts, num_carry, len(xs)
    nkt, nct, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    p0 = nk + nc + nx
    order = [*range(nk), *range(p0, p0 + nkt), *range(nk, nk + nc),
             *range(p0 + nkt, p0 + nkt + nct), *range(nk + nc, p0), *range(p0 + nkt + nct, p0 + nkt + nct + nxt)]
    nyt = sum(out_nz[nc:])
    q0 = nc + ny
    out_order = [*range(nc), *range(q0, q0 + nct), *range(nc, q0), *range(q0 + nct, q0 + nct + nyt)]
    body = common.permute_outvars(common.permute_invars(jvp, order), out_order)
    ct_in = [_instantiate(t, p) for t, p, nz in zip(carry_t, carry, carry_nz) if nz]
    args = [*consts, *[t for t in const_t if _nonzero(t)], *carry, *ct_in,
            *xs, *[t for t in xs_t if _nonzero(t)]]
    outs = scan_p.bind(*args, jaxpr=body, num_consts=nk + nkt, num_carry=nc + nct,
                       linear=(False,) * len(args), **params)
    carry_out, carry_tout, ys, ys_t = split_list(outs, [nc, nct, ny])
    ct_it, yt_it = iter(carry_tout), iter(ys_t)
    return [*carry_out, *ys], [
        *[next(ct_it) if nz else ad.Zero.from_primal_value(p) for p, nz in zip(carry_out, carry_nz)],
        *[next(yt_it) if nz else ad.Zero.from_primal_value(p) for p, nz in zip(ys, out_nz[nc:])]]


def _scan_linearize(trace, primals, tangents, *, jaxpr, num_consts, num_carry, linear, **params):
    consts, carry, xs = split_list(primals, [num_consts, num_carry])
    const_t, carry_t, xs_t = split_list(tangents, [num_consts, num_carry])
    const_nz, carry_nz, xs_nz = _scan_nonzeros(jaxpr, const_t, carry_t, xs_t)
    ny = len(jaxpr.out_avals) - num_carry
    known, lin, out_nz, num_res = common.linearize_jaxpr(
        jaxpr, (*const_nz, *carry_nz, *xs_nz), (*carry_nz, *(False,) * ny))
    n_out = num_carry + ny
    kj = known.jaxpr
    res_vars = kj.outvars[n_out:]
    # Residuals that are loop constants are passed once, not stacked per iteration; those
    # that are an xs slice or a ys output are that stacked array (as JAX forwards them).
    const_pos = {id(v): i for i, v in enumerate(kj.invars[:num_consts])}
    invariant = [const_pos.get(id(v)) for v in res_vars]
    stacked_idx = [k for k, c in enumerate(invariant) if c is None]
    xs_pos = {id(v): i for i, v in enumerate(kj.invars[num_consts + num_carry:])}
    ys_pos = {id(v): i for i, v in reversed(list(enumerate(kj.outvars[num_carry:n_out])))}
    forwarded = {k: ("xs", xs_pos[id(res_vars[k])]) if id(res_vars[k]) in xs_pos else
                 ("ys", ys_pos[id(res_vars[k])])
                 for k in stacked_idx if id(res_vars[k]) in xs_pos or id(res_vars[k]) in ys_pos}
    new_idx = [k for k in stacked_idx if k not in forwarded]
    known_body = ClosedJaxpr(core.Jaxpr(kj.constvars, kj.invars,
                                        [*kj.outvars[:n_out], *[res_vars[k] for k in new_idx]],
                                        kj.eqns), known.consts)
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=known_body, num_consts=num_consts,
                       num_carry=num_carry, linear=(False,) * len(primals), **params)
    primal_outs, new_stacked = outs[:n_out], iter(outs[n_out:])
    sources = {"xs": xs, "ys": primal_outs[num_carry:]}
    stacked = [sources[forwarded[k][0]][forwarded[k][1]] if k in forwarded else next(new_stacked)
               for k in stacked_idx]
    if not any(out_nz):
        return primal_outs, [ad.Zero.from_primal_value(p) for p in primal_outs]
    inv_idx = [k for k, c in enumerate(invariant) if c is not None]
    nkt, nct, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    r = num_res
    order = [*inv_idx, *range(r, r + nkt), *range(r + nkt, r + nkt + nct), *stacked_idx,
             *range(r + nkt + nct, r + nkt + nct + nxt)]
    lin_body = common.permute_invars(lin, order)
    ct_in = [_instantiate(t, p) for t, p, nz in zip(carry_t, carry, carry_nz) if nz]
    args = [*[consts[invariant[k]] for k in inv_idx], *[t for t in const_t if _nonzero(t)],
            *ct_in, *stacked, *[t for t in xs_t if _nonzero(t)]]
    touts = iter(ad.bind_with(trace.tangent_trace, scan_p, args, dict(
        jaxpr=lin_body, num_consts=len(inv_idx) + nkt, num_carry=nct,
        linear=(False,) * len(args), **params)))
    return primal_outs, [next(touts) if nz else ad.Zero.from_primal_value(p)
                         for p, nz in zip(primal_outs, out_nz)]


def _scan_transpose(cts, *args, jaxpr, length, reverse, linear, unroll, num_consts, num_carry,
                    _split_transpose):
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    const_lin = [ad.is_undefined_primal(x) for x in consts]
    xs_lin = [ad.is_undefined_primal(x) for x in xs]
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    carry_avals = jaxpr.in_avals[num_consts:num_consts + num_carry]
    y_avals = jaxpr.out_avals[num_carry:]
    ct_carry = [ad.zeros_like_aval(ad.tangent_aval(a)) if type(c) is ad.Zero else c
                for c, a in zip(ct_carry, carry_avals)]
    ct_ys = [ad.zeros_like_aval(ShapedArray((length, *ad.tangent_aval(a).shape),
                                            ad.tangent_aval(a).dtype))
             if type(c) is ad.Zero else c for c, a in zip(ct_ys, y_avals)]
    ires = [c for c, lin in zip(consts, const_lin) if not lin]
    eres = [x for x, lin in zip(xs, xs_lin) if not lin]
    const_avals = jaxpr.in_avals[:num_consts]
    x_avals = jaxpr.in_avals[num_consts + num_carry:]
    lin_const_avals = [ad.tangent_aval(a) for a, lin in zip(const_avals, const_lin) if lin]
    n_ires, n_acc, nc = len(ires), len(lin_const_avals), num_carry

    def body_t(*a):
        ir, acc, ctc, cty, er = split_list(a, [n_ires, n_acc, nc, len(y_avals)])
        ir_it, er_it = iter(ir), iter(er)
        prim_args = [*[ad.UndefPrimal(av) if lin else next(ir_it)
                       for av, lin in zip(const_avals, const_lin)],
                     *[ad.UndefPrimal(av) for av in carry_avals],
                     *[ad.UndefPrimal(av) if lin else next(er_it) for av, lin in zip(x_avals, xs_lin)]]
        cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, prim_args, [*ctc, *cty])
        c_consts, c_carry, c_xs = split_list(cts_in, [num_consts, nc])
        c_consts = [ad.instantiate_zeros(c) for c, lin in zip(c_consts, const_lin) if lin]
        return [*[add(x, y) for x, y in zip(acc, c_consts)],
                *[ad.instantiate_zeros(c) for c in c_carry],
                *[ad.instantiate_zeros(c) for c, lin in zip(c_xs, xs_lin) if lin]]

    in_avals = [*[core.get_aval(x) for x in ires], *lin_const_avals,
                *[ad.tangent_aval(a) for a in carry_avals], *[ad.tangent_aval(a) for a in y_avals],
                *[a for a, lin in zip(x_avals, xs_lin) if not lin]]
    body = pe.trace_to_jaxpr(body_t, in_avals)
    acc0 = [ad.zeros_like_aval(a) for a in lin_const_avals]
    ops = [*ires, *acc0, *ct_carry, *ct_ys, *eres]
    outs = scan_p.bind(*ops, jaxpr=body, length=length, reverse=not reverse,
                       linear=(False,) * len(ops), unroll=unroll, num_consts=n_ires,
                       num_carry=n_acc + nc, _split_transpose=_split_transpose)
    ct_consts, ct_init, ct_xs = split_list(outs, [n_acc, nc])
    cc, cx = iter(ct_consts), iter(ct_xs)
    return [*[next(cc) if lin else None for lin in const_lin],
            *[c if ad.is_undefined_primal(x) else None for c, x in zip(ct_init, carry)],
            *[next(cx) if lin else None for lin in xs_lin]]


ad.primitive_jvps[scan_p] = _scan_jvp
ad.primitive_linearizations[scan_p] = _scan_linearize
ad.primitive_transposes[scan_p] = _scan_transpose


def _scan_batch(axis_data, vals, dims, *, jaxpr, num_consts, num_carry, linear, **params):
    size = axis_data.size
    consts, carry, xs = split_list(vals, [num_consts, num_carry])
    kd, cd, xd = split_list(dims, [num_consts, num_carry])
    const_dims = [None if d is None else 0 for d in kd]
    xs_dims = [None if d is None else 0 for d in xd]
    carry_b = _batched_carry(jaxpr, axis_data, const_dims, [d is not None for d in cd], xs_dims)
    ny = len(jaxpr.out_avals) - num_carry
    body, out_dims = batching.batch_jaxpr(
        jaxpr, axis_data, [*const_dims, *[0 if b else None for b in carry_b], *xs_dims],
        (*carry_b, *(False,) * ny))
    consts = [_front(x, d) for x, d in zip(consts, kd)]
    carry = [batching.bdim_at_front(x, d, size) if b else x for x, d, b in zip(carry, cd, carry_b)]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, xd)]
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=body, num_consts=num_consts,
                       num_carry=num_carry, linear=linear, **params)
    return outs, [*[0 if b else None for b in carry_b],
                  *[None if d is None else 1 for d in out_dims[num_carry:]]]


batching.axis_primitive_batchers[scan_p] = _scan_batch


def _scan_lowering(ctx, *operands, jaxpr: ClosedJaxpr, length: int, reverse: bool, linear,
                   unroll, num_consts: int, num_carry: int, _split_transpose: bool):
    b = ctx.builder
    consts, init, xs = split_list(operands, [num_consts, num_carry])
    const_avals, carry_avals, xs_avals = split_list(ctx.avals_in, [num_consts, num_carry])
    if length == 0:
        return [*init, *[_zeros(b, a) for a in ctx.avals_out[num_carry:]]]
    # Stacked outputs that nothing reads are not computed (JAX's DCE drops them too).
    y_used = ctx.used_out[num_carry:]
    num_ys = sum(y_used)
    jaxpr = ClosedJaxpr(ad.dce_jaxpr(jaxpr.jaxpr, [True] * num_carry + list(y_used)),
                        jaxpr.consts)
    jaxpr, hoisted = hoist_xs_products(jaxpr, num_consts, num_carry, length)
    for h in hoisted:
        given = {"xs": xs, "const": consts}
        xs = [*xs, *lowering.inline_jaxpr(b, h.post, [given[k][i] for k, i in h.operands])]
        xs_avals = [*xs_avals, *h.post.out_avals]
    jaxpr, num_carry, sunk = sink_dot_accumulators(jaxpr, num_consts, num_carry, length)
    gone = {s.carry for s in sunk}
    carry_avals = [a for c, a in enumerate(carry_avals) if c not in gone]
    init_all, init = init, [x for c, x in enumerate(init) if c not in gone]
    y_avals = [ShapedArray((length, *a.shape), a.dtype) for a in jaxpr.out_avals[num_carry:]]
    ys0 = [_zeros(b, a) for a in y_avals]
    # The loop's constants are the body's and the xs; its carry the counter, the body's
    # carry and the stacked ys.
    body = _core.GraphBuilder()
    kp, xp, ip, cp, yp = split_list(
        common.graph_parameters(body, [*const_avals, *xs_avals, core.ShapedArray((), np.int32),
                           *carry_avals, *y_avals]),
        [num_consts, len(xs), 1, num_carry])
    i = ip[0]
    idx = body.binary(_SUB, common.scalar_constant(body, length - 1, np.int32), i) if reverse else i
    zero = common.scalar_constant(body, 0, np.int32)
    slices = []
    for x, a in zip(xp, xs_avals):
        s = body.dynamic_slice(x, [idx, *[zero] * (len(a.shape) - 1)], [1, *a.shape[1:]])
        slices.append(body.reshape(s, list(a.shape[1:])))
    outs = lowering.inline_jaxpr(body, jaxpr, [*kp, *cp, *slices])
    new_carry, ys = outs[:num_carry], outs[num_carry:]
    new_ys = [body.dynamic_update_slice(acc, body.reshape(y, [1, *a.shape[1:]]),
                                        [idx, *[zero] * (len(a.shape) - 1)])
              for acc, y, a in zip(yp, ys, y_avals)]
    i1 = body.binary(_ADD, i, common.scalar_constant(body, 1, np.int32))
    body.set_outputs([i1, *new_carry, *new_ys,
                      body.binary(_LT, i1, common.scalar_constant(body, length, np.int32))])
    pred0 = b.constant(_core.scalar(True, lowering.code(np.bool_), 0))
    results = b.while_loop(pred0, [*consts, *xs, common.scalar_constant(b, 0, np.int32), *init, *ys0],
                           num_consts + len(xs), body)
    carry_out, ys_out = split_list(results[1:], [num_carry])
    stacked = {"xs": xs, "ys": ys_out}
    carry_it = iter(carry_out)
    final = {s.carry: lowering.inline_jaxpr(b, s.post, [init_all[s.carry],
                                                       *[stacked[k][i] for k, i in s.operands]])[0]
             for s in sunk}
    ys_it = iter(ys_out[:num_ys])
    return [*[final[c] if c in final else next(carry_it) for c in range(len(init_all))],
            *[next(ys_it) if u else _zeros(b, a)
              for u, a in zip(y_used, ctx.avals_out[len(init_all):])]]


def _zeros(b: Any, aval: ShapedArray) -> int:
    zero = common.scalar_constant(b, 0, aval.dtype)
    return b.broadcast_in_dim(zero, list(aval.shape), []) if aval.shape else zero


lowering.register_lowering(scan_p, _scan_lowering)


def _pp_scan(params: dict) -> dict:
    shown = {k: v for k, v in params.items() if k not in ("linear", "_split_transpose")}
    if any(params["linear"]):
        shown["linear"] = params["linear"]
    return shown


core.pp_params_rules[scan_p] = _pp_scan
core.pp_fresh_names.add(scan_p)


# ---------------------------------------------------------------------------------------
# The public functions.

def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """Runs ``body_fun`` on the carry while ``cond_fun`` of it is True
    (``jax.lax.while_loop``). Not reverse-differentiable, as in JAX."""
    init_vals, in_tree = tree_flatten((init_val,))
    carry_tree = tree_structure(init_val)
    name = common.first_arg_name(body_fun, "init_val")
    for _ in range(2):
        avals = [core.get_aval(x) for x in init_vals]
        cond_jaxpr, cond_consts, cond_tree = common.trace_to_closed_jaxpr(
            cond_fun, in_tree, avals, "while_cond")
        if cond_tree.num_leaves != 1 or cond_tree.node is not None:
            raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
        pred = cond_jaxpr.out_avals[0]
        if pred.shape != () or pred.dtype != np.bool_:
            raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                            f"[{pred!r}].")
        body_jaxpr, body_consts, body_tree = common.trace_to_closed_jaxpr(
            body_fun, in_tree, avals, "while_loop body")
        if body_tree == carry_tree:
            init_vals, changed = common.promote_weak_carry(init_vals, avals, body_jaxpr.out_avals)
            if changed:
                continue
        common.check_carry("while_loop body", name, init_val, carry_tree, avals, body_tree,
                           body_jaxpr.out_avals)
        break
    outs = while_p.bind(*cond_consts, *body_consts, *init_vals, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body_jaxpr, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tree_unflatten(carry_tree, outs)


def _static_int(x: Any) -> int | None:
    """``x`` as a Python int when its value is known now (not traced), else None."""
    try:
        return operator.index(x) if not hasattr(x, "shape") else int(x)
    except (TypeError, errors.ConcretizationTypeError):
        return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any,
              *, unroll: int | bool | None = None) -> Any:
    """``body_fun(i, x)`` for ``i`` from ``lower`` to ``upper`` (``jax.lax.fori_loop``):
    a ``scan`` when the bounds are known now (so reverse-differentiable), else a
    ``while_loop``."""
    lo_dt = np.dtype(core.get_aval(lower).dtype)
    hi_dt = np.dtype(core.get_aval(upper).dtype)
    if lo_dt != hi_dt:
        dt = dtypes.promote_types(lo_dt, hi_dt)
        lower, upper = convert_element_type(lower, dt), convert_element_type(upper, dt)
    lo, hi = _static_int(lower), _static_int(upper)
    if lo is not None and hi is not None:
        def scanned(loop_carry, _):
            i, x = loop_carry
            return (add(i, convert_element_type(1, core.get_aval(i).dtype))
                    if core.get_aval(i).dtype != np.int32 else add(i, 1), body_fun(i, x)), None

        start = lower if hasattr(lower, "shape") else lo
        (_, result), _ = scan(scanned, (start, init_val), None, length=max(hi - lo, 0),
                              unroll=1 if unroll is None else unroll)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")

    def cond(c):
        return lt(c[0], c[1])

    def body(c):
        i, hi_, x = c
        return add(i, convert_element_type(1, core.get_aval(i).dtype)), hi_, body_fun(i, x)

    return while_loop(cond, body, (lower, upper, init_val))[2]


def _leading_length(xs_flat: Sequence[Any], length: Any) -> int:
    for x in xs_flat:
        if not np.shape(x):
            raise ValueError("scan got value with no leading axis to scan over: "
                             f"{', '.join(str(x) for x in xs_flat if not np.shape(x))}.")
    lengths = [int(np.shape(x)[0]) for x in xs_flat]
    if length is not None:
        length = int(length)
        if not all(n == length for n in lengths):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                             f"leading axis sizes {lengths}.")
        return length
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(lengths)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(n) for n in lengths)}.")
    return lengths[0]


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False, unroll: int | bool = 1,
         _split_transpose: bool = False) -> tuple[Any, Any]:
    """Scans ``f`` over the leading axis of ``xs`` carrying ``init``
    (``jax.lax.scan``): returns the final carry and the stacked second outputs."""
    xs_flat, xs_tree = tree_flatten(xs)
    length = _leading_length(xs_flat, length)
    unroll = max(length, 1) if unroll is True else 1 if unroll is False else int(unroll)
    init_flat, carry_tree = tree_flatten(init)
    x_avals = [core.get_aval(x) for x in xs_flat]
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]
    name = common.first_arg_name(f, "init")
    pair_trees: list[Any] = []

    def body(carry, x):
        out = f(carry, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            leaves = tree_flatten(out)[0]
            shown = (str(core.get_aval(leaves[0])) if len(leaves) == 1
                     else str(tree_structure(out)))
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        pair_trees[:] = [tree_structure(out[0]), tree_structure(out[1])]
        return out

    for _ in range(2):
        carry_avals = [core.get_aval(x) for x in init_flat]
        _, in_tree = tree_flatten((tree_unflatten(carry_tree, init_flat),
                                   tree_unflatten(xs_tree, xs_flat)))
        jaxpr, consts, _ = common.trace_to_closed_jaxpr(body, in_tree, [*carry_avals, *x_avals], "scan")
        out_carry_tree, ys_tree = pair_trees
        nc = len(init_flat)
        if out_carry_tree == carry_tree:
            init_flat, changed = common.promote_weak_carry(init_flat, carry_avals,
                                                           jaxpr.out_avals[:nc])
            if changed:
                continue
        common.check_carry("scan body", name, init, carry_tree, carry_avals, out_carry_tree,
                           jaxpr.out_avals[:out_carry_tree.num_leaves])
        break
    args = [*consts, *init_flat, *xs_flat]
    outs = scan_p.bind(*args, jaxpr=jaxpr, length=length, reverse=bool(reverse),
                       linear=(False,) * len(args), unroll=unroll, num_consts=len(consts),
                       num_carry=len(init_flat), _split_transpose=_split_transpose)
    return (tree_unflatten(carry_tree, outs[:len(init_flat)]),
            tree_unflatten(ys_tree, outs[len(init_flat):]))


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked
    (``jax.lax.map``); with ``batch_size``, ``f`` is vmapped over batches of that size
    (the remainder as one more batch)."""
    if batch_size is None:
        return scan(lambda _, x: ((), f(x)), (), xs)[1]
    leaves, tree = tree_flatten(xs)
    n = _leading_length(leaves, None)
    batch_size = min(int(batch_size), n) if n else int(batch_size)
    num_batches, rem = divmod(n, batch_size) if batch_size else (0, n)
    vf = _vmapped(f)
    main = [reshape(_leading_slice(x, 0, num_batches * batch_size),
                    (num_batches, batch_size, *np.shape(x)[1:])) for x in leaves]
    ys = scan(lambda _, x: ((), vf(x)), (), tree_unflatten(tree, main))[1]
    ys = tree_map(lambda y: reshape(y, (num_batches * batch_size, *np.shape(y)[2:])), ys)
    if rem:
        tail = vf(tree_unflatten(tree, [_leading_slice(x, num_batches * batch_size, rem)
                                        for x in leaves]))
        ys = tree_map(lambda a, b: concatenate([a, b], 0), ys, tail)
    return ys


def _leading_slice(x: Any, start: int, size: int) -> Any:
    shape = np.shape(x)
    return lax_slice(x, (start, *[0] * (len(shape) - 1)), (start + size, *shape[1:]))


def _vmapped(f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``f`` mapped over the leading axis of its (pytree) argument, by batching its
    jaxpr (the interpreters' layer: the ``vmap`` API sits above lax)."""
    def mapped(x):
        leaves, tree = tree_flatten((x,))
        avals = [ShapedArray(np.shape(v)[1:], core.get_aval(v).dtype, core.get_aval(v).weak_type)
                 for v in leaves]
        jaxpr, consts, out_tree = common.trace_to_closed_jaxpr(f, tree, avals, "map")
        batched, _ = batching.batch_jaxpr(jaxpr, batching.AxisData(None, np.shape(leaves[0])[0]),
                                          [*[None] * len(consts), *[0] * len(leaves)], True)
        return tree_unflatten(out_tree, common.closed_call(batched, *consts, *leaves))
    return mapped
