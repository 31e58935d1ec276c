"""How a pmap runs: one instance of a staged function per device, run concurrently. The
user API (``jax.pmap``: arguments, plan cache, tracing) is ``_src/pmap.py``.

The function is traced once per argument signature with per-device avals, the pmap axis
bound in the axis environment. The jaxpr is then split at its collectives into segments;
each segment is lowered and compiled once and run on every device's stream (each device
is a host thread). A collective is a routing step and a combine step: the routing (in
``lax/parallel.py``, beside the primitive) hands each device views of the values it
needs from the other devices' streams, and the combine is a small compiled graph run on
that device. Cross-device reads are plain dependencies on futures, so no device thread
ever waits in a rendezvous: an error in one device's shard is stored in every result
that depends on it and raised at the wait.

The result is an Array whose leading axis is sharded: it holds one buffer per device, a
later pmap reads them in place, and other uses gather them on device 0 when first needed.

Under a transformation a pmap is one ``xla_pmap`` equation (JAX's call primitive): its
impl runs the plan above on the devices; its JVP is a pmap of the per-device JVP; reverse
mode runs the primal pmap at once (keeping per-device residuals) and transposes the
linear pmap into a pmap of the per-device transpose; vmap of it, and its lowering inside
a jit graph, compute its values as a vmap with its axis name (on one device).

Differences from JAX: a pmap nested in another pmap's body runs as a named vmap on the
outer pmap's devices; ``out_axes=None`` is checked statically (an output computed from
mapped values without passing through psum/pmax/pmin/all_gather is rejected), where JAX
checks values only under a flag; ``donate_argnums`` and ``backend='cpu'`` are accepted and
ignored.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla import _core
from tinyxla._src import core, distributed
from tinyxla._src.devices import ShardedBuffers
from tinyxla._src.array import Array, _CODE, _DTYPES, _to_array, _wrap
from tinyxla._src.interpreters import ad, batching, lowering, pmap_mpi
from tinyxla._src.interpreters import partial_eval as pe
from tinyxla._src.lax import lax, parallel
from tinyxla._src.vmap import vmap

# Collectives whose result is the same on every device.
_REPLICATING = {parallel.psum_p, parallel.pmax_p, parallel.pmin_p, parallel.all_gather_p}



# ---------------------------------------------------------------------------------------
# Sharded results.

def _own_shards(a: Array, axis: int | None, devs: list[int]) -> list | None:
    """The per-device buffers of a pmap result mapped along its sharded axis 0 over the
    same devices; None otherwise."""
    if axis != 0:
        return None
    sharded = a._shards
    if sharded is None or sharded.devices != devs:
        return None
    return sharded.handles




def _sharded_array(handles: list, devs: list[int], aval: core.ShapedArray) -> Array:
    a = _wrap(None, aval.weak_type, aval.dtype)
    del a._h  # gathered on first use (Array.__getattr__)
    a._shards = ShardedBuffers(handles, devs)
    a._committed = True
    return a


# ---------------------------------------------------------------------------------------
# The plan: segments and collectives, compiled once per signature.

class _Segment:
    __slots__ = ("invars", "outvars", "exe")

    def __init__(self, eqns: list, invars: list, outvars: list, name: str):
        self.invars = invars
        self.outvars = outvars
        closed = core.ClosedJaxpr(core.Jaxpr([], invars, outvars, eqns), [])
        self.exe = lowering.executable_for(closed, name)

    def run(self, env: dict, dev: int) -> None:
        handles = [env[v] for v in self.invars]
        exe = self.exe
        if type(exe) is lowering.GraphExecutable:
            # Through exe.executable on every run, never a reference of our own: the
            # executable budget may release the compiled graph (it recompiles on the next
            # run).
            exe.used = True
            outs = exe.executable.run(handles, dev)
        else:
            args = []
            for h, v in zip(handles, self.invars):
                a = _wrap(h, v.aval.weak_type, v.aval.dtype)
                a._committed = True
                args.append(a)
            outs = [o._h for o in self.exe(args, dev)]
        for v, h in zip(self.outvars, outs):
            env[v] = h


class _Collective:
    __slots__ = ("eqn", "route", "combine", "out_aval", "across")

    def __init__(self, eqn: core.JaxprEqn):
        self.eqn = eqn
        self.across = False  # over the devices of every process (pmap_mpi.py)
        self.route = parallel.collective_routes[eqn.primitive]
        self.combine = None
        self.out_aval = eqn.outvars[0].aval

    def _compile(self, routed: list) -> Any:
        b = _core.GraphBuilder()
        params = [b.parameter(list(h.shape), h.dtype_code) for h in routed]
        avals = [core.ShapedArray(tuple(h.shape), _DTYPES[h.dtype_code]) for h in routed]
        ctx = lowering.LoweringContext(b, avals, [self.out_aval])
        b.set_outputs([lowering._lowerings[self.eqn.primitive](ctx, *params, **self.eqn.params)])
        return _core.compile(b)

    def run(self, envs: list[dict], devs: list[int]) -> None:
        eqn = self.eqn
        if eqn.invars:
            x = eqn.invars[0]
            shards = [env[x] for env in envs] if type(x) is not core.Literal else [
                _literal_handle(x, d) for d in devs]
        else:
            shards = []
        if self.across:
            pmap_mpi.run_across_processes(self, shards, envs, devs)
            return
        outvar = eqn.outvars[0]
        for d, (env, dev) in enumerate(zip(envs, devs)):
            routed = self.route(shards, d, **eqn.params)
            env[outvar] = self.combine_for(routed).run(routed, dev)[0]

    def combine_for(self, routed: list) -> Any:
        """The compiled combine step (the same for every device)."""
        if self.combine is None:
            self.combine = self._compile(routed)
        return self.combine


def _literal_handle(lit: core.Literal, dev: int) -> Any:
    return _to_array(np.asarray(lit.val, dtype=lit.aval.dtype), dev)._h


def _inline_calls(jaxpr: core.Jaxpr, consts: dict) -> tuple[list, list]:
    """``jaxpr``'s equations with call primitives that hold a collective inlined (fresh
    variables per inlining), and its outvars after the renaming. Closed-over constants
    of the inlined jaxprs are added to ``consts``."""
    out: list = []
    rename: dict = {}

    def read(x):
        return rename.get(x, x) if type(x) is not core.Literal else x

    for eqn in jaxpr.eqns:
        param = lowering._inlined.get(eqn.primitive)
        invars = [read(x) for x in eqn.invars]
        if param is not None and _has_collective(eqn.params[param]):
            sub = eqn.params[param]
            sub_jaxpr, sub_consts = ((sub.jaxpr, sub.consts) if isinstance(sub, core.ClosedJaxpr)
                                     else (sub, ()))
            fresh_consts = {}
            for v, c in zip(sub_jaxpr.constvars, sub_consts):
                nv = core.Var(v.aval)
                consts[nv] = c
                fresh_consts[v] = nv
            inner = core.Jaxpr([], list(sub_jaxpr.invars), sub_jaxpr.outvars,
                               [_rename_eqn(e, fresh_consts) for e in sub_jaxpr.eqns])
            eqns, outs = _inline_calls(inner, consts)
            bind = dict(zip(sub_jaxpr.invars, invars))
            fresh = dict(bind)
            for e in eqns:
                new_outs = [core.Var(v.aval) for v in e.outvars]
                out.append(core.JaxprEqn(e.primitive, [fresh.get(x, x) if type(x) is not core.Literal
                                                       else x for x in e.invars],
                                         new_outs, e.params))
                fresh.update(zip(e.outvars, new_outs))
            for v, o in zip(eqn.outvars, outs):
                rename[v] = fresh.get(o, o) if type(o) is not core.Literal else o
        else:
            out.append(core.JaxprEqn(eqn.primitive, invars, eqn.outvars, eqn.params))
    return out, [read(v) for v in jaxpr.outvars]


def _rename_eqn(e: core.JaxprEqn, m: dict) -> core.JaxprEqn:
    if not m:
        return e
    return core.JaxprEqn(e.primitive, [m.get(x, x) if type(x) is not core.Literal else x
                                       for x in e.invars], e.outvars, e.params)


def _has_collective(sub: Any) -> bool:
    todo = [sub.jaxpr if isinstance(sub, core.ClosedJaxpr) else sub]
    while todo:
        j = todo.pop()
        for e in j.eqns:
            if e.primitive in parallel.collective_routes:
                return True
            todo.extend(v.jaxpr if isinstance(v, core.ClosedJaxpr) else v
                        for v in e.params.values() if isinstance(v, (core.Jaxpr, core.ClosedJaxpr)))
    return False


def _per_device_aval(aval: core.ShapedArray, axis: int | None) -> core.ShapedArray:
    if axis is None:
        return aval
    axis %= len(aval.shape)
    return core.ShapedArray(aval.shape[:axis] + aval.shape[axis + 1:], aval.dtype,
                            aval.weak_type)


def _check_replicated(closed: core.ClosedJaxpr, in_axes: tuple, out_axes: tuple,
                      axis_name: Any) -> None:
    """Rejects ``out_axes=None`` on an output computed from mapped values without a
    replicating collective (psum, pmax, pmin, all_gather) in between: a static check, so
    it costs nothing per call."""
    if all(ax is not None for ax in out_axes):
        return
    eqns, outvars = _inline_calls(closed.jaxpr, {})
    varying = {v for v, a in zip(closed.jaxpr.invars, in_axes) if a is not None}
    for e in eqns:
        if e.primitive in _REPLICATING:
            continue
        if e.primitive in parallel.collective_routes or any(
                type(x) is not core.Literal and x in varying for x in e.invars):
            varying.update(e.outvars)
    for i, (v, ax) in enumerate(zip(outvars, out_axes)):
        if ax is None and type(v) is not core.Literal and v in varying:
            aval = v.aval
            raise ValueError(
                f"pmap out_axes=None requires output {i} (of type {aval.dtype.name}"
                f"[{','.join(map(str, aval.shape))}]) to be the same on every device, but "
                f"it is computed from values mapped over axis {axis_name!r}; reduce it "
                "with psum, pmean, pmax, pmin or all_gather first, or map it (out_axes=0).")


def _plan(closed: core.ClosedJaxpr, in_axes: tuple, out_axes: tuple, size: int,
          devs: tuple, across: bool | None = None) -> "_Plan":
    """The plan of a per-device jaxpr, built once and kept on the jaxpr. ``across``: the
    axis spans every process's devices, ``devs`` being this process's share (by default
    whenever there are several processes)."""
    if across is None:
        across = distributed.state.num_processes > 1
    plans = closed._executable
    if plans is None:
        plans = closed._executable = {}
    key = (in_axes, out_axes, size, devs, across)
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _Plan(closed, in_axes, out_axes, list(devs), across)
    return plan


class _Plan:
    """A per-device jaxpr split at its collectives, its segments compiled."""

    def __init__(self, closed: core.ClosedJaxpr, in_axes: tuple, out_axes: tuple,
                 devs: list[int], across: bool):
        self.across = across
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.devs = devs
        self.out_avals = closed.out_avals
        consts = dict(zip(closed.jaxpr.constvars, closed.consts))
        eqns, outvars = _inline_calls(closed.jaxpr, consts)
        self.invars = closed.jaxpr.invars
        self.outvars = outvars
        self.consts = [(v, _const_handle(c, v.aval)) for v, c in consts.items()]
        self.steps = self._split(eqns, outvars, "pmap")

    def _split(self, eqns: list, outvars: list, name: str) -> list:
        groups: list = []
        cur: list = []
        for e in eqns:
            if e.primitive in parallel.collective_routes:
                if cur:
                    groups.append(cur)
                    cur = []
                groups.append(e)
            else:
                cur.append(e)
        if cur:
            groups.append(cur)
        # Backwards: the vars each group must hand on.
        live = {v for v in outvars if type(v) is not core.Literal}
        needs: list = []
        for g in reversed(groups):
            needs.append(set(live))
            for e in (g if isinstance(g, list) else [g]):
                live.difference_update(e.outvars)
            for e in (g if isinstance(g, list) else [g]):
                live.update(x for x in e.invars if type(x) is not core.Literal)
        needs.reverse()
        steps: list = []
        for g, later in zip(groups, needs):
            if not isinstance(g, list):
                steps.append(_Collective(g))
                continue
            defined, invars, seen = set(), [], set()
            for e in g:
                for x in e.invars:
                    if type(x) is not core.Literal and x not in defined and x not in seen:
                        seen.add(x)
                        invars.append(x)
                defined.update(e.outvars)
            outs = [v for e in g for v in e.outvars if v in later]
            if outs or any(core.eqn_has_effects(e) for e in g):  # prints run for themselves
                steps.append(_Segment(g, invars, outs, f"pmap_{name}"))
        if self.across:
            for step in steps:
                if type(step) is _Collective:
                    step.across = True
            return pmap_mpi.group_reductions(steps, _Collective)
        return steps

    def run_blocks(self, inputs: list) -> list[list]:
        """Each output's per-device handles. ``inputs``: Arrays, or lists of per-device
        handles already split along their mapped axis."""
        devs, axes = self.devs, self.in_axes
        n = len(devs)
        envs: list[dict] = [{} for _ in devs]
        for v, h in self.consts:
            for env in envs:
                env[v] = h
        for v, a, ax in zip(self.invars, inputs, axes):
            if type(a) is list:
                shards = a
            else:
                code = _CODE[v.aval.dtype]
                shards = _own_shards(a, ax, devs)
                if shards is None:
                    h = a._h
                    if h.dtype_code != code:
                        h = _core.convert(h, code)
                    if ax is None:
                        shards = [h] * n
                    else:
                        shards = _split_handle(h, ax % len(h.shape), n)
            for env, s in zip(envs, shards):
                env[v] = s
        for step in self.steps:
            if type(step) is _Segment:
                for env, dev in zip(envs, devs):
                    step.run(env, dev)
            else:
                step.run(envs, devs)
        return [[_literal_handle(v, d) for d in devs] if type(v) is core.Literal
                else [env[v] for env in envs] for v in self.outvars]

    def run(self, arrays: list[Array]) -> list:
        results = []
        for handles, ax, aval in zip(self.run_blocks(arrays), self.out_axes, self.out_avals):
            if ax is None:
                results.append(_wrap(handles[0], aval.weak_type, aval.dtype))
                continue
            out = _sharded_array(handles, self.devs, aval)
            if ax % (len(aval.shape) + 1) != 0:
                out = batching.moveaxis(out, 0, ax)
            results.append(out)
        return results


def _const_handle(c: Any, aval: core.ShapedArray) -> Any:
    h = c._h if type(c) is Array else _to_array(np.asarray(c, dtype=aval.dtype))._h
    code = _CODE[aval.dtype]
    return h if h.dtype_code == code else _core.convert(h, code)


_split_specs: dict[Any, tuple] = {}


def _split_handle(h: Any, axis: int, n: int) -> list:
    """Views of index i along ``axis`` for each i, without that axis."""
    shape = h.shape
    spec = _split_specs.get((shape, axis, n))
    if spec is None:
        rest = list(shape[:axis] + shape[axis + 1:])
        windows = []
        for i in range(n):
            start, limit = [0] * len(shape), list(shape)
            start[axis], limit[axis] = i, i + 1
            windows.append((start, limit))
        spec = _split_specs[(shape, axis, n)] = (windows, [1] * len(shape), rest)
    windows, strides, rest = spec
    slice_, reshape = _core.slice, _core.reshape
    return [reshape(slice_(h, start, limit, strides), rest) for start, limit in windows]


# ---------------------------------------------------------------------------------------
# xla_pmap: the call primitive a pmap under a transformation becomes (JAX's xla_pmap_p).
# ``call_jaxpr`` is the per-device function; ``in_axes``/``out_axes`` are flat.

pmap_p = core.Primitive("xla_pmap", multiple_results=True)


def _axis_env(params: dict) -> batching.extend_axis_env:
    return batching.extend_axis_env(batching.AxisData(params["axis_name"], params["axis_size"]))


def _pmap_abstract_eval(*in_avals, call_jaxpr, axis_size, out_axes, **params):
    return [a if ax is None else batching.unmapped_aval(axis_size, ax % (a.ndim + 1), a)
            for a, ax in zip(call_jaxpr.out_avals, out_axes)]


def _pmap_impl(*args, call_jaxpr, in_axes, out_axes, axis_size, devices, **params):
    arrays = [x if type(x) is Array else _to_array(x) for x in args]
    return _plan(call_jaxpr, in_axes, out_axes, axis_size, devices).run(arrays)


def _as_named_vmap(call_jaxpr: core.ClosedJaxpr, in_axes: tuple, out_axes: tuple,
                   axis_name: Any, axis_size: int) -> Callable:
    """The pmap's values computed by a vmap with its axis name, on one device."""
    return vmap(lambda *xs: core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs),
                in_axes=in_axes, out_axes=list(out_axes), axis_name=axis_name,
                axis_size=axis_size)


def _pmap_batch(axis_data, vals, dims, *, call_jaxpr, in_axes, out_axes, axis_name,
                axis_size, **params):
    """vmap of a pmap: the pmap's values (as a named vmap) under a vmap of the batch dims,
    which keeps the outer vmap's axis name for collectives over both axes."""
    inner = _as_named_vmap(call_jaxpr, in_axes, out_axes, axis_name, axis_size)
    outs = vmap(lambda *xs: inner(*xs), in_axes=tuple(dims), out_axes=0,
                axis_name=axis_data.name, axis_size=axis_data.size)(*vals)
    return outs, [0] * len(outs)


def _pmap_jvp(primals, tangents, *, call_jaxpr, in_axes, out_axes, **params):
    """A pmap of the per-device JVP."""
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    with _axis_env(params):
        jvp_closed, out_nonzero = ad.jvp_jaxpr(call_jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    outs = pmap_p.bind(*primals, *nz_tangents, call_jaxpr=jvp_closed,
                       in_axes=in_axes + tuple(a for a, nz in zip(in_axes, nonzeros) if nz),
                       out_axes=out_axes + tuple(a for a, nz in zip(out_axes, out_nonzero) if nz),
                       **params)
    n = len(out_axes)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else ad.Zero.from_primal_value(p)
                      for p, nz in zip(outs[:n], out_nonzero)]


def _pmap_linearize(trace, primals, tangents, *, call_jaxpr, in_axes, out_axes, **params):
    """Reverse mode: the primal pmap runs now, keeping per-device residuals (mapped on
    axis 0); the linear part is staged as another pmap, which transposes into a third."""
    nonzeros = tuple(type(t) is not ad.Zero for t in tangents)
    with _axis_env(params):
        known, linear, out_nonzero, num_res = ad.linearize_jaxpr(call_jaxpr, nonzeros)
    n = len(out_axes)
    outs = pmap_p.bind(*primals, call_jaxpr=known, in_axes=in_axes,
                       out_axes=out_axes + (0,) * num_res, **params)
    primal_outs, residuals = outs[:n], outs[n:]
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    lin_params = dict(params, call_jaxpr=linear,
                      in_axes=(0,) * num_res + tuple(a for a, nz in zip(in_axes, nonzeros) if nz),
                      out_axes=tuple(a for a, nz in zip(out_axes, out_nonzero) if nz))
    lin_outs = iter(ad.bind_with(trace.tangent_trace, pmap_p, [*residuals, *nz_tangents],
                                 lin_params) if any(out_nonzero) else ())
    return primal_outs, [next(lin_outs) if nz else ad.Zero.from_primal_value(p)
                         for p, nz in zip(primal_outs, out_nonzero)]


def _pmap_transpose(cts, *args, call_jaxpr, in_axes, out_axes, **params):
    """A pmap of the per-device transpose. An unmapped output's cotangent is split evenly
    over the devices (each computes the same output); an unmapped input's cotangent is
    the sum of the devices' ones."""
    linear = tuple(ad.is_undefined_primal(x) for x in args)
    cts_nonzero = tuple(type(ct) is not ad.Zero for ct in cts)
    with _axis_env(params):
        transposed = ad.transpose_jaxpr(call_jaxpr, linear, cts_nonzero)
    size = params["axis_size"]
    ct_args = [ct if ax is not None else lax.div(ct, lax._const(ct, size))
               for ct, ax, nz in zip(cts, out_axes, cts_nonzero) if nz]
    lin_axes = [a for a, lin in zip(in_axes, linear) if lin]
    outs = pmap_p.bind(*[x for x, lin in zip(args, linear) if not lin], *ct_args,
                       call_jaxpr=transposed,
                       in_axes=tuple(a for a, lin in zip(in_axes, linear) if not lin) +
                       tuple(a for a, nz in zip(out_axes, cts_nonzero) if nz),
                       out_axes=tuple(0 if a is None else a for a in lin_axes), **params)
    outs = iter([o if a is not None else lax.reduce_sum(o, (0,)) for o, a in zip(outs, lin_axes)])
    return [next(outs) if lin else None for lin in linear]


def _pmap_lowering(ctx, *operands, call_jaxpr, in_axes, out_axes, axis_name, axis_size,
                   **params):
    """Inside a jit graph, the pmap's values as its named vmap computes them (one device)."""
    closed = pe.trace_to_jaxpr(
        lambda *xs: _as_named_vmap(call_jaxpr, in_axes, out_axes, axis_name, axis_size)(*xs),
        ctx.avals_in)
    b = ctx.builder
    env = {v: lowering._constant(b, c, v.aval)
           for v, c in zip(closed.jaxpr.constvars, closed.consts)}
    env.update(zip(closed.jaxpr.invars, operands))
    lowering._lower_eqns(b, closed.jaxpr, env)
    return [env[v] if type(v) is not core.Literal
            else lowering._constant(b, lowering._literal_value(v), v.aval)
            for v in closed.jaxpr.outvars]


pmap_p.def_abstract_eval(_pmap_abstract_eval)
pmap_p.def_impl(_pmap_impl)
batching.axis_primitive_batchers[pmap_p] = _pmap_batch
ad.primitive_jvps[pmap_p] = _pmap_jvp
ad.primitive_linearizations[pmap_p] = _pmap_linearize
ad.primitive_transposes[pmap_p] = _pmap_transpose
lowering.register_lowering(pmap_p, _pmap_lowering)
