"""Issue 19, item 3: an error inside an async kernel reaches every dependent result at the
wait, names the op, and the device keeps working afterwards.

Faults are injected with ``_core._arm_fault(op, count)`` (the next ``count`` kernels of ``op``
throw, eager or compiled) and by allocations larger than memory.
"""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, lax
from tinyxla.errors import JaxRuntimeError


@pytest.fixture(autouse=True)
def disarm():
    yield
    _core._arm_fault("", 0)


def _works_afterwards():
    v = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = jnp.asarray(v)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda x: jnp.tanh(x) @ x.T)(x)),
                               np.tanh(v) @ v.T, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x + 1), v + 1)


def test_an_eager_kernel_fault_reaches_every_dependent_result():
    a = jnp.ones((256, 256))
    _core._arm_fault("dot_general", 1)
    b = a @ a                    # fails on the device stream
    c = b + 1.0                  # dispatched before the failure is known
    d = jnp.sum(c * 2.0)
    e = a * 3.0                  # does not depend on the failure
    for r in (b, c, d):
        with pytest.raises(JaxRuntimeError, match=r"\[dot_general\] injected fault"):
            r.block_until_ready()
    np.testing.assert_array_equal(np.asarray(e), np.full((256, 256), 3.0))
    _works_afterwards()


def test_a_compiled_kernel_fault_reaches_every_dependent_result():
    f = jax.jit(lambda x: (x @ x, jnp.sin(x) @ x))
    x = jnp.ones((64, 64))
    f(x)  # compiled once, unarmed
    _core._arm_fault("dot_general", 1)
    y, z = f(x)
    w = y + z
    for r in (y, z, w):
        with pytest.raises(JaxRuntimeError, match="injected fault"):
            np.asarray(r)
    y, z = f(x)  # the same executable runs again
    np.testing.assert_allclose(np.asarray(y), np.full((64, 64), 64.0))
    _works_afterwards()


def test_a_fault_in_a_loop_body_surfaces_at_the_wait():
    f = jax.jit(lambda x: lax.fori_loop(0, 100, lambda i, c: c @ x, x))
    x = jnp.eye(8) * 0.5
    np.testing.assert_allclose(np.asarray(f(x)), np.eye(8) * 0.5 ** 101)
    _core._arm_fault("dot_general", 1)
    with pytest.raises(JaxRuntimeError, match="injected fault"):
        f(x).block_until_ready()
    np.testing.assert_allclose(np.asarray(f(x)), np.eye(8) * 0.5 ** 101)
    _works_afterwards()


def test_a_fault_in_a_lapack_kernel_surfaces_at_the_wait():
    a = jnp.eye(4) * 2.0
    _core._arm_fault("cholesky", 1)
    l = jnp.linalg.cholesky(a)
    with pytest.raises(JaxRuntimeError, match=r"\[cholesky\] injected fault"):
        (l @ l.T).block_until_ready()
    np.testing.assert_allclose(np.asarray(jnp.linalg.cholesky(a)), np.eye(4) * np.sqrt(2.0))


def test_an_allocation_failure_in_a_compiled_graph_names_the_op():
    # The cumulative sum's 256 TiB temporary fails inside the device task, after dispatch.
    f = jax.jit(lambda x: jnp.cumsum(jnp.broadcast_to(x, (2 ** 26, 2 ** 20)), axis=0)[0, :4])
    out = f(jnp.ones(2 ** 20))
    dependent = out * 2.0
    for r in (out, dependent):
        with pytest.raises(MemoryError, match=r"RESOURCE_EXHAUSTED.*while running cumulative"):
            r.block_until_ready()
    with pytest.raises(JaxRuntimeError):  # ResourceExhaustedError is both
        out.block_until_ready()
    _works_afterwards()


def test_faults_on_many_devices_and_threads_leave_each_device_usable():
    import threading
    n = jax.local_device_count()
    errors, results = [], []

    def work(i):
        try:
            x = jax.device_put(jnp.ones((32, 32)), jax.devices()[i % n])
            y = x @ x
            y.block_until_ready()
            results.append(float(y[0, 0]))
        except JaxRuntimeError as e:
            errors.append(str(e))

    _core._arm_fault("dot_general", 4)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 4 and all("injected fault" in e for e in errors)
    assert results == [32.0] * 12
    for d in jax.devices():
        x = jax.device_put(jnp.ones((4, 4)), d)
        assert float((x @ x)[0, 0]) == 4.0
