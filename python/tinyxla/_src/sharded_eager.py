"""Eager operations on arrays laid out over a mesh keep JAX's shardings: ``x + 1``,
``x @ w`` and ``x.sum(0)`` of a sharded ``x`` are laid out as a jit of the one operation
would leave them (JAX runs eager operations as such jits).

The operation runs on the whole values (a sharded array also holds its whole value), and
its results are laid out by the partitioner's rules (``spmd.propagate``'s, for one
equation). The hook is installed into ``Primitive.bind`` when the first laid-out array is
made, so programs without shardings never pay for the check.
"""
from __future__ import annotations

from typing import Any

from tinyxla._src import core, sharded_array, spmd
from tinyxla._src.array import Array
from tinyxla._src.interpreters import lowering
from tinyxla._src.sharding_constraint import sharding_constraint_p


def _eager_with_layouts(prim: core.Primitive, args: tuple, params: dict) -> Any:
    mesh = None
    for a in args:
        if type(a) is Array and a._layout is not None:
            mesh = a._layout.sharding.mesh
            break
    if mesh is None or prim in lowering._inlined or prim is sharding_constraint_p:
        return NotImplemented
    out = prim.impl(*args, **params)
    outs = list(out) if prim.multiple_results else [out]
    invars = [core.Var(core.get_aval(a)) for a in args]
    lays = []
    for a, v in zip(args, invars):
        sharding = a._layout.sharding if type(a) is Array and a._layout is not None else None
        lay = spmd.layout_of(sharding, v.aval.ndim) if sharding is not None and \
            sharding.mesh == mesh else None
        lays.append(lay or spmd.unsplit(v.aval.ndim))
    eqn = core.JaxprEqn(prim, invars, [core.Var(o.aval) for o in outs], params)
    plan = spmd.Rules(mesh).plan_eqn(eqn, lays)
    out_lays = [spmd.unsplit(o.ndim) for o in outs] if plan is None else plan.outs
    inputs = [(a._layout.sharding, a.ndim) for a in args
              if type(a) is Array and a._layout is not None]
    outs = [sharded_array.put_sharded(o, spmd.result_sharding(lay, mesh, inputs))
            if type(o) is Array else o for o, lay in zip(outs, out_lays)]
    return outs if prim.multiple_results else outs[0]


sharded_array.eager_layout_hook = _eager_with_layouts
