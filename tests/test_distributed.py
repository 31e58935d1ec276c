"""Several processes over MPI: tests/multidevice/check_mpi.py started by ``mpiexec -n P``
from the ``mpich`` wheel (the ``tinyxla[mpi]`` extra, which scripts/test.sh installs), with
a timeout so that a hang is a failure. Without the extra, only the one-process tests run.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import tinyxla as jax
from tinyxla.experimental import multihost_utils

SCRIPT = os.path.join(os.path.dirname(__file__), "multidevice", "check_mpi.py")
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
needs_mpi = pytest.mark.skipif(not os.path.exists(MPIEXEC),
                               reason="the MPI extra is not installed: pip install tinyxla[mpi]")


def _run(group: str, procs: int, local: int, timeout: float = 240, **env_extra):
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES=str(local), **env_extra)
    env.pop("XLA_FLAGS", None)
    cmd = ([MPIEXEC, "-n", str(procs)] if procs else []) + [sys.executable, SCRIPT, group]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


@needs_mpi
@pytest.mark.parametrize("group", ["basics", "collectives", "spmd"])
@pytest.mark.parametrize("procs,local", [(2, 1), (2, 2), (3, 1)])
def test_processes(group, procs, local):
    out = _run(group, procs, local)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in range(procs):
        assert f"ok {group} {rank}" in out.stdout, out.stdout


def _same_over_processes_as_in_one(group: str, pattern: str, count: int) -> None:
    """The lines ``pattern`` finds in ``group``'s output over 2 processes x 1 device equal
    those of one process with 2 devices (the processes' lines may interleave)."""
    multi = _run(group, 2, 1)
    assert multi.returncode == 0, multi.stdout + multi.stderr
    single = _run(group, 0, 2)
    assert single.returncode == 0, single.stdout + single.stderr
    found = re.findall(pattern, multi.stdout)
    assert len(found) == count and found == re.findall(pattern, single.stdout), (
        multi.stdout, single.stdout)


@needs_mpi
def test_training_step_over_processes_equals_one_process_bit_for_bit():
    _same_over_processes_as_in_one("train", r"params [0-9a-f]{64}", 1)


@needs_mpi
def test_sharded_jit_training_step_over_processes_equals_one_process_bit_for_bit():
    _same_over_processes_as_in_one("sharded_train", r"params [0-9a-f]{64}", 1)


@needs_mpi
def test_seed_004_distributed_training_over_processes():
    _same_over_processes_as_in_one("seed", r"step \d+ loss [0-9a-f]+", 6)


@needs_mpi
def test_a_process_that_leaves_makes_the_others_fail_in_bounded_time(tmp_path):
    # The survivor's uncaught error aborts the job (MPI_Abort), and mpiexec may exit before
    # passing on its stderr (empty or cut short in about 1 run of 5): the error is read from
    # the file the survivor writes before it aborts. A hang is the timeout's failure.
    start = time.monotonic()
    out = _run("early_exit", 2, 1, timeout=120, TINYXLA_MPI_TIMEOUT="5",
               CHECK_MPI_ERRORS=str(tmp_path))
    assert time.monotonic() - start < 100
    assert out.returncode != 0, out.stdout + out.stderr
    error = tmp_path / "rank0.txt"
    assert error.exists(), out.stdout + out.stderr
    assert error.read_text() == (
        "JaxRuntimeError: [mpi_collective] no answer from the other processes within 5 s "
        "(TINYXLA_MPI_TIMEOUT); a process may have exited\n"), out.stdout + out.stderr


def test_one_process_without_initialize():
    assert jax.process_count() == 1 and jax.process_index() == 0
    assert jax.process_indices() == [0]
    assert jax.local_devices() == jax.devices()
    assert not jax.distributed.is_initialized()
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(multihost_utils.process_allgather(x), x[None])
    np.testing.assert_array_equal(multihost_utils.process_allgather(x, tiled=True), x)
    np.testing.assert_array_equal(multihost_utils.broadcast_one_to_all(x), x)
    multihost_utils.sync_global_devices("one")


def test_initialize_after_the_devices_are_listed_is_jax_error():
    jax.devices()
    with pytest.raises(RuntimeError, match=r"jax.distributed.initialize\(\) must be called "
                                           "before any JAX calls that might initialise"):
        jax.distributed.initialize()
