"""What the control-flow primitives share (mirrors ``jax._src.lax.control_flow.common``):
staging a user function into a closed jaxpr whose constants are leading operands, JAX's
carry and branch type checks with their messages, the weak-type promotion of carries,
and the jaxpr -> jaxpr transforms with instantiated outputs that the loops' fixpoints
and the branches' joins need.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, dtypes, errors
from tinyxla._src.core import ClosedJaxpr, Jaxpr, ShapedArray
from tinyxla._src.interpreters import ad
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.interpreters import lowering
from tinyxla._src.interpreters.caches import executable_for_content, per_jaxpr
from tinyxla._src.lax.conversion import _convert_element_type
from tinyxla._src.tree_keys import keystr
from tinyxla._src.tree_util import PyTreeDef, tree_flatten, tree_flatten_with_path, tree_unflatten


def trace_to_closed_jaxpr(fun: Callable, in_tree: PyTreeDef, in_avals: Sequence[ShapedArray],
                          what: str) -> tuple[ClosedJaxpr, list[Any], PyTreeDef]:
    """``fun`` (taking the pytree ``in_tree`` of leaves of ``in_avals``) staged into a
    jaxpr without constvars: what it closes over becomes leading operands, returned as
    the consts to pass (JAX's ``_initial_style_jaxpr``). Also returns the output tree."""
    out_store: list[PyTreeDef] = []

    def flat(*leaves):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, leaves)))
        out_store.append(out_tree)
        return out_leaves

    closed = pe.trace_to_jaxpr(flat, in_avals, errors.DebugInfo(what, fun, ()))
    j = closed.jaxpr
    lifted = ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns), [])
    return lifted, list(closed.consts), out_store[0]


def fun_description(fun: Callable) -> str:
    """``f at file.py:12`` as JAX names a function in its messages."""
    return errors._fun_source_info(fun) or getattr(fun, "__name__", repr(fun))


def first_arg_name(fun: Callable, default: str) -> str:
    try:
        return next(iter(inspect.signature(fun).parameters))
    except (TypeError, ValueError, StopIteration):
        return default


def _type_difference(a: ShapedArray, b: ShapedArray) -> str:
    if a.shape != b.shape and a.dtype != b.dtype:
        return "the shapes and dtypes do not match"
    return "the shapes do not match" if a.shape != b.shape else "the dtypes do not match"


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def check_carry(what: str, carry_name: str, in_carry: Any, in_tree: PyTreeDef,
                in_avals: Sequence[ShapedArray], out_tree: PyTreeDef,
                out_avals: Sequence[ShapedArray]) -> None:
    """JAX's ``_check_carry_type``: the body's carry output has the input's pytree
    structure and, weak types aside, its types."""
    if in_tree != out_tree:
        try:
            out_example = tree_unflatten(out_tree, [object()] * out_tree.num_leaves)
            detail = _tree_difference(carry_name, in_carry, out_example)
        except Exception:
            detail = f"the input carry has structure {in_tree} but the output has {out_tree}."
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{detail}\n\nRevise the function so that the carry "
            "output has the same pytree structure as the carry input.")
    paths = [keystr(p) for p, _ in tree_flatten_with_path(in_carry)[0]]
    single = in_tree.num_leaves == 1 and paths == [""]
    diffs = []
    for path, a, b in zip(paths, in_avals, out_avals):
        if not _same_type(a, b):
            who = f"carry {carry_name}" if single else f"carry component {carry_name}{path}"
            diffs.append(f"The input {who} has type {_long(a)} but the corresponding "
                         f"output carry component has type {_long(b)}, so "
                         f"{_type_difference(a, b)}.")
    if diffs:
        body = diffs[0] if len(diffs) == 1 else "\n".join(f"  * {d}" for d in diffs)
        raise TypeError(f"{what} function carry input and carry output must have equal types, "
                        f"but they differ:\n\n{body}\n\nRevise the function so that all output "
                        "types match the corresponding input types.")


def _tree_difference(name: str, in_carry: Any, out_example: Any) -> str:
    in_leaves, _ = tree_flatten(in_carry)
    if len(in_leaves) == 1 and tree_flatten(in_carry)[1].num_leaves == 1 and \
            not isinstance(in_carry, (tuple, list, dict)):
        return (f"The input carry {name} is a <class 'jax._src.core.ShapedArray'> but the "
                f"corresponding component of the carry output is a {type(out_example)}, so "
                "their Python types differ.")
    return (f"The input carry {name} is a {type(in_carry)} but the carry output is a "
            f"{type(out_example)}, so their structures differ.")


def _long(aval: ShapedArray) -> str:
    """JAX's ``str_short(short_dtypes=False)``: ``float32[3]``."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def promote_weak_carry(init: Sequence[Any], in_avals: Sequence[ShapedArray],
                       out_avals: Sequence[ShapedArray]) -> tuple[list[Any], bool]:
    """JAX's ``_promote_weak_typed_inputs``: a weakly typed carry whose body output has
    another dtype (a Python ``0`` carried into float arithmetic) is converted to the
    output's dtype. Returns the carry and whether anything changed (then retrace)."""
    changed = False
    out = list(init)
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            out[i] = _convert_element_type(init[i], dtypes.promote_types(a.dtype, b.dtype), False)
            changed = True
    return out, changed


def check_branch_outputs(what: str, names: Sequence[str], trees: Sequence[PyTreeDef],
                         avals: Sequence[Sequence[ShapedArray]], funs: Sequence[Callable]) -> None:
    """JAX's ``_check_tree_and_avals`` for cond/switch: every branch returns the first's
    pytree structure and (weak types aside) types."""
    descr = "\n".join(f"{n} is {fun_description(f)}" for n, f in zip(names, funs))
    for n, t, a in zip(names[1:], trees[1:], avals[1:]):
        if t != trees[0]:
            raise TypeError(
                f"{what} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{descr}\n\n{names[0]} output is {_tree_kind(trees[0])} but {n} output is "
                f"{_tree_kind(t)}, so their Python types differ.\n\nRevise {names[0]} and/or "
                f"{n} so that they have the same pytree structure.")
        for x, y in zip(avals[0], a):
            if not _same_type(x, y):
                raise TypeError(
                    f"{what} branches must have equal output types but they differ.\n\n{descr}"
                    f"\n\nThe output of {names[0]} has type {_long(x)} but the "
                    f"corresponding output of {n} has type {_long(y)}, so "
                    f"{_type_difference(x, y)}.\n\nRevise {names[0]} and/or {n} so that all "
                    "output types match.")


def _tree_kind(tree: PyTreeDef) -> str:
    leaves = tree_unflatten(tree, [0] * tree.num_leaves)
    if tree.num_leaves == 1 and not isinstance(leaves, (tuple, list, dict)) and leaves == 0:
        return "a pytree leaf"
    return f"a {type(leaves)}"


# ---------------------------------------------------------------------------------------
# Jaxpr -> jaxpr transforms with instantiated outputs (cached per jaxpr object).

def _eval(closed: ClosedJaxpr) -> Callable[..., list[Any]]:
    return lambda *xs: core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)


def can_have_tangent(aval: ShapedArray) -> bool:
    return dtypes.issubdtype(aval.dtype, np.inexact)


@per_jaxpr(4096)
def jvp_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]
              ) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    """``(primals, nonzero tangents) -> (primal outs, tangent outs)``; a tangent output is
    there when it is nonzero or ``instantiate`` asks for it (zeros then). Returns which
    tangent outputs are there."""
    n = len(closed.in_avals)
    out_nz: list[bool] = []

    def fun(*args):
        it = iter(args[n:])
        tangents = [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                    for a, nz in zip(closed.in_avals, nonzeros)]
        outs, touts = ad.jvp_flat(_eval(closed), list(args[:n]), tangents)
        out_nz[:] = [type(t) is not ad.Zero or inst for t, inst in zip(touts, instantiate)]
        return [*outs, *[ad.instantiate_zeros(t) if type(t) is ad.Zero else t
                         for t, nz in zip(touts, out_nz) if nz]]

    avals = [*closed.in_avals, *[ad.tangent_aval(a) for a, nz in zip(closed.in_avals, nonzeros) if nz]]
    return pe.trace_to_jaxpr(fun, avals), tuple(out_nz)


@per_jaxpr(4096)
def linearize_jaxpr(closed: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]
                    ) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], int]:
    """``ad.linearize_jaxpr`` whose linear part also returns (zero) tangents for the
    outputs ``instantiate`` asks for: ``(known, linear, out_nonzero, num_res)``."""
    known, linear, out_nz, num_res = ad.linearize_jaxpr(closed, nonzeros)
    want = tuple(nz or inst for nz, inst in zip(out_nz, instantiate))
    if want == out_nz:
        return known, linear, out_nz, num_res
    out_avals = [ad.tangent_aval(a) for a in closed.out_avals]

    def fun(*args):
        it = iter(core.eval_jaxpr(linear.jaxpr, linear.consts, *args))
        return [next(it) if nz else ad.zeros_like_aval(a)
                for a, nz, w in zip(out_avals, out_nz, want) if w]

    return known, pe.trace_to_jaxpr(fun, linear.in_avals), want, num_res


def permute_invars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    """``closed`` taking its inputs in the order ``order`` (positions of the old ones)."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in order], j.outvars, j.eqns),
                       closed.consts)


def permute_outvars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, [j.outvars[i] for i in order], j.eqns),
                       closed.consts)


def with_ignored_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` taking extra trailing inputs of ``avals`` that it does not read."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [*j.invars, *[core.Var(a) for a in avals]],
                             j.outvars, j.eqns), closed.consts)


def split_list(xs: Sequence[Any], sizes: Sequence[int]) -> list[list[Any]]:
    """``xs`` cut into consecutive pieces of ``sizes`` (and the rest)."""
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i:i + s]))
        i += s
    out.append(list(xs[i:]))
    return out


def closed_call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return core.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def run_compiled(primitive: core.Primitive, args: Sequence[Any], params: dict) -> list[Any] | None:
    """``primitive`` applied to ``args`` as a one-equation graph, compiled once per content
    (so an eager loop runs in C++, not as a Python loop of dispatches); None when the
    equation cannot be lowered (a body holding a primitive without a lowering)."""
    avals = [core.get_aval(a) for a in args]
    invars = [core.Var(a) for a in avals]
    outvars = [core.Var(a) for a in primitive.abstract_eval(*avals, **params)]
    exe = executable_for_content(Jaxpr([], invars, outvars,
                                       [core.JaxprEqn(primitive, invars, outvars, params)]))
    if isinstance(exe, lowering.JaxprExecutable):
        return None
    return exe(list(args))


def scalar_constant(builder: Any, value: Any, dtype: Any) -> int:
    """A 0-d constant of ``dtype`` in the graph ``builder`` builds."""
    return builder.constant(_core.scalar(value, lowering.code(dtype), 0))


def graph_parameters(builder: Any, avals: Sequence[ShapedArray]) -> list[int]:
    """One parameter of the graph ``builder`` builds per aval."""
    return [builder.parameter(list(a.shape), lowering.code(a.dtype)) for a in avals]
