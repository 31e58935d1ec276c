"""``jax.linear_transpose``: the transpose of a linear function, from its jaxpr staged at
abstract arguments and ``backward_pass`` (no evaluation of the function itself)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.api import make_jaxpr
from tinyxla._src.interpreters import ad
from tinyxla._src.numpy import creation
from tinyxla._src.tree_util import tree_flatten, tree_structure, tree_unflatten


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: tuple = ()) -> Callable:
    """The transpose of ``fun``, which must be linear in its arguments
    (``jax.linear_transpose``). ``primals`` (arrays or ShapeDtypeStructs) give only the
    argument shapes and dtypes. The result maps an output cotangent to a tuple of input
    cotangents; a non-linear ``fun`` raises the missing transpose rule's error."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    closed, out_shapes = make_jaxpr(fun, return_shape=True)(*primals)
    in_tree = tree_structure(primals)
    out_tree = tree_structure(out_shapes)
    in_avals, out_avals = closed.in_avals, tuple(closed.out_avals)
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    every = in_dtypes + out_dtypes
    if not (all(dtypes.issubdtype(d, np.inexact) for d in every)
            or all(dtypes.issubdtype(d, np.integer) for d in every)):
        raise TypeError("linear_transpose only supports [float or complex] -> "
                        "[float or complex], and integer -> integer functions, but got "
                        f"{in_dtypes} -> {out_dtypes}.")

    def transposed_fun(out_cotangent: Any) -> Any:
        cts, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError("cotangent tree does not match function output, "
                            f"expected {out_tree} but got {tree}")
        if not all(core.get_aval(c).shape == a.shape and core.get_aval(c).dtype == a.dtype
                   for c, a in zip(cts, out_avals)):
            raise TypeError("cotangent type does not match function output, "
                            f"expected {out_avals} but got {cts}")
        undefined = [ad.UndefPrimal(a) for a in in_avals]
        in_cts = ad.backward_pass(closed.jaxpr, closed.consts, undefined, cts)
        # A cotangent passed straight through (an output that is an input) is made an array.
        return tree_unflatten(in_tree, [creation.asarray(ad.instantiate_zeros(c))
                                        for c in in_cts])

    return transposed_fun
