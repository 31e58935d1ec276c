"""A pmap collective across processes (``jax.distributed`` over MPI): the pmap axis spans
every process's devices, process ``p``'s local device ``l`` being index ``p * L + l``.

psum, pmax and pmin combine the local devices' values as in one process, then reduce
that one array over the processes with an MPI all-reduce straight from its buffer. The
other collectives (all_gather, ppermute, all_to_all, psum_scatter, axis_index) fetch every
process's shards with an MPI all-gather and run the one-process routing and combine step
for each local device at its global index.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import _core
from tinyxla._src import core, distributed
from tinyxla._src.array import _CODE, _DTYPES
from tinyxla._src.lax import parallel

_REDUCERS = {parallel.psum_p: "sum", parallel.pmax_p: "max", parallel.pmin_p: "min"}


def _host(h: Any) -> np.ndarray:
    return h.numpy(_DTYPES[h.dtype_code])


def _device_handle(x: np.ndarray, dev: int) -> Any:
    # Zero copy: the runtime keeps the numpy buffer alive through the DLPack owner.
    return _core.from_dlpack(x.__dlpack__(), False, dev)


class ReductionGroup:
    """Consecutive, independent psum/pmax/pmin steps of one reduction: one MPI all-reduce
    of their local results packed into one buffer per dtype (a pmean of a tree of
    gradients is one message, not one per leaf)."""

    def __init__(self, collectives: list):
        self.collectives = collectives

    def run(self, envs: list[dict], devs: list[int]) -> None:
        locals_ = []
        for c in self.collectives:
            x = c.eqn.invars[0]
            shards = [env[x] for env in envs]
            locals_.append(_local_result(c, shards, devs))
        op = _REDUCERS[self.collectives[0].eqn.primitive]
        by_dtype: dict = {}
        for i, h in enumerate(locals_):
            by_dtype.setdefault(h.dtype_code, []).append(i)
        for code, idx in by_dtype.items():
            hosts = [_host(locals_[i]) for i in idx]
            flat = distributed.allreduce(np.concatenate([h.ravel() for h in hosts]), op)
            start = 0
            for i, h in zip(idx, hosts):
                part = flat[start:start + h.size].reshape(h.shape)
                start += h.size
                total = _device_handle(part, devs[0])
                outvar = self.collectives[i].eqn.outvars[0]
                for env in envs:
                    env[outvar] = total


def group_reductions(steps: list, collective_type: type) -> list:
    """``steps`` with each run of consecutive, independent reductions of one kind over the
    processes merged into a ReductionGroup."""
    out: list = []
    run: list = []

    def flush():
        if len(run) > 1:
            out.append(ReductionGroup(list(run)))
        else:
            out.extend(run)
        run.clear()

    for step in steps:
        prim = step.eqn.primitive if type(step) is collective_type else None
        if prim in _REDUCERS and type(step.eqn.invars[0]) is not core.Literal:
            produced = {c.eqn.outvars[0] for c in run}
            if run and (prim is not run[0].eqn.primitive or step.eqn.invars[0] in produced):
                flush()
            run.append(step)
            continue
        flush()
        out.append(step)
    flush()
    return out


def _local_result(collective: Any, shards: list, devs: list[int]) -> Any:
    """The reduction of this process's shards (one handle)."""
    eqn = collective.eqn
    if len(shards) == 1 and shards[0].dtype_code == _CODE[eqn.outvars[0].aval.dtype]:
        return shards[0]  # one local device: nothing to combine before MPI
    routed = collective.route(shards, 0, **eqn.params)
    return collective.combine_for(routed).run(routed, devs[0])[0]


def run_across_processes(collective: Any, shards: list, envs: list[dict],
                         devs: list[int]) -> None:
    """Runs ``collective`` (an ``interpreters.pmap._Collective``) for the local devices
    ``devs`` given their operand ``shards``, communicating with the other processes."""
    eqn = collective.eqn
    outvar = eqn.outvars[0]
    op = _REDUCERS.get(eqn.primitive)
    if op is not None:
        local = _local_result(collective, shards, devs)
        total = _device_handle(distributed.allreduce(_host(local), op), devs[0])
        for env in envs:
            env[outvar] = total
        return
    me, n = distributed.state.process_id, len(devs)
    if shards:
        local = np.stack([_host(s) for s in shards])
        every = distributed.allgather(local)
        everything = [_device_handle(np.ascontiguousarray(every[p, i]), devs[i])
                      for p in range(every.shape[0]) for i in range(n)]
        everything[me * n:(me + 1) * n] = shards
    else:
        everything = [None] * (n * distributed.state.num_processes)
    for d, (env, dev) in enumerate(zip(envs, devs)):
        routed = collective.route(everything, me * n + d, **eqn.params)
        env[outvar] = collective.combine_for(routed).run(routed, dev)[0]
