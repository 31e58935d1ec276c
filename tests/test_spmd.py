"""Sharded jit over two mesh axes and shardings propagated through plain jit and eager
operations: tests/multidevice/check_spmd.py in a subprocess per device count (1, 2 and 4
devices: meshes (1, 1), (2, 1), (2, 2)); its expected shardings are JAX 0.10.2's (the
script runs unchanged under JAX)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "multidevice", "check_spmd.py")


@pytest.mark.parametrize("group", ["jit2d", "propagate"])
@pytest.mark.parametrize("num_devices", [1, 2, 4])
def test_spmd_on_devices(num_devices, group):
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES=str(num_devices))
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, SCRIPT, group], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith(f"ok {group}"), out.stdout
