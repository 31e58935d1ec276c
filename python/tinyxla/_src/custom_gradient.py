"""``jax.custom_gradient``: a function that returns its value and its own VJP rule,
made into a ``custom_vjp``. The rule, a Python closure, is staged into a jaxpr at the
forward pass so that the residuals are arrays (as JAX does)."""
from __future__ import annotations

from typing import Any, Callable

from tinyxla._src import core
from tinyxla._src.custom_derivatives import custom_vjp
from tinyxla._src.interpreters import ad
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.tree_util import (
    register_pytree_node, tree_flatten, tree_unflatten, treedef_is_leaf)


class _Residuals:
    """The staged VJP rule: its constants are the pytree leaves, the rule's jaxpr and
    trees the static structure."""

    def __init__(self, jaxpr: core.Jaxpr, in_tree: Any, out_tree: Any, consts: list):
        self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts


register_pytree_node(_Residuals, lambda r: (r.consts, (r.jaxpr, r.in_tree, r.out_tree)),
                     lambda aux, consts: _Residuals(*aux, list(consts)))


def custom_gradient(fun: Callable[..., tuple[Any, Callable[..., Any]]]) -> custom_vjp:
    """``fun(*args) -> (value, vjp)`` as a function of ``args`` returning ``value``
    whose reverse-mode derivative is ``vjp(cotangent)`` (``jax.custom_gradient``);
    ``vjp`` returns one cotangent per positional argument (a bare value when there is one).
    Like JAX's, the result has no forward-mode derivative."""

    @custom_vjp
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        ans, _ = fun(*args, **kwargs)
        return ans

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, _Residuals]:
        ans, rule = fun(*args, **kwargs)
        ans_flat, out_tree = tree_flatten((ans,))
        in_tree_box: list = []

        def flat_rule(*cts_flat: Any) -> list[Any]:
            (cts,) = tree_unflatten(out_tree, cts_flat)
            outs, in_tree = tree_flatten(rule(cts))
            in_tree_box.append(in_tree)
            return outs

        avals = [ad.tangent_aval(core.get_aval(x)) for x in ans_flat]
        closed = pe.trace_to_jaxpr(flat_rule, avals)
        return ans, _Residuals(closed.jaxpr, in_tree_box[0], out_tree, list(closed.consts))

    def bwd(res: _Residuals, cts: Any) -> tuple[Any, ...]:
        cts_flat, out_tree = tree_flatten((cts,))
        if out_tree != res.out_tree:
            raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
        cts_out = tree_unflatten(res.in_tree, core.eval_jaxpr(res.jaxpr, res.consts, *cts_flat))
        return (cts_out,) if treedef_is_leaf(res.in_tree) else cts_out

    wrapped.defvjp(fwd, bwd)
    return wrapped
