"""Sharded ``jit`` as SPMD: the per-device program of a jaxpr whose inputs are split over
one mesh axis, with the collectives the partitioning needs (JAX's GSPMD partitioner, for
one axis). ``sharded_jit.py`` runs the program with ``shard_map`` (one instance per device).

Each value carries its layout: for each dimension, the mesh axis it is split over or None.
Equation by equation:

- elementwise ops (and conversions): operands are brought to the layout of the first
  split operand (a replicated operand is cut to this device's block, no communication);
- ``transpose`` permutes the layout; ``reduce_sum/max/min`` reduce their block and, when
  a reduced dimension is split, finish with ``psum/pmax/pmin`` (an all-reduce);
- ``dot_general`` keeps split batch and free dimensions (data parallel, column-parallel
  weights); when the contracting dimension is split on both sides (row-parallel weights)
  each device multiplies its blocks and a ``psum`` adds the partial products; an operand
  split where the other is not is cut to match;
- ``with_sharding_constraint`` moves its operand to the constrained layout (all-gather,
  or a cut);
- anything else gathers its operands (``all_gather``) and runs on the whole values, on
  every device: slower, still correct.

Results leave in their propagated layout, or in the one ``out_shardings`` asks for.
"""
from __future__ import annotations

from typing import Any, Hashable

from tinyxla._src import core
from tinyxla._src.interpreters import batching
from tinyxla._src.lax import parallel, slicing
from tinyxla._src.sharding_constraint import sharding_constraint_p

_REDUCERS = {"reduce_sum": parallel.psum, "reduce_max": parallel.pmax,
             "reduce_min": parallel.pmin}
_KEEP_LAYOUT = {"convert_element_type", "copy", "copy_p"}

Layout = list  # per dimension: the mesh axis name it is split over, or None


class Partitioner:
    """The per-device evaluation of one jaxpr over mesh axis ``axis`` of size ``size``."""

    def __init__(self, closed: core.ClosedJaxpr, axis: Hashable, size: int,
                 in_layouts: list[Layout], out_layouts: list[Layout | None]):
        self.closed = closed
        self.axis = axis
        self.size = size
        self.in_layouts = in_layouts
        self.out_layouts = out_layouts  # None: the propagated layout
        self.result_layouts: list[Layout] | None = None

    # -- moving between layouts ------------------------------------------------------

    def _gather(self, x: Any, layout: Layout, d: int) -> Any:
        return parallel.all_gather(x, self.axis, axis=d, tiled=True)

    def _cut(self, x: Any, d: int) -> Any:
        block = core.get_aval(x).shape[d] // self.size
        start = parallel.axis_index(self.axis) * block
        return slicing.dynamic_slice_in_dim(x, start, block, d)

    def relayout(self, x: Any, src: Layout, dst: Layout) -> Any:
        for d, (a, b) in enumerate(zip(src, dst)):
            if a is not None and b is None:
                x = self._gather(x, src, d)
        for d, (a, b) in enumerate(zip(src, dst)):
            if a is None and b is not None:
                x = self._cut(x, d)
        return x

    # -- the equations -----------------------------------------------------------------

    def __call__(self, *blocks: Any) -> list:
        jaxpr = self.closed.jaxpr
        env: dict = {}
        for v, c in zip(jaxpr.constvars, self.closed.consts):
            env[v] = (c, [None] * len(core.get_aval(c).shape))
        for v, b, lay in zip(jaxpr.invars, blocks, self.in_layouts):
            env[v] = (b, lay)

        def read(x):
            if type(x) is core.Literal:
                return x.val, [None] * len(x.aval.shape)
            return env[x]

        for e in jaxpr.eqns:
            vals, lays = zip(*[read(x) for x in e.invars]) if e.invars else ((), ())
            outs, out_lays = self._eqn(e, list(vals), list(lays))
            for v, o, lay in zip(e.outvars, outs, out_lays):
                env[v] = (o, lay)
        results, layouts = [], []
        for v, want in zip(jaxpr.outvars, self.out_layouts):
            x, lay = read(v)
            if want is not None:
                x, lay = self.relayout(x, lay, want), want
            results.append(x)
            layouts.append(lay)
        self.result_layouts = layouts
        return results

    def _bind(self, e: core.JaxprEqn, vals: list) -> list:
        out = e.primitive.bind(*vals, **e.params)
        return list(out) if e.primitive.multiple_results else [out]

    def _replicated(self, e: core.JaxprEqn, vals: list, lays: list) -> tuple[list, list]:
        vals = [self.relayout(x, lay, [None] * len(lay)) for x, lay in zip(vals, lays)]
        outs = self._bind(e, vals)
        return outs, [[None] * len(v.aval.shape) for v in e.outvars]

    def _eqn(self, e: core.JaxprEqn, vals: list, lays: list) -> tuple[list, list]:
        prim, name = e.primitive, e.primitive.name
        if all(a is None for lay in lays for a in lay):
            return self._bind(e, vals), [[None] * len(v.aval.shape) for v in e.outvars]
        if prim is sharding_constraint_p:
            want = layout_of(e.params["sharding"], len(lays[0]), self.axis)
            if want is None:
                return [vals[0]], [lays[0]]
            return [self.relayout(vals[0], lays[0], want)], [want]
        if (prim in batching.elementwise_primitives or name in _KEEP_LAYOUT) and \
                not prim.multiple_results:
            nd = len(e.outvars[0].aval.shape)
            target = next((lay for lay in lays if len(lay) == nd and any(lay)), None)
            if target is None:
                return self._replicated(e, vals, lays)
            vals = [self.relayout(x, lay, target) if len(lay) == nd else x
                    for x, lay in zip(vals, lays)]
            if any(len(lay) not in (0, nd) for lay in lays):
                return self._replicated(e, vals, [target if len(lay) == nd else lay
                                                  for lay in lays])
            return self._bind(e, vals), [target]
        if name == "transpose":
            perm = e.params["permutation"]
            return self._bind(e, vals), [[lays[0][p] for p in perm]]
        if name in _REDUCERS:
            axes = set(e.params["axes"])
            out = self._bind(e, vals)[0]
            if any(lays[0][d] is not None for d in axes):
                out = _REDUCERS[name](out, self.axis)
            return [out], [[a for d, a in enumerate(lays[0]) if d not in axes]]
        if name == "dot_general":
            return self._dot(e, vals, lays)
        return self._replicated(e, vals, lays)

    def _dot(self, e: core.JaxprEqn, vals: list, lays: list) -> tuple[list, list]:
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        x, y = vals
        lx, ly = list(lays[0]), list(lays[1])
        partial = False
        for i, j in list(zip(lc, rc)) + list(zip(lb, rb)):
            if lx[i] != ly[j]:  # split on one side only: cut the other to match
                if lx[i] is None:
                    x, lx[i] = self._cut(x, i), ly[j]
                else:
                    y, ly[j] = self._cut(y, j), lx[i]
        partial = any(lx[i] is not None for i in lc)
        lfree = [i for i in range(len(lx)) if i not in lc and i not in lb]
        rfree = [j for j in range(len(ly)) if j not in rc and j not in rb]
        used = {lx[i] for i in lc} | {lx[i] for i in lb}
        for i in lfree:  # a mesh axis may split only one dimension of the result
            if lx[i] is not None and (lx[i] in used or partial):
                x = self._gather(x, lx, i)
                lx[i] = None
            used.add(lx[i])
        for j in rfree:
            if ly[j] is not None and (ly[j] in used or partial):
                y = self._gather(y, ly, j)
                ly[j] = None
            used.add(ly[j])
        out = e.primitive.bind(x, y, **e.params)
        if partial:
            out = parallel.psum(out, self.axis)
        layout = [lx[i] for i in lb] + [lx[i] for i in lfree] + [ly[j] for j in rfree]
        return [out], [layout]


def layout_of(sharding: Any, ndim: int, axis: Hashable) -> Layout | None:
    """The layout a sharding gives an ``ndim``-d value when only ``axis`` splits; None
    when the sharding is not a NamedSharding."""
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return None
    sizes = sharding.mesh.shape
    out = []
    for d in range(ndim):
        names = [a for a in spec.axes_of(d) if sizes[a] > 1]
        out.append(axis if names == [axis] else None)
    return out
