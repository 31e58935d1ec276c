"""pmap and the collectives.

The device count is fixed per process, so the multi-device checks run
tests/multidevice/check_pmap.py in a subprocess for each device count from 1 to 4 (more
devices than the machine has cores must still be correct); the timeout turns a hang into a
failure. The in-process tests run on this process's single device and check the
collectives' vmap rules, which give a pmap's values on one device."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

SCRIPT = os.path.join(os.path.dirname(__file__), "multidevice", "check_pmap.py")
GROUPS = ["mapped", "collectives", "grads", "seeds", "errors", "stress"]


@pytest.mark.parametrize("group", GROUPS)
@pytest.mark.parametrize("num_devices", [1, 2, 3, 4])
def test_pmap_on_devices(num_devices, group):
    env = dict(os.environ, TINYXLA_NUM_CPU_DEVICES=str(num_devices))
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, SCRIPT, group], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith(f"ok {group}"), out.stdout


@pytest.mark.parametrize("how", ["config", "xla_flags"])
def test_device_count_sources_reach_pmap(how):
    code = ("import tinyxla as jax\n"
            + ("jax.config.update('jax_num_cpu_devices', 3)\n" if how == "config" else "")
            + "from tinyxla import lax\nimport numpy as np\n"
            "out = jax.pmap(lambda x: lax.psum(x, 'i'), axis_name='i')(np.arange(3.0))\n"
            "print(jax.device_count(), jax.local_device_count(), jax.process_index(), "
            "jax.process_count(), np.asarray(out).tolist(), sorted(d.id for d in out.devices()))\n")
    env = dict(os.environ)
    env.pop("TINYXLA_NUM_CPU_DEVICES", None)
    env.pop("XLA_FLAGS", None)
    if how == "xla_flags":
        env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3 3 0 1 [3.0, 3.0, 3.0] [0, 1, 2]"


# ---------------------------------------------------------------------------------------
# One device, in process.

def test_pmap_one_device_matches_unmapped():
    x = np.random.RandomState(1).randn(1, 5).astype(np.float32)
    out = jax.pmap(lambda a: jnp.exp(a) + lax.psum(a, "i"), axis_name="i")(x)
    np.testing.assert_allclose(out, np.exp(x) + x, rtol=1e-6)
    assert out.sharding.num_devices == 1 and len(out.addressable_shards) == 1


def test_unbound_axis_name():
    with pytest.raises(NameError, match="unbound axis name: batch"):
        lax.psum(jnp.ones(3), "batch")
    with pytest.raises(NameError, match="unbound axis name: batch"):
        jax.vmap(lambda x: lax.pmean(x, "batch"), axis_name="i")(jnp.ones(3))
    with pytest.raises(NameError, match="unbound axis name: j"):
        jax.jit(lambda x: lax.axis_index("j"))(1.0)


def test_too_many_devices_error():
    with pytest.raises(ValueError, match="compiling computation that requires 2 logical "
                                         "devices, but only 1 XLA devices are available"):
        jax.pmap(lambda x: x)(np.zeros((2, 3)))


X = np.random.RandomState(0).randn(4, 6, 3).astype(np.float32)


@pytest.mark.parametrize("name,f,want", [
    ("psum", lambda a: lax.psum(a, "k"), np.broadcast_to(X.sum(0), X.shape)),
    ("pmean", lambda a: lax.pmean(a, "k"), np.broadcast_to(X.mean(0), X.shape)),
    ("pmax", lambda a: lax.pmax(a, "k"), np.broadcast_to(X.max(0), X.shape)),
    ("pmin", lambda a: lax.pmin(a, "k"), np.broadcast_to(X.min(0), X.shape)),
    ("all_gather", lambda a: lax.all_gather(a, "k", axis=1), np.broadcast_to(
        np.stack(list(X), 1), (4, 6, 4, 3))),
    ("all_gather_tiled", lambda a: lax.all_gather(a, "k", tiled=True), np.broadcast_to(
        X.reshape(24, 3), (4, 24, 3))),
    ("psum_scatter", lambda a: lax.psum_scatter(a[:4], "k"), X.sum(0)[:4]),
    ("psum_scatter_tiled", lambda a: lax.psum_scatter(a[:4], "k", tiled=True),
     X.sum(0)[:4].reshape(4, 1, 3)),
    # a full permutation: JAX's vmap rule asserts one (partial ones work under pmap)
    ("ppermute", lambda a: lax.ppermute(a, "k", [(0, 2), (2, 1), (1, 3), (3, 0)]),
     np.stack([X[3], X[2], X[0], X[1]])),
    ("all_to_all", lambda a: lax.all_to_all(a[:4], "k", 0, 1),
     np.swapaxes(X[:, :4], 0, 1).transpose(0, 2, 1)),
    ("axis_index", lambda a: lax.axis_index("k") + 0 * a[0, 0], np.arange(4)),
])
def test_collectives_under_named_vmap(name, f, want):
    np.testing.assert_allclose(jax.vmap(f, axis_name="k")(X), want, rtol=1e-5, atol=1e-6)
    # The same batching rules run when the collective is staged under jit.
    np.testing.assert_allclose(jax.jit(jax.vmap(f, axis_name="k"))(X), want, rtol=1e-5,
                               atol=1e-6)


def test_collective_over_an_outer_axis_under_inner_vmap():
    f = jax.vmap(jax.vmap(lambda a: lax.psum(a, ("i", "j")) - lax.psum(a, "i"),
                          axis_name="j"), axis_name="i")
    np.testing.assert_allclose(f(X), np.broadcast_to(X.sum((0, 1)), X.shape) -
                               np.broadcast_to(X.sum(0), X.shape), rtol=1e-4, atol=1e-4)


def test_collective_transposes_under_vmap():
    """vmap(grad(f)) transposes the collectives (psum to psum, ppermute to its inverse,
    all_gather to psum_scatter) before batching them; the results match central
    differences of the total over the axis."""
    jax.config.update("jax_enable_x64", True)
    try:
        x = np.random.RandomState(2).randn(3, 4)
        losses = [lambda a: jnp.sum(jnp.sin(lax.psum(a, "k")) * a),
                  lambda a: jnp.sum(lax.ppermute(a, "k", [(0, 1), (1, 2), (2, 0)]) ** 3),
                  lambda a: jnp.sum(jnp.cos(lax.all_gather(a, "k")) * jnp.arange(4.0)),
                  lambda a: jnp.sum(lax.psum_scatter(jnp.outer(jnp.arange(3.0), a), "k") ** 2)]
        for loss in losses:
            g = jax.vmap(jax.grad(loss), axis_name="k")(x)
            total = lambda xs: float(jnp.sum(jax.vmap(loss, axis_name="k")(xs)))
            num = np.zeros_like(x)
            for idx in np.ndindex(*x.shape):
                d = np.zeros_like(x)
                d[idx] = 1e-5
                num[idx] = (total(x + d) - total(x - d)) / 2e-5
            np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-6)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_ppermute_rejects_bad_permutations():
    with pytest.raises(ValueError, match="ppermute sources and destinations must be unique"):
        jax.vmap(lambda a: lax.ppermute(a, "k", [(0, 1), (0, 2)]), axis_name="k")(X)


def test_a_failed_pmap_result_raises_its_own_error_at_the_wait():
    """block_until_ready on an ungathered pmap result re-raises the kernel's error, not
    chained to the AttributeError of the handle lookup that picks the per-shard wait."""
    def boom(v):
        raise ValueError("boom in the callback")

    f = jax.pmap(lambda x: jax.pure_callback(boom, jax.ShapeDtypeStruct(x.shape, x.dtype), x))
    out = f(jnp.ones((1, 3)))
    with pytest.raises(Exception, match="boom in the callback") as info:
        out.block_until_ready()
    assert not isinstance(info.value.__context__, AttributeError)
    assert jnp.add(1.0, 1.0) == 2.0  # the runtime keeps working
