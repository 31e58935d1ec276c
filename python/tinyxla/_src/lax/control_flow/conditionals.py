"""``lax.cond`` and ``lax.switch``: the ``cond`` primitive (mirrors
``jax._src.lax.control_flow.conditionals``).

``cond`` takes an int32 index (clamped by ``switch`` before binding) and the operands, and
holds one closed jaxpr per branch in ``branches``. Its rules, side by side below: abstract
eval, impl (the taken branch's compiled executable), jvp (the branches' jvps, tangent
outputs joined over branches), linearize (known branches returning the residuals of every
branch, zeros for the others'; a linear cond over them), transpose (each branch
transposed), batching (an unbatched index keeps the branch; a batched one becomes a
``select_n`` over every branch's batched result, as JAX does) and lowering (each branch a
C++ ``while_loop`` region of at most one trip, so only the taken one runs; branches of a
few elementwise equations are inlined and selected instead, which fuses).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes
from tinyxla._src.core import ClosedJaxpr, Jaxpr, Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters.caches import executable_for_content
from tinyxla._src.lax.control_flow import common
from tinyxla._src.lax.conversion import convert_element_type
from tinyxla._src.lax.elementwise import clamp, ne, select_n
from tinyxla._src.lax.shape_ops import broadcast_in_dim
from tinyxla._src.tree_util import tree_flatten, tree_unflatten

cond_p = Primitive("cond", multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index: ShapedArray, *avals: ShapedArray,
                        branches: tuple[ClosedJaxpr, ...]) -> list[ShapedArray]:
    outs = branches[0].out_avals
    return [ShapedArray(a.shape, a.dtype, all(b.out_avals[i].weak_type for b in branches))
            for i, a in enumerate(outs)]


@cond_p.def_impl
def _cond_impl(index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    i = min(max(int(index), 0), len(branches) - 1)
    b = branches[i]
    return executable_for_content(b.jaxpr)([*b.consts, *ops])


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = tuple(type(t) is not ad.Zero for t in tangents[1:])
    none = (False,) * len(branches[0].out_avals)
    out_nz = tuple(any(z) for z in zip(*[common.jvp_jaxpr(b, nz, none)[1] for b in branches]))
    jvps = tuple(common.jvp_jaxpr(b, nz, out_nz)[0] for b in branches)
    outs = cond_p.bind(index, *ops, *[t for t in tangents[1:] if type(t) is not ad.Zero],
                       branches=jvps)
    n = len(out_nz)
    it = iter(outs[n:])
    return outs[:n], [next(it) if z else ad.Zero.from_primal_value(p)
                      for p, z in zip(outs[:n], out_nz)]


def _join_residuals(parts: Sequence[tuple[ClosedJaxpr, ClosedJaxpr, Any, int]], num_out: int
                    ) -> tuple[tuple[ClosedJaxpr, ...], tuple[ClosedJaxpr, ...]]:
    """Known branches that all return every branch's residuals (zeros for the others'),
    and linear branches that all take them (JAX's ``_join_cond_pe_staged_jaxpr``)."""
    res_avals = [list(k.out_avals[num_out:]) for k, _, _, _ in parts]
    offsets = np.cumsum([0] + [len(r) for r in res_avals]).tolist()
    all_res = [a for r in res_avals for a in r]
    known, linear = [], []
    for i, (k, lin, _, _) in enumerate(parts):
        def known_fun(*ops, k=k, i=i):
            outs = common.closed_call(k, *ops)
            mine = iter(outs[num_out:])
            return [*outs[:num_out], *[next(mine) if offsets[i] <= j < offsets[i + 1]
                                       else ad.zeros_like_aval(a) for j, a in enumerate(all_res)]]

        def linear_fun(*args, lin=lin, i=i):
            res, ts = args[:len(all_res)], args[len(all_res):]
            return common.closed_call(lin, *res[offsets[i]:offsets[i + 1]], *ts)

        known.append(pe.trace_to_jaxpr(known_fun, k.in_avals))
        linear.append(pe.trace_to_jaxpr(linear_fun, all_res + lin.in_avals[len(res_avals[i]):]))
    return tuple(known), tuple(linear)


def _cond_linearize(trace, primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nz = tuple(type(t) is not ad.Zero for t in tangents[1:])
    num_out = len(branches[0].out_avals)
    none = (False,) * num_out
    out_nz = tuple(any(z) for z in zip(*[common.linearize_jaxpr(b, nz, none)[2] for b in branches]))
    parts = [common.linearize_jaxpr(b, nz, out_nz) for b in branches]
    known, linear = _join_residuals(parts, num_out)
    outs = cond_p.bind(index, *ops, branches=known)
    primal_outs, res = outs[:num_out], outs[num_out:]
    touts = iter(ad.bind_with(trace.tangent_trace, cond_p,
                              [index, *res, *[t for t in tangents[1:] if type(t) is not ad.Zero]],
                              {"branches": linear}) if any(out_nz) else ())
    return primal_outs, [next(touts) if z else ad.Zero.from_primal_value(p)
                         for p, z in zip(primal_outs, out_nz)]


def _cond_transpose(cts, index, *args, branches):
    linear = tuple(ad.is_undefined_primal(x) for x in args)
    ct_nz = tuple(type(ct) is not ad.Zero for ct in cts)
    transposed = tuple(ad.transpose_jaxpr(b, linear, ct_nz) for b in branches)
    outs = iter(cond_p.bind(index, *[x for x, lin in zip(args, linear) if not lin],
                            *[ct for ct, nz in zip(cts, ct_nz) if nz], branches=transposed))
    return [None, *[next(outs) if lin else None for lin in linear]]


ad.primitive_jvps[cond_p] = _cond_jvp
ad.primitive_linearizations[cond_p] = _cond_linearize
ad.primitive_transposes[cond_p] = _cond_transpose


def _cond_batch(axis_data, vals, dims, *, branches):
    index, ops = vals[0], vals[1:]
    index_dim, op_dims = dims[0], dims[1:]
    num_out = len(branches[0].out_avals)
    if index_dim is None:
        out_dims = [batching.batch_jaxpr(b, axis_data, op_dims)[1] for b in branches]
        inst = tuple(any(d[i] is not None for d in out_dims) for i in range(num_out))
        batched = tuple(batching.batch_jaxpr(b, axis_data, op_dims, inst)[0] for b in branches)
        return cond_p.bind(index, *ops, branches=batched), [0 if b else None for b in inst]
    # A batched index: every branch runs on every member and select_n picks per member.
    index = batching.moveaxis(index, index_dim, 0)
    results = [common.closed_call(batching.batch_jaxpr(b, axis_data, op_dims, True)[0], *ops)
               for b in branches]
    outs = []
    for i in range(num_out):
        cases = [r[i] for r in results]
        shape = batching.shape_of(cases[0])
        which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
        outs.append(select_n(which, *cases))
    return outs, [0] * num_out


batching.axis_primitive_batchers[cond_p] = _cond_batch


# Branches this small are inlined and selected (they fuse with their neighbours); larger
# ones, and any holding a loop, run as regions so only the taken one runs.
_SELECT_MAX_EQNS = 4
_EQ = _core.BINARY_OPS.index("eq")


def _is_small(branch: ClosedJaxpr) -> bool:
    # A branch with effects must not run when not taken.
    return len(branch.eqns) <= _SELECT_MAX_EQNS and not any(
        core._sub_jaxprs(e.params) for e in branch.eqns) and not core.jaxpr_has_effects(branch.jaxpr)


def _cond_lowering(ctx, index, *ops, branches):
    b = ctx.builder
    if len(branches) == 1:
        return lowering.inline_jaxpr(b, branches[0], ops)
    if all(_is_small(br) for br in branches):
        results = [lowering.inline_jaxpr(b, br, ops) for br in branches]
        outs = []
        for i, aval in enumerate(ctx.avals_out):
            which = index if not aval.shape else b.broadcast_in_dim(index, list(aval.shape), [])
            outs.append(b.select_n(which, [r[i] for r in results]))
        return outs
    # Branch k is a while_loop region of at most one trip (index == k), its carry the
    # outputs: the others pass the carry through, so only the taken branch runs.
    # A cond without outputs (one kept for its effects) carries a dummy: a region has results.
    carry_avals = list(ctx.avals_out) or [core.ShapedArray((), np.dtype(np.int32))]
    carry = []
    for aval in carry_avals:
        zero = common.scalar_constant(b, 0, aval.dtype)
        carry.append(b.broadcast_in_dim(zero, list(aval.shape), []) if aval.shape else zero)
    op_avals = ctx.avals_in[1:]
    for k, br in enumerate(branches):
        body = _core.GraphBuilder()
        params = common.graph_parameters(body, [*op_avals, *carry_avals])
        outs = lowering.inline_jaxpr(body, br, params[:len(ops)])
        body.set_outputs([*(outs or params[-1:]), common.scalar_constant(body, False, np.bool_)])
        taken = b.binary(_EQ, index, common.scalar_constant(b, k, np.int32))
        carry = b.while_loop(taken, [*ops, *carry], len(ops), body)
    return carry[:len(ctx.avals_out)]


lowering.register_lowering(cond_p, _cond_lowering)


core.pp_fresh_names.add(cond_p)


# ---------------------------------------------------------------------------------------
# The public functions.

def _trace_branches(funs: Sequence[Callable], ops: tuple, what: str, names: Sequence[str],
                    order: Sequence[int]) -> tuple[tuple[ClosedJaxpr, ...], list[Any], Any]:
    """Each branch staged on ``ops``; their constants joined into one operand list that
    every branch takes (each reading its own). Returns the branches, the consts and the
    output tree. ``names`` name ``funs``; ``order`` is the order JAX compares them in."""
    leaves, in_tree = tree_flatten(ops)
    avals = [core.get_aval(x) for x in leaves]
    traced = [common.trace_to_closed_jaxpr(f, in_tree, avals, what) for f in funs]
    common.check_branch_outputs(what, [names[k] for k in order], [traced[k][2] for k in order],
                                [traced[k][0].out_avals for k in order], [funs[k] for k in order])
    const_avals = [[core.get_aval(c) for c in t[1]] for t in traced]
    branches = []
    for i, (closed, consts, _) in enumerate(traced):
        j = closed.jaxpr
        own = j.invars[:len(consts)]
        invars = [v for k, cs in enumerate(const_avals)
                  for v in (own if k == i else [core.Var(a) for a in cs])]
        branches.append(ClosedJaxpr(Jaxpr([], [*invars, *j.invars[len(consts):]], j.outvars,
                                          j.eqns), closed.consts))
    consts = [c for t in traced for c in t[1]]
    return tuple(branches), [*consts, *leaves], traced[0][2]


def _bind_cond(index: Any, funs: Sequence[Callable], ops: tuple, what: str,
               names: Sequence[str], order: Sequence[int]) -> Any:
    branches, args, out_tree = _trace_branches(funs, ops, what, names, order)
    return tree_unflatten(out_tree, cond_p.bind(index, *args, branches=branches))


def _dtype_of(x: Any) -> np.dtype:
    return np.dtype(core.get_aval(x).dtype)


def switch(index: Any, branches: Sequence[Callable], *operands: Any, operand: Any = None) -> Any:
    """Applies ``branches[index]`` to ``operands`` (``jax.lax.switch``); the index is
    clamped to the branches' range."""
    if operand is not None:
        operands = (operand,)
    if not np.ndim(index) == 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
    dt = _dtype_of(index)
    if not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"Index type must be an integer, got {index} as {np.dtype(dt).name}")
    branches = tuple(branches)
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    names = [f"branch {i}" if i == 0 else f"branch{i}" for i in range(len(branches))]
    return _bind_cond(index, branches, operands, "switch", names, range(len(branches)))


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any,
         operand: Any = None) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``
    (``jax.lax.cond``), staged so that ``pred`` may be traced. The old form
    ``cond(pred, true_operand, true_fun, false_operand, false_fun)`` works too."""
    if (len(operands) == 2 and not callable(true_fun) and callable(false_fun)
            and callable(operands[1])):
        true_op, t_fun, false_op, f_fun = true_fun, false_fun, operands[0], operands[1]
        return cond(pred, lambda ops: t_fun(ops[0]), lambda ops: f_fun(ops[1]),
                    (true_op, false_op))
    if operand is not None:
        operands = (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    if np.ndim(pred) != 0:
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {np.shape(pred)}.")
    dt = _dtype_of(pred)
    if dt != np.bool_:
        if not dtypes.issubdtype(dt, np.number):
            raise TypeError(f"Pred type must be either boolean or number, got {dt}.")
        pred = convert_element_type(pred, dt)
        pred = ne(pred, convert_element_type(0, dt))
    index = convert_element_type(pred, np.int32)
    return _bind_cond(index, (false_fun, true_fun), operands, "cond", ("false_fun", "true_fun"),
                      (1, 0))
