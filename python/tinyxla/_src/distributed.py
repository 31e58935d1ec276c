"""Several processes running one program over MPI: ``jax.distributed.initialize``,
``shutdown`` and the state the device functions read (``process_index``,
``process_count``).

The transport is MPI through mpi4py (the optional ``tinyxla[mpi]`` extra, which brings the
``mpich`` runtime and its ``mpiexec``); processes are started by ``mpiexec -n N``. Each
process keeps its own host-thread devices; the global device list is every process's
local devices, process ``p``'s device ``i`` having id ``p * L + i`` (L local devices each).

Collectives inside computations (pmap, shard_map, sharded jit) run on a device stream
(``interpreters/pmap_mpi.py``): the core calls the MPI library's functions, whose
addresses are found here, on a communicator of their own. The host-level calls below serve
``multihost_utils``. Every MPI call, there and here, is a non-blocking request waited for
with a bounded timeout (``TINYXLA_MPI_TIMEOUT`` seconds, default 300), so a process that
died makes the others raise instead of hang; an uncaught exception aborts the whole job (as ``python -m
mpi4py`` does), so the others stop at once.
"""
from __future__ import annotations

import ctypes
import os
import sys
import time
from typing import Any

import numpy as np

from tinyxla import _core

_ONCE = "distributed.initialize should only be called once."


class _State:
    comm: Any = None  # the MPI communicator of the job once initialized
    device_comm: Any = None  # its duplicate for the collectives on the device stream
    mpi: Any = None  # the mpi4py.MPI module
    process_id = 0
    num_processes = 1
    devices_listed = False  # set when the device list is made (it is then fixed)


state = _State()


def is_initialized() -> bool:
    """Whether ``initialize`` has run (``jax.distributed.is_initialized``)."""
    return state.comm is not None


def _mpi_module() -> Any:
    try:
        from mpi4py import MPI  # the optional dependency, loaded only when asked for
    except ImportError as e:
        raise RuntimeError("jax.distributed.initialize needs mpi4py and an MPI runtime: "
                           "pip install 'tinyxla[mpi]' and start the processes with "
                           "mpiexec -n N") from e
    return MPI


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Any = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300, **kwargs: Any) -> None:
    """Joins this process to the MPI job (``jax.distributed.initialize``).

    The rank and size come from MPI (``mpiexec`` sets them); ``num_processes`` and
    ``process_id``, when given, must agree with them. ``coordinator_address`` is
    accepted and unused: MPI is the coordinator. Must run before any computation, as in
    JAX, since the device list becomes global.
    """
    if state.comm is not None:
        raise RuntimeError(_ONCE)
    if state.devices_listed:
        raise RuntimeError("jax.distributed.initialize() must be called before any JAX calls "
                           "that might initialise the XLA backend. This includes any "
                           "computation, but also calls to jax.devices, jax.device_put, and "
                           "others.")
    mpi = _mpi_module()
    if mpi.Query_thread() != mpi.THREAD_MULTIPLE:
        # Device threads make their collectives' MPI calls while Python makes its own.
        raise RuntimeError("jax.distributed.initialize needs MPI initialized with "
                           "MPI_THREAD_MULTIPLE (mpi4py's default thread_level 'multiple')")
    comm = mpi.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if num_processes is not None and num_processes != size:
        raise ValueError(f"jax.distributed.initialize: num_processes={num_processes} but the "
                         f"MPI job has {size} processes")
    if process_id is not None and process_id != rank:
        raise ValueError(f"jax.distributed.initialize: process_id={process_id} but this "
                         f"process's MPI rank is {rank}")
    state.mpi, state.comm = mpi, comm
    state.process_id, state.num_processes = rank, size
    state.device_comm = comm.Dup()
    _core.set_mpi_functions(*_mpi_functions())
    if size > 1:
        _abort_on_uncaught_exception(comm)


def shutdown() -> None:
    """Leaves the job (``jax.distributed.shutdown``): waits for every process, then
    forgets the MPI state; MPI itself finalizes at exit."""
    if state.comm is None:
        return
    barrier()
    state.comm = state.mpi = state.device_comm = None
    state.process_id, state.num_processes = 0, 1


def _abort_on_uncaught_exception(comm: Any) -> None:
    previous = sys.excepthook

    def hook(*exc: Any) -> None:
        previous(*exc)
        sys.stderr.flush()
        comm.Abort(1)

    sys.excepthook = hook


def _mpi_functions() -> list[int]:
    """The addresses of MPI_Iallreduce, MPI_Iallgather and MPI_Test in the MPI library
    that mpi4py loaded (so that the handles mpi4py gives are the ones they take)."""
    names = ("MPI_Iallreduce", "MPI_Iallgather", "MPI_Test")
    paths = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libmpi") and path not in paths:
                paths.append(path)
    for path in paths + [None]:
        try:
            lib = (ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW) if path
                   else ctypes.CDLL(None))
            return [ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in names]
        except (OSError, AttributeError):
            continue
    raise RuntimeError("jax.distributed.initialize: the MPI library that mpi4py loaded was not "
                       "found in this process")


def timeout() -> float:
    return float(os.environ.get("TINYXLA_MPI_TIMEOUT", "300"))


def wait(request: Any, what: str) -> None:
    """Waits for an MPI request, raising after the timeout instead of hanging when a
    peer process is gone."""
    deadline = time.monotonic() + timeout()
    spins, nap = 0, 2e-5
    while not request.Test():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: no answer from the other processes within "
                               f"{timeout():.0f} s (TINYXLA_MPI_TIMEOUT); a process may "
                               "have exited")
        spins += 1
        if spins > 200:  # then back off: a spinning waiter takes the cores its peers need
            time.sleep(nap)
            nap = min(nap * 2, 1e-4)


_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN"}


def allreduce(x: np.ndarray, op: str) -> np.ndarray:
    """The elementwise reduction of ``x`` over the processes (an MPI Iallreduce straight
    from and into numpy buffers, no pickling)."""
    out = np.empty_like(x)
    req = state.comm.Iallreduce(np.require(x, requirements="C"), out,
                                op=getattr(state.mpi, _OPS[op]))
    wait(req, f"all-reduce ({op})")
    return out


def allgather(x: np.ndarray) -> np.ndarray:
    """Every process's ``x`` stacked along a new leading axis (MPI Iallgather)."""
    x = np.require(x, requirements="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    out = np.empty((state.num_processes, *x.shape), x.dtype)
    wait(state.comm.Iallgather(x, out), "all-gather")
    return out


def broadcast(x: np.ndarray, root: int) -> np.ndarray:
    """Process ``root``'s ``x`` on every process (MPI Ibcast)."""
    buf = np.array(x, copy=True, order="C")
    wait(state.comm.Ibcast(buf, root=root), "broadcast")
    return buf


def barrier() -> None:
    wait(state.comm.Ibarrier(), "barrier")
