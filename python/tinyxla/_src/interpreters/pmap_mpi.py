"""A pmap collective across processes (``jax.distributed`` over MPI): the pmap axis spans
every process's devices, process ``p``'s local device ``l`` being index ``p * L + l``.

Each cross-process step is a small compiled graph around an ``mpi_collective`` node
(``cpp/src/ops/mpi_collective.cc``), run on this process's device 0 stream: the device
thread starts the MPI call straight from the operand's buffer into the result's and polls
it with a deadline, so the calling Python thread never waits for the other processes and
never touches the data. Every process runs the same steps in the same order on that one
stream, which is the order MPI needs for its collectives; they use a communicator of
their own (``distributed.state.device_comm``), apart from the host-level calls of
``multihost_utils``.

psum, pmax and pmin combine the local devices' values as in one process, then all-reduce
that one array over the processes; consecutive independent reductions of one kind are one
message per dtype (a pmean of a tree of gradients). Dtypes MPI cannot reduce (bool,
float16, bfloat16) are all-gathered and reduced locally. all_gather, ppermute, all_to_all
and psum_scatter all-gather the local shards of every process and run the one-process
routing and combine step for each local device at its global index; axis_index needs no
communication.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import _core
from tinyxla._src import core, distributed
from tinyxla._src.array import _CODE, _DTYPES
from tinyxla._src.interpreters import lowering
from tinyxla._src.lax import parallel
from tinyxla._src.lax.eager import _BINARY_OP, _REDUCE_OP

_REDUCERS = {parallel.psum_p: "sum", parallel.pmax_p: "max", parallel.pmin_p: "min"}
_BINARY = {"sum": "add", "max": "max", "min": "min"}
# The device stream whose thread makes every MPI call of this process (one total order).
MPI_DEVICE = 0


def _reducible(dtype: np.dtype) -> bool:
    return dtype.kind in "iu" or (dtype.kind in "fc" and dtype.itemsize >= 4)


def _collective_attrs(kind: int, dtype: np.dtype, op: str | None) -> dict:
    st = distributed.state
    mpi = st.mpi

    def handle(obj: Any) -> int:  # as a signed 64-bit attribute (mpi4py gives it unsigned)
        h = mpi._handleof(obj)
        return h - (1 << 64) if h >= 1 << 63 else h
    if kind == 0:
        datatype = mpi._typedict[dtype.char]
    else:  # an all-gather only moves bytes: any MPI type of the item's size will do
        datatype = {1: mpi.UINT8_T, 2: mpi.UINT16_T, 4: mpi.UINT32_T, 8: mpi.UINT64_T,
                    16: mpi.C_DOUBLE_COMPLEX}[dtype.itemsize]
    return {"collective": kind, "comm": handle(st.device_comm), "datatype": handle(datatype),
            "reduce_op": handle(getattr(mpi, op.upper())) if op else 0,
            "processes": st.num_processes, "timeout_ms": int(distributed.timeout() * 1000)}


def _gather(b: Any, x: int, shape: list, dtype: np.dtype) -> int:
    """Every process's ``x`` stacked on a new leading axis."""
    return b.op("mpi_collective", _collective_attrs(1, dtype, None), [x])


def _reduce(b: Any, x: int, shape: list, dtype: np.dtype, op: str) -> int:
    """The elementwise reduction of ``x`` over the processes."""
    if _reducible(dtype):
        return b.op("mpi_collective", _collective_attrs(0, dtype, op), [x])
    every = _gather(b, x, shape, dtype)
    return b.reduce(_REDUCE_OP[op], every, [0])


class ReductionGroup:
    """Consecutive, independent psum/pmax/pmin steps of one reduction over the processes,
    one graph: each combines its local shards, the results of a dtype are packed into one
    message, all-reduced, and unpacked."""

    def __init__(self, collectives: list):
        self.collectives = collectives
        self.op = _REDUCERS[collectives[0].eqn.primitive]
        self.exe = None

    def _compile(self, shards: list[list]) -> Any:
        b = _core.GraphBuilder()
        params = [[b.parameter(list(h.shape), h.dtype_code) for h in hs] for hs in shards]
        binary = _BINARY_OP[_BINARY[self.op]]
        locals_ = []
        for c, ps in zip(self.collectives, params):
            acc = ps[0]
            for y in ps[1:]:
                acc = b.binary(binary, acc, y)
            code = _CODE[c.out_aval.dtype]
            if b.dtype_code(acc) != code:
                acc = b.convert(acc, code)
            locals_.append(acc)
        outs: list = [None] * len(locals_)
        by_dtype: dict = {}
        for i, v in enumerate(locals_):
            by_dtype.setdefault(b.dtype_code(v), []).append(i)
        for code, idx in by_dtype.items():
            dtype = np.dtype(_DTYPES[code])
            shapes = [list(b.shape(locals_[i])) for i in idx]
            sizes = [int(np.prod(s)) for s in shapes]
            flat = [b.reshape(locals_[i], [n]) for i, n in zip(idx, sizes)]
            packed = flat[0] if len(flat) == 1 else b.concatenate(flat, 0)
            total = _reduce(b, packed, [sum(sizes)], dtype, self.op)
            start = 0
            for i, n, s in zip(idx, sizes, shapes):
                part = total if len(idx) == 1 else b.slice(total, [start], [start + n])
                outs[i] = b.reshape(part, s)
                start += n
        b.set_outputs(outs)
        return _core.compile(b)

    def run(self, envs: list[dict], devs: list[int]) -> None:
        shards = [_operand_shards(c, envs, devs) for c in self.collectives]
        if self.exe is None:
            self.exe = self._compile(shards)
        totals = self.exe.run([h for hs in shards for h in hs], MPI_DEVICE)
        for c, total in zip(self.collectives, totals):
            for env in envs:
                env[c.eqn.outvars[0]] = total


def _operand_shards(collective: Any, envs: list[dict], devs: list[int]) -> list:
    x = collective.eqn.invars[0]
    if type(x) is core.Literal:
        return [_core.from_numpy(np.asarray(x.val, dtype=x.aval.dtype), _CODE[x.aval.dtype], d)
                for d in devs]
    return [env[x] for env in envs]


def group_reductions(steps: list, collective_type: type) -> list:
    """``steps`` with each reduction over the processes, and each run of consecutive,
    independent reductions of one kind, as a ReductionGroup."""
    out: list = []
    run: list = []

    def flush():
        if run:
            out.append(ReductionGroup(list(run)))
        run.clear()

    for step in steps:
        prim = step.eqn.primitive if type(step) is collective_type else None
        if prim in _REDUCERS:
            produced = {c.eqn.outvars[0] for c in run}
            if run and (prim is not run[0].eqn.primitive or step.eqn.invars[0] in produced):
                flush()
            run.append(step)
            continue
        flush()
        out.append(step)
    flush()
    return out


class _Gather:
    """The graph that stacks the local shards and all-gathers them: [P, L, ...]."""

    def __init__(self, shards: list):
        b = _core.GraphBuilder()
        shape, code = list(shards[0].shape), shards[0].dtype_code
        params = [b.parameter(shape, code) for _ in shards]
        rows = [b.reshape(p, [1, *shape]) for p in params]
        local = rows[0] if len(rows) == 1 else b.concatenate(rows, 0)
        b.set_outputs([_gather(b, local, [len(rows), *shape], np.dtype(_DTYPES[code]))])
        self.exe = _core.compile(b)

    def run(self, shards: list) -> Any:
        return self.exe.run(shards, MPI_DEVICE)[0]


_gathers: dict = {}


def in_process_order(devices: list) -> bool:
    """Whether ``devices`` hold as many devices of every process, process by process (the
    layout the collectives across processes index as process * count + local)."""
    procs = distributed.state.num_processes
    n, rest = divmod(len(devices), procs)
    return not rest and [d.process_index for d in devices] == [
        p for p in range(procs) for _ in range(n)]


def _gathered(shards: list) -> Any:
    """Every process's ``shards`` (one per local device, of one type): [P, L, ...]."""
    key = (tuple(shards[0].shape), shards[0].dtype_code, len(shards),
           id(distributed.state.device_comm), distributed.timeout())
    gather = _gathers.get(key)
    if gather is None:
        gather = _gathers[key] = _Gather(shards)
    return gather.run(shards)


def gather_processes(shards: list) -> Any:
    """Every process's ``shards`` stacked in process order: [P * L, ...] (on the stream of
    device ``MPI_DEVICE``; every process must call it alike)."""
    every = _gathered(shards)
    return _core.reshape(every, [every.shape[0] * every.shape[1], *every.shape[2:]])


def run_across_processes(collective: Any, shards: list, envs: list[dict],
                         devs: list[int]) -> None:
    """Runs ``collective`` (an ``interpreters.pmap._Collective`` other than a reduction)
    for the local devices ``devs`` given their operand ``shards``."""
    eqn = collective.eqn
    me, n = distributed.state.process_id, len(devs)
    if shards:
        every = _gathered(shards)
        shape = list(shards[0].shape)
        rank = len(shape)
        everything = []
        for p in range(distributed.state.num_processes):
            for i in range(n):
                if p == me:
                    everything.append(shards[i])
                    continue
                row = _core.slice(every, [p, i] + [0] * rank, [p + 1, i + 1] + shape,
                                  [1] * (rank + 2))
                everything.append(_core.reshape(row, shape))
    else:
        everything = [None] * (n * distributed.state.num_processes)
    for d, (env, dev) in enumerate(zip(envs, devs)):
        routed = collective.route(everything, me * n + d, **eqn.params)
        env[eqn.outvars[0]] = collective.combine_for(routed).run(routed, dev)[0]
