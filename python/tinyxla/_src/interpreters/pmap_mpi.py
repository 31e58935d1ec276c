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
from tinyxla._src import distributed
from tinyxla._src.array import _DTYPES
from tinyxla._src.lax import parallel

_REDUCERS = {parallel.psum_p: "sum", parallel.pmax_p: "max", parallel.pmin_p: "min"}


def _host(h: Any) -> np.ndarray:
    return h.numpy(_DTYPES[h.dtype_code])


def _device_handle(x: np.ndarray, dev: int) -> Any:
    # Zero copy: the runtime keeps the numpy buffer alive through the DLPack owner.
    return _core.from_dlpack(x.__dlpack__(), False, dev)


def run_across_processes(collective: Any, shards: list, envs: list[dict],
                         devs: list[int]) -> None:
    """Runs ``collective`` (an ``interpreters.pmap._Collective``) for the local devices
    ``devs`` given their operand ``shards``, communicating with the other processes."""
    eqn = collective.eqn
    outvar = eqn.outvars[0]
    op = _REDUCERS.get(eqn.primitive)
    if op is not None:
        routed = collective.route(shards, 0, **eqn.params)
        local = collective.combine_for(routed).run(routed, devs[0])[0]
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
