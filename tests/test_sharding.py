"""jax.sharding, device_put with shardings, shard_map and sharded jit.

The device count is fixed per process, so the checks run tests/multidevice/check_sharding.py
in a subprocess for 1, 2 and 4 devices (meshes (1, 1), (2, 1), (2, 2)); that script runs
unchanged under JAX 0.10.2, which is where its pinned texts and layouts come from. The
in-process tests use this process's single device."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.sharding import Mesh, NamedSharding, PartitionSpec as P

HERE = os.path.join(os.path.dirname(__file__), "multidevice")
SCRIPT = os.path.join(HERE, "check_sharding.py")
GROUPS = ["api", "put", "shard_map", "errors"]


def _run_on_devices(script: str, num_devices: int, group: str) -> None:
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES=str(num_devices))
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, script, group], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith(f"ok {group}"), out.stdout


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("num_devices", [1, 2, 4])
def test_sharding_on_devices(num_devices, group):
    _run_on_devices(SCRIPT, num_devices, group)


@pytest.mark.parametrize("group", ["jit2d", "propagate"])
@pytest.mark.parametrize("num_devices", [1, 2, 4])
def test_spmd_on_devices(num_devices, group):
    """Sharded jit over two mesh axes, shardings propagated through plain jit and eager
    operations (tests/multidevice/check_spmd.py; its shardings are JAX 0.10.2's)."""
    _run_on_devices(os.path.join(HERE, "check_spmd.py"), num_devices, group)


@pytest.mark.parametrize("num_devices", [2, 4])
def test_sharded_jit_on_devices(num_devices):
    test_sharding_on_devices(num_devices, "jit")


def _mesh():
    return Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("x", "y"))


def test_single_device_sharding_of_plain_arrays():
    x = jnp.arange(4.0)
    assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    assert isinstance(x.sharding, jax.sharding.Sharding)
    assert x.is_fully_replicated and x.is_fully_addressable
    (shard,) = x.addressable_shards
    assert shard.index == (slice(None),) and shard.replica_id == 0


def test_partition_spec_is_not_a_tuple():
    assert P("x") != ("x",)
    assert P(["x", "y"]) == P(("x", "y"))
    assert len(P("x", None)) == 2 and P(None, "x")[1] == "x"


def test_device_put_tree_of_shardings_and_values():
    s = NamedSharding(_mesh(), P("x"))
    out = jax.device_put({"a": np.ones(2), "b": np.zeros(3)}, s)
    assert out["a"].sharding == s and out["b"].sharding == s
    np.testing.assert_array_equal(out["b"], np.zeros(3))


def test_shard_map_under_jit_traces_once():
    calls = []

    def body(a):
        calls.append(1)
        return lax.psum(a, "x") * 2

    f = jax.jit(jax.shard_map(body, mesh=_mesh(), in_specs=P("x"), out_specs=P()))
    np.testing.assert_allclose(f(jnp.arange(3.0)), np.arange(3.0) * 2)
    f(jnp.arange(3.0) + 1)
    assert len(calls) == 1


def test_shard_map_with_current_mesh_and_decorator():
    with jax.set_mesh(_mesh()):
        @jax.shard_map(in_specs=P("x"), out_specs=P("x"))
        def f(a):
            return a + lax.axis_index("x")
        np.testing.assert_allclose(f(jnp.arange(3.0)), np.arange(3.0))


def test_shard_map_without_mesh_is_an_error():
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        jax.shard_map(lambda a: a, in_specs=P(), out_specs=P())(jnp.ones(2))


def test_make_mesh_needs_enough_devices():
    with pytest.raises(ValueError, match="Number of devices 1 must be >= the product of "
                                         r"mesh_shape \(2,\)"):
        jax.make_mesh((2,), ("x",))


def test_with_sharding_constraint_under_grad_vmap_and_eager():
    s = NamedSharding(_mesh(), P("x"))
    x = jnp.arange(3.0)
    out = lax.with_sharding_constraint(x * 2, s)
    assert out.sharding == s
    np.testing.assert_allclose(out, np.arange(3.0) * 2)
    g = jax.grad(lambda a: jnp.sum(lax.with_sharding_constraint(a ** 2, s)))(x)
    np.testing.assert_allclose(g, 2 * np.arange(3.0))
    v = jax.vmap(lambda a: lax.with_sharding_constraint(a + 1, s))(jnp.ones((2, 3)))
    np.testing.assert_allclose(v, np.full((2, 3), 2.0))


def test_jit_out_shardings_tree_and_decorator():
    s = NamedSharding(_mesh(), P("x"))
    r = NamedSharding(_mesh(), P())

    @jax.jit(out_shardings=(s, r))
    def f(a):
        return a + 1, jnp.sum(a)
    a, b = f(jnp.arange(4.0))
    assert a.sharding == s and b.sharding == r
    np.testing.assert_allclose(b, 6.0)
