"""Sharded ``jit`` as SPMD: the per-device program of a jaxpr whose values are split over
the axes of a mesh, with the collectives the partitioning needs (JAX's GSPMD partitioner,
for the layouts below). ``sharded_jit.py`` runs it with one instance per device.

A layout says, per dimension of a value, the mesh axes it is split over (major to minor,
as a PartitionSpec entry; empty when not split). Each equation has a rule (``plan_eqn``)
that says which layout its operands are brought to, the layout of its results, and the
mesh axes its results must still be reduced over:

- elementwise ops (and conversions): operands take the layout of the first split operand
  (a replicated operand is cut to this device's block, no communication);
- ``transpose`` permutes the layout, ``broadcast_in_dim`` and ``reshape`` carry it to the
  dimensions that hold the same elements; reductions (sum, max, min) reduce their block and
  finish with an all-reduce over the axes of the reduced dimensions;
- ``dot_general`` keeps split batch and free dimensions (data parallel, column-parallel
  weights); a contracting dimension split on both sides (row-parallel weights) gives
  partial products summed over its axes; an operand split where the other is not is cut
  to match;
- ``with_sharding_constraint`` moves its operand to the constrained layout;
- anything else gathers its operands and runs on the whole values, on every device:
  slower, still correct.

The rules serve twice: ``propagate`` reads only the result layouts (the shardings of a
jit's results and of eager ops on sharded arrays), ``Partitioner`` also moves the values.

The per-device program runs over one flat axis (``FLAT``) of all the mesh's devices in
mesh order; a device's coordinate along a mesh axis is computed from its flat index. A
collective over all the mesh axes longer than 1 is one collective over the flat axis; one
over a sub-group (say 'y' of an ('x', 'y') mesh) gathers every device's block and keeps its
group's (more data moved than a sub-group collective, on host memory that is cheap next to
a dispatch).
"""
from __future__ import annotations

import math
from typing import Any, Hashable, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.interpreters import batching, lowering
from tinyxla._src.lax import elementwise, parallel, reductions, shape_ops, slicing
from tinyxla._src.sharding import Mesh, NamedSharding, PartitionSpec
from tinyxla._src.sharding_constraint import sharding_constraint_p

Layout = tuple  # per dimension, a tuple of mesh axis names (major to minor)


class _FlatAxis:
    """The name of the flat device axis of the per-device program (no user name can
    equal it)."""

    def __repr__(self) -> str:
        return "spmd_devices"


FLAT = _FlatAxis()

_REDUCERS = {"reduce_sum": "sum", "reduce_max": "max", "reduce_min": "min"}
_KEEP_LAYOUT = {"convert_element_type", "copy", "copy_p", "add_any"}
# Parameters that hold an equation's result shape.
_SHAPE_PARAMS = {"reshape": "new_sizes", "broadcast_in_dim": "shape"}


def unsplit(ndim: int) -> Layout:
    return ((),) * ndim


def layout_of(sharding: Any, ndim: int) -> Layout | None:
    """The layout a NamedSharding gives an ``ndim``-d value; None for other shardings."""
    spec = getattr(sharding, "spec", None)
    if spec is None or not isinstance(sharding, NamedSharding):
        return None
    return tuple(tuple(spec.axes_of(d)) for d in range(ndim))


def spec_of(layout: Layout, mesh: Mesh) -> PartitionSpec:
    """JAX's canonical PartitionSpec of a propagated layout: mesh axes of size 1 and
    trailing unsplit dimensions dropped."""
    sizes = mesh.shape
    dims = [tuple(a for a in axes if sizes[a] > 1) for axes in layout]
    while dims and not dims[-1]:
        dims.pop()
    return PartitionSpec(*[None if not a else a[0] if len(a) == 1 else a for a in dims])


def result_sharding(layout: Layout, mesh: Mesh, inputs: Sequence) -> NamedSharding:
    """The sharding JAX gives a result of ``layout`` computed from arguments with these
    shardings (``inputs``: (sharding, ndim) pairs, of the arguments jit was given no
    sharding for): the first one of the same rank that lays out its devices alike is
    reused as it is, else the canonical one."""
    spec = spec_of(layout, mesh)
    for sharding, ndim in inputs:
        if isinstance(sharding, NamedSharding) and sharding.mesh == mesh and \
                ndim == len(layout) and spec_of(layout_of(sharding, ndim), mesh) == spec:
            return sharding
    return NamedSharding(mesh, spec)


class Plan:
    """An equation's rule: its operands' layouts, its results' layouts, and the mesh axes
    (with the reduction: 'sum', 'max', 'min') its results are still to be reduced over."""

    __slots__ = ("operands", "outs", "reduce_axes", "reduce_kind")

    def __init__(self, operands: list, outs: list, reduce_axes: tuple = (),
                 reduce_kind: str = "sum"):
        self.operands = operands
        self.outs = outs
        self.reduce_axes = reduce_axes
        self.reduce_kind = reduce_kind


class Rules:
    """The layout rules over one mesh (axis sizes decide which splits divide a shape)."""

    def __init__(self, mesh: Mesh):
        self.mesh = mesh
        self.sizes = dict(mesh.shape)

    def parts(self, axes: Sequence) -> int:
        return math.prod(self.sizes[a] for a in axes)

    def effective(self, axes: Sequence) -> tuple:
        """The axes of a split that actually cut (longer than 1)."""
        return tuple(a for a in axes if self.sizes[a] > 1)

    def fit(self, layout: Layout, shape: Sequence[int]) -> Layout:
        """``layout`` with the splits that do not divide their dimension dropped."""
        return tuple(a if n % self.parts(a) == 0 else () for a, n in zip(layout, shape))

    def plan_eqn(self, e: core.JaxprEqn, lays: list) -> Plan | None:
        """The rule of ``e`` given its operands' layouts; None: gather and replicate."""
        prim, name = e.primitive, e.primitive.name
        in_shapes = [tuple(x.aval.shape) for x in e.invars]
        out_shapes = [tuple(v.aval.shape) for v in e.outvars]
        if prim is sharding_constraint_p:
            want = layout_of(e.params["sharding"], len(in_shapes[0]))
            want = lays[0] if want is None else self.fit(want, in_shapes[0])
            return Plan([want], [want])
        if not any(a for lay in lays for a in lay):
            return Plan(list(lays), [unsplit(len(s)) for s in out_shapes])
        if (prim in batching.elementwise_primitives or name in _KEEP_LAYOUT) and \
                not prim.multiple_results:
            return self._elementwise(lays, in_shapes, out_shapes[0])
        if name == "transpose":
            return Plan(list(lays), [tuple(lays[0][p] for p in e.params["permutation"])])
        if name in _REDUCERS:
            axes = set(e.params["axes"])
            summed = tuple(a for d in sorted(axes) for a in lays[0][d])
            return Plan(list(lays), [tuple(a for d, a in enumerate(lays[0]) if d not in axes)],
                        summed, _REDUCERS[name])
        if name == "broadcast_in_dim" and len(lays) == 1:
            return self._broadcast(e, lays[0], in_shapes[0], out_shapes[0])
        if name == "reshape" and len(lays) == 1 and e.params.get("dimensions") is None:
            return self._reshape(lays[0], in_shapes[0], out_shapes[0])
        if name == "dot_general":
            return self._dot(e, lays, in_shapes)
        return None

    def _elementwise(self, lays: list, in_shapes: list, out_shape: tuple) -> Plan | None:
        nd = len(out_shape)
        if any(len(s) not in (0, nd) for s in in_shapes):
            return None
        # Each dimension takes the split of the first operand that splits it, unless that
        # split's axes already split another dimension.
        target: list = [()] * nd
        used: set = set()
        for lay, s in zip(lays, in_shapes):
            if s != out_shape:
                continue
            for d, axes in enumerate(lay):
                if axes and not target[d] and not used.intersection(axes):
                    target[d] = axes
                    used.update(axes)
        if not used:
            return None
        target = self.fit(tuple(target), out_shape)
        operands = [lay if not s else tuple(t if n == m else () for t, n, m in
                                            zip(target, s, out_shape))
                    for lay, s in zip(lays, in_shapes)]
        return Plan(operands, [target])

    def _broadcast(self, e: core.JaxprEqn, lay: Layout, in_shape: tuple,
                   out_shape: tuple) -> Plan:
        out = [()] * len(out_shape)
        operand = list(lay)
        for k, od in enumerate(e.params["broadcast_dimensions"]):
            if in_shape[k] == out_shape[od]:
                out[od] = lay[k]
            else:
                operand[k] = ()
        return Plan([tuple(operand)], [tuple(out)])

    def _reshape(self, lay: Layout, in_shape: tuple, out_shape: tuple) -> Plan:
        """Dimensions regroup into runs of equal size; the leading input dimension of a run
        hands its split to the run's leading output dimension (the same contiguous
        blocks), the others are gathered."""
        operand, out = [()] * len(in_shape), [()] * len(out_shape)
        i = j = 0
        while i < len(in_shape) and j < len(out_shape):
            i0, j0 = i, j
            pi, pj = in_shape[i], out_shape[j]
            i, j = i + 1, j + 1
            while pi != pj:
                if pi < pj:
                    pi, i = pi * in_shape[i], i + 1
                else:
                    pj, j = pj * out_shape[j], j + 1
            k = self.parts(lay[i0])
            if lay[i0] and out_shape[j0] % k == 0:
                operand[i0], out[j0] = lay[i0], lay[i0]
        return Plan([tuple(operand)], [tuple(out)])

    def _dot(self, e: core.JaxprEqn, lays: list, in_shapes: list) -> Plan:
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        lx, ly = lays
        tx, ty = [()] * len(lx), [()] * len(ly)
        used: set = set()

        def take(*candidates: Layout) -> tuple:
            for axes in candidates:
                if axes and not used.intersection(axes):
                    used.update(axes)
                    return axes
            return ()

        for i, j in list(zip(lb, rb)) + list(zip(lc, rc)):
            tx[i] = ty[j] = take(lx[i], ly[j])
        lfree = [i for i in range(len(lx)) if i not in lc and i not in lb]
        rfree = [j for j in range(len(ly)) if j not in rc and j not in rb]
        for i in lfree:
            tx[i] = take(lx[i])
        for j in rfree:
            ty[j] = take(ly[j])
        tx, ty = self.fit(tuple(tx), in_shapes[0]), self.fit(tuple(ty), in_shapes[1])
        # A pair must agree after fitting (both sides have the same size there).
        out = tuple([tx[i] for i in lb] + [tx[i] for i in lfree] + [ty[j] for j in rfree])
        summed = tuple(a for i in lc for a in tx[i])
        return Plan([tx, ty], [out], summed, "sum")


def _call_param(e: core.JaxprEqn) -> Any:
    """The sub-jaxpr of a call equation (jit, custom_jvp ...), or None."""
    param = lowering._inlined.get(e.primitive)
    return None if param is None else e.params[param]


def propagate(closed: core.ClosedJaxpr, mesh: Mesh, in_layouts: list) -> list:
    """The layouts of ``closed``'s results given its inputs' (what the partitioner gives)."""
    rules = Rules(mesh)

    def run(jaxpr: core.Jaxpr, lays: list) -> list:
        env = {v: unsplit(len(v.aval.shape)) for v in jaxpr.constvars}
        env.update(zip(jaxpr.invars, lays))

        def read(x):
            return unsplit(len(x.aval.shape)) if type(x) is core.Literal else env[x]

        for e in jaxpr.eqns:
            ins = [read(x) for x in e.invars]
            sub = _call_param(e)
            if sub is not None:
                outs = run(sub.jaxpr if isinstance(sub, core.ClosedJaxpr) else sub, ins)
            else:
                plan = rules.plan_eqn(e, ins)
                outs = ([unsplit(len(v.aval.shape)) for v in e.outvars] if plan is None
                        else plan.outs)
            env.update(zip(e.outvars, outs))
        return [read(v) for v in jaxpr.outvars]

    return run(closed.jaxpr, list(in_layouts))


class Partitioner:
    """The per-device evaluation of a jaxpr over ``mesh`` (traced under the ``FLAT`` axis
    of all its devices, in mesh order)."""

    def __init__(self, closed: core.ClosedJaxpr, mesh: Mesh, in_layouts: list,
                 out_layouts: list):
        self.closed = closed
        self.rules = Rules(mesh)
        self.names = tuple(mesh.axis_names)
        self.sizes = self.rules.sizes
        self.in_layouts = in_layouts
        self.out_layouts = out_layouts  # None: the propagated layout
        self.result_layouts: list | None = None
        self._coords: dict = {}

    # -- where this device is -----------------------------------------------------------

    def _coord(self, axis: Hashable) -> Any:
        c = self._coords.get(axis)
        if c is None:
            k = self.names.index(axis)
            stride = math.prod(self.sizes[a] for a in self.names[k + 1:])
            i = parallel.axis_index(FLAT)
            c = self._coords[axis] = elementwise.rem(elementwise.div(i, np.int32(stride)),
                                                     np.int32(self.sizes[axis]))
        return c

    def _block_index(self, axes: tuple) -> Any:
        index = None
        for a in axes:
            c = self._coord(a)
            index = c if index is None else elementwise.add(
                elementwise.mul(index, np.int32(self.sizes[a])), c)
        return index

    def _covers_flat(self, axes: tuple) -> bool:
        """Whether ``axes`` are every mesh axis longer than 1, in mesh order (then the flat
        axis's order is theirs)."""
        return axes == self.rules.effective(self.names)

    def _group(self, x: Any, axes: tuple) -> Any:
        """Every device's ``x`` stacked over the mesh axes ``axes`` (in mesh order in
        front), for this device's coordinates along the other axes."""
        g = parallel.all_gather(x, FLAT, axis=0, tiled=False)
        g = shape_ops.reshape(g, tuple(self.sizes[a] for a in self.names) + tuple(x.shape))
        for k in reversed(range(len(self.names))):
            if self.names[k] not in axes:
                g = slicing.dynamic_index_in_dim(g, self._coord(self.names[k]), k,
                                                 keepdims=False)
        return g

    # -- collectives ----------------------------------------------------------------------

    def gather(self, x: Any, d: int, axes: tuple) -> Any:
        axes = self.rules.effective(axes)
        if not axes:
            return x
        if self._covers_flat(axes):
            return parallel.all_gather(x, FLAT, axis=d, tiled=True)
        g = self._group(x, axes)
        m = len(axes)
        in_mesh_order = [a for a in self.names if a in axes]
        order = [in_mesh_order.index(a) for a in axes]
        rest = list(range(m, m + len(x.shape)))
        g = shape_ops.transpose(g, tuple(rest[:d] + order + rest[d:]))
        shape = list(x.shape)
        shape[d] *= self.rules.parts(axes)
        return shape_ops.reshape(g, tuple(shape))

    def cut(self, x: Any, d: int, axes: tuple) -> Any:
        axes = self.rules.effective(axes)
        if not axes:
            return x
        block = x.shape[d] // self.rules.parts(axes)
        start = elementwise.mul(self._block_index(axes), np.int32(block))
        return slicing.dynamic_slice_in_dim(x, start, block, d)

    def reduce(self, x: Any, axes: tuple, kind: str) -> Any:
        axes = self.rules.effective(axes)
        if not axes:
            return x
        if set(axes) == set(self.rules.effective(self.names)):
            return {"sum": parallel.psum, "max": parallel.pmax, "min": parallel.pmin}[kind](
                x, FLAT)
        g = self._group(x, axes)
        lead = tuple(range(len(set(axes))))
        return {"sum": reductions.reduce_sum, "max": reductions.reduce_max,
                "min": reductions.reduce_min}[kind](g, lead)

    def relayout(self, x: Any, src: Layout, dst: Layout) -> Any:
        eff = self.rules.effective
        moved = [d for d, (a, b) in enumerate(zip(src, dst)) if eff(a) != eff(b)]
        cuts = {}
        for d in moved:
            a, b = eff(src[d]), eff(dst[d])
            if b[:len(a)] == a:  # already a block of the wanted one: cut it further
                cuts[d] = b[len(a):]
            else:
                x = self.gather(x, d, a)
                cuts[d] = b
        for d, axes in cuts.items():
            x = self.cut(x, d, axes)
        return x

    # -- the equations ------------------------------------------------------------------

    def __call__(self, *blocks: Any) -> list:
        self._coords = {}
        jaxpr = self.closed.jaxpr
        outs, layouts = self._eval(jaxpr, self.closed.consts, list(zip(blocks,
                                                                        self.in_layouts)))
        results = []
        for (x, lay), want in zip(zip(outs, layouts), self.out_layouts):
            results.append(x if want is None else self.relayout(x, lay, want))
        self.result_layouts = [lay if want is None else want
                               for lay, want in zip(layouts, self.out_layouts)]
        return results

    def _eval(self, jaxpr: core.Jaxpr, consts: Sequence, args: list) -> tuple[list, list]:
        env: dict = {}
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = (c, unsplit(len(v.aval.shape)))
        env.update(zip(jaxpr.invars, args))

        def read(x):
            if type(x) is core.Literal:
                return x.val, unsplit(len(x.aval.shape))
            return env[x]

        for e in jaxpr.eqns:
            ins = [read(x) for x in e.invars]
            sub = _call_param(e)
            if sub is not None:
                closed = sub if isinstance(sub, core.ClosedJaxpr) else core.ClosedJaxpr(sub, [])
                outs, lays = self._eval(closed.jaxpr, closed.consts, ins)
            else:
                outs, lays = self._eqn(e, [x for x, _ in ins], [lay for _, lay in ins])
            env.update((v, (o, lay)) for v, o, lay in zip(e.outvars, outs, lays))
        return tuple(map(list, zip(*[read(v) for v in jaxpr.outvars]))) or ([], [])

    def _eqn(self, e: core.JaxprEqn, vals: list, lays: list) -> tuple[list, list]:
        plan = self.rules.plan_eqn(e, lays)
        if plan is None:
            plan = Plan([unsplit(len(lay)) for lay in lays],
                        [unsplit(len(v.aval.shape)) for v in e.outvars])
        vals = [self.relayout(x, src, dst) for x, src, dst in zip(vals, lays, plan.operands)]
        params = e.params
        shape_param = _SHAPE_PARAMS.get(e.primitive.name)
        if shape_param is not None:  # the shape of this device's block of the result
            params = dict(params)
            params[shape_param] = tuple(n // self.rules.parts(a) for n, a in
                                        zip(e.outvars[0].aval.shape, plan.outs[0]))
        out = e.primitive.bind(*vals, **params)
        outs = list(out) if e.primitive.multiple_results else [out]
        if plan.reduce_axes:
            outs = [self.reduce(o, plan.reduce_axes, plan.reduce_kind) for o in outs]
        return outs, plan.outs
