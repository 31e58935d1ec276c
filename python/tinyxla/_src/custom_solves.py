"""``lax.custom_linear_solve`` and ``lax.custom_root``: solves and root finders whose
derivatives come from the problem they solve, not from their iterations (implicit
differentiation), as ``jax._src.lax.control_flow.solves``.

``custom_linear_solve`` is the primitive ``custom_linear_solve`` holding the jaxprs of
``matvec``, its transpose ``vecmat``, ``solve`` and ``transpose_solve``; the values those
functions close over that enclosing transformations trace are its leading operands. Its
JVP solves again (``dx = solve(db - dmatvec(x))``), it is linear in ``b`` with the
transpose solve as its transpose, vmap maps its jaxprs, and jit inlines the solve.
``custom_root`` is a ``custom_jvp`` whose tangent is ``-tangent_solve(df/dx, df/dparams)``.
With ``has_aux`` the solvers return ``(solution, aux)``: the aux leaves follow the
solution's among the outputs, and their tangents are zero, as in JAX.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Sequence

from tinyxla._src import core, tree_util
from tinyxla._src.api import _lift_tracer_consts
from tinyxla._src.autodiff import linearize
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.partial_eval import trace_to_jaxpr
from tinyxla._src.lax.lax import neg, sub
from tinyxla._src.lax.shape_ops import zeros_like_array
from tinyxla._src.linear_transpose import linear_transpose
from tinyxla._src.vmap import vmap


class _Solves(NamedTuple):
    """One value per function of a linear solve."""
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> "_Solves":
        return _Solves(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _trace_flat(fun: Callable, tree: Any, avals: Sequence[core.ShapedArray],
                name: str, has_aux: bool = False) -> tuple[core.ClosedJaxpr, list, Any]:
    """``fun`` (pytree in, pytree of ``tree``'s structure out, or with ``has_aux`` a pair of
    that and any aux pytree) as a closed jaxpr over flat leaves, the aux leaves after the
    others, with the traced values it closes over lifted to leading arguments; and the aux
    tree (None without aux)."""
    aux_tree: list = [None]

    def flat(*leaves: Any) -> list:
        out = fun(tree_util.tree_unflatten(tree, list(leaves)))
        aux_leaves: list = []
        if has_aux:
            out, aux = out
            aux_leaves, aux_tree[0] = tree_util.tree_flatten(aux)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        shapes = [tuple(core.get_aval(o).shape) for o in out_leaves]
        if shapes != [tuple(a.shape) for a in avals]:
            raise ValueError(f"{name}() output shapes must match b, got {shapes} and "
                             f"{[tuple(a.shape) for a in avals]}")
        if out_tree != tree:
            raise TypeError(f"{name}() output pytree structure must match b, got {out_tree} "
                            f"and {tree}.")
        return out_leaves + aux_leaves
    closed, consts = _lift_tracer_consts(trace_to_jaxpr(flat, list(avals)))
    return closed, consts, aux_tree[0]


def _run(closed: core.ClosedJaxpr, *args: Any) -> list:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _split(args: Sequence[Any], const_lengths: Any) -> tuple[Any, list]:
    """``args`` cut into the groups of ``const_lengths`` (a named tuple of counts, the
    groups returned as the same named tuple) and the rest."""
    out, start = [], 0
    for n in const_lengths:
        out.append(list(args[start:start + n]))
        start += n
    return type(const_lengths)(*out), list(args[start:])


def _abstract_eval(*args: Any, const_lengths: _Solves, jaxprs: _Solves) -> list:
    # The solution has b's types; aux values (has_aux) follow with the solve's.
    b = args[sum(const_lengths):]
    aux = jaxprs.solve.out_avals[len(b):]
    return [core.ShapedArray(a.shape, a.dtype) for a in [*b, *aux]]


def _impl(*args: Any, const_lengths: _Solves, jaxprs: _Solves) -> list:
    params, b = _split(args, const_lengths)
    return _run(jaxprs.solve, *params.solve, *b)


linear_solve_p = core.Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.def_abstract_eval(_abstract_eval)
linear_solve_p.def_impl(_impl)


def _lowering(ctx: Any, *args: Any, const_lengths: _Solves, jaxprs: _Solves) -> list:
    params, b = _split(args, const_lengths)
    return lowering.inline_jaxpr(ctx.builder, jaxprs.solve, [*params.solve, *b])


lowering.register_lowering(linear_solve_p, _lowering)


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], *, const_lengths: _Solves,
         jaxprs: _Solves) -> tuple[list, list]:
    # JAX's rule: A x = b gives A dx = db - dA x, solved with the same solve; the tangents
    # of the solvers' own values do not matter.
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    params, _ = _split(primals, const_lengths)
    params_dot, b_dot = _split(tangents, const_lengths)
    x, aux = outs[:len(b_dot)], outs[len(b_dot):]
    rhs = [ad.instantiate_zeros(t) for t in b_dot]
    if any(type(t) is not ad.Zero for t in params_dot.matvec):
        zeros = [ad.Zero.from_primal_value(v) for v in x]
        _, matvec_dot = ad.jvp_flat(lambda *a: _run(jaxprs.matvec, *a), [*params.matvec, *x],
                                    [*params_dot.matvec, *zeros])
        rhs = [r if type(t) is ad.Zero else sub(r, t) for r, t in zip(rhs, matvec_dot)]
    x_dot = linear_solve_p.bind(*primals[:sum(const_lengths)], *rhs,
                                const_lengths=const_lengths, jaxprs=jaxprs)[:len(b_dot)]
    return outs, [*x_dot, *(ad.Zero.from_primal_value(v) for v in aux)]


ad.primitive_jvps[linear_solve_p] = _jvp


def _transpose(cts: Sequence[Any], *args: Any, const_lengths: _Solves,
               jaxprs: _Solves) -> list:
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    params, b = _split(args, const_lengths)
    if any(ad.is_undefined_primal(v) for vs in params for v in vs):
        raise NotImplementedError("custom_linear_solve is linear in b only")
    cts, aux_cts = list(cts[:len(b)]), cts[len(b):]
    if any(type(ct) is not ad.Zero for ct in aux_cts):
        raise NotImplementedError("custom_linear_solve: aux values have no cotangents")
    cts = [ad.instantiate_zeros(ct) if type(ct) is not ad.Zero else ct.instantiate()
           for ct in cts]
    ct_b = linear_solve_p.bind(*[v for vs in params.transpose() for v in vs], *cts,
                               const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(ct_b[:len(b)])


ad.primitive_transposes[linear_solve_p] = _transpose


def _batched_jaxpr(closed: core.ClosedJaxpr | None, size: int) -> Any:
    if closed is None:
        return None
    avals = [core.ShapedArray((size, *v.aval.shape), v.aval.dtype) for v in closed.jaxpr.invars]
    return trace_to_jaxpr(vmap(lambda *a: _run(closed, *a)), avals)


def _batch(vals: Sequence[Any], dims: Sequence[int | None], *, const_lengths: _Solves,
           jaxprs: _Solves) -> tuple[list, list]:
    # Every operand mapped at the front and each jaxpr vmapped: the primitive (and with it
    # its derivative rules) survives vmap.
    size = batching.batch_size(vals, dims)
    moved = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    new = _Solves(*(_batched_jaxpr(j, size) for j in jaxprs))
    outs = linear_solve_p.bind(*moved, const_lengths=const_lengths, jaxprs=new)
    return outs, [0] * len(outs)


batching.primitive_batchers[linear_solve_p] = _batch


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """Mirrors ``jax.lax.custom_linear_solve``: ``solve(matvec, b)``, differentiated as
    the solution of the linear system ``matvec(x) = b`` (forward mode by solving again,
    reverse mode by ``transpose_solve`` of ``vecmat``, the transpose of ``matvec``;
    ``symmetric`` uses ``solve`` and ``matvec`` for both). With ``has_aux`` both solves
    return ``(x, aux)`` and so does this function; aux gets no derivative."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree = tree_util.tree_flatten(b)
    avals = [core.ShapedArray(core.get_aval(x).shape, core.get_aval(x).dtype) for x in leaves]
    matvec_j, matvec_c, _ = _trace_flat(matvec, tree, avals, "matvec")
    solve_j, solve_c, aux_tree = _trace_flat(functools.partial(solve, matvec), tree, avals,
                                             "solve", has_aux)
    vecmat_j = tsolve_j = None
    vecmat_c: list = []
    tsolve_c: list = []
    if transpose_solve is not None:
        if symmetric:
            vecmat, vecmat_j, vecmat_c = matvec, matvec_j, matvec_c
        else:
            example = tree_util.tree_unflatten(tree, leaves)
            transposed = linear_transpose(matvec, example)
            vecmat = lambda y: transposed(y)[0]  # noqa: E731
            vecmat_j, vecmat_c, _ = _trace_flat(vecmat, tree, avals, "vecmat")
        tsolve_j, tsolve_c, _ = _trace_flat(functools.partial(transpose_solve, vecmat), tree,
                                            avals, "transpose_solve", has_aux)
    consts = _Solves(matvec_c, vecmat_c, solve_c, tsolve_c)
    out = linear_solve_p.bind(*[c for cs in consts for c in cs], *leaves,
                              const_lengths=_Solves(*(len(c) for c in consts)),
                              jaxprs=_Solves(matvec_j, vecmat_j, solve_j, tsolve_j))
    x = tree_util.tree_unflatten(tree, list(out[:len(leaves)]))
    if not has_aux:
        return x
    return x, tree_util.tree_unflatten(aux_tree, list(out[len(leaves):]))


# ---- custom_root ----

class _Root(NamedTuple):
    f: Any
    solve: Any
    l_and_s: Any


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _custom_root(const_lengths: _Root, jaxprs: _Root, *args: Any) -> list:
    params, guess = _split(args, const_lengths)
    return _run(jaxprs.solve, *params.solve, *guess)


@_custom_root.defjvp
def _custom_root_jvp(const_lengths: _Root, jaxprs: _Root, primals: Sequence[Any],
                     tangents: Sequence[Any]) -> tuple[list, list]:
    # JAX's rule: f(x*(p), p) = 0 gives dx* = -(df/dx)^-1 (df/dp dp).
    params, _ = _split(primals, const_lengths)
    outs = _custom_root(const_lengths, jaxprs, *primals)
    n = len(jaxprs.f.out_avals)
    solution, aux = outs[:n], outs[n:]  # aux values (has_aux) get zero tangents
    params_dot, _ = _split(tangents, const_lengths)
    _, rhs = ad.jvp_flat(lambda *p: _run(jaxprs.f, *p, *solution), params.f, params_dot.f)
    rhs = [ad.instantiate_zeros(r) for r in rhs]
    solution_dot = _run(jaxprs.l_and_s, *params.l_and_s, *solution, *rhs)
    return outs, [*(neg(s) for s in solution_dot), *(zeros_like_array(a) for a in aux)]


def custom_root(f: Callable, initial_guess: Any, solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """Mirrors ``jax.lax.custom_root``: ``solve(f, initial_guess)``, a root of ``f``,
    differentiated implicitly through the values ``f`` closes over, with
    ``tangent_solve(g, y)`` solving the linearized problem ``g(x) = y``. With ``has_aux``
    ``solve`` returns ``(root, aux)`` and so does this function; aux gets no derivative."""
    leaves, tree = tree_util.tree_flatten(initial_guess)
    avals = [core.ShapedArray(core.get_aval(x).shape, core.get_aval(x).dtype) for x in leaves]
    f_j, f_c, _ = _trace_flat(f, tree, avals, "f")
    solve_j, solve_c, aux_tree = _trace_flat(functools.partial(solve, f), tree, avals, "solve",
                                             has_aux)

    def linearize_and_solve(xb: Any) -> Any:
        x, b = xb
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_avals = avals + avals
    pair_tree = tree_util.tree_structure((initial_guess, initial_guess))

    def l_and_s_flat(*flat: Any) -> list:
        x, b = tree_util.tree_unflatten(pair_tree, list(flat))
        return tree_util.tree_leaves(linearize_and_solve((x, b)))
    l_and_s_j, l_and_s_c = _lift_tracer_consts(trace_to_jaxpr(l_and_s_flat, pair_avals))
    consts = _Root(f_c, solve_c, l_and_s_c)
    out = _custom_root(_Root(*(len(c) for c in consts)), _Root(f_j, solve_j, l_and_s_j),
                       *[c for cs in consts for c in cs], *leaves)
    root = tree_util.tree_unflatten(tree, list(out[:len(leaves)]))
    if not has_aux:
        return root
    return root, tree_util.tree_unflatten(aux_tree, list(out[len(leaves):]))
