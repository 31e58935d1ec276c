"""Asynchronous dispatch: ops return futures, waits surface kernel errors, the runtime recovers."""
import threading
import time

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax


def test_matmul_dispatch_does_not_wait():
    n = 2000
    a = jax.device_put(np.ones((n, n), np.float32))
    b = jax.device_put(np.full((n, n), 0.5, np.float32))
    dispatch, total = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        c = a @ b
        t1 = time.perf_counter()
        assert c.block_until_ready() is c
        t2 = time.perf_counter()
        dispatch.append(t1 - t0)
        total.append(t2 - t0)
    # An n^3 matmul takes far longer than handing it to the device's stream.
    assert min(dispatch) < 0.25 * min(total), (dispatch, total)
    np.testing.assert_array_equal(np.asarray(c[:2, :3]), np.full((2, 3), n * 0.5))


def test_results_of_dependent_chains():
    x = jax.device_put(np.zeros(1000, np.float32))
    for _ in range(200):
        x = x + 1.0
    y = lax.reduce_sum(x * 2.0, (0,))
    assert float(y) == 400000.0
    assert jax.block_until_ready([x, y])[1] is y


def test_allocation_failure_surfaces_as_memory_error():
    # 1 TiB cannot be allocated: the error is raised (at dispatch or at the wait) as a
    # MemoryError, and later work is unaffected.
    with pytest.raises(MemoryError):
        huge = lax.full((2**40,), 1, np.int8)
        (huge + np.int8(1)).block_until_ready()
    with pytest.raises(MemoryError):
        (jnp.zeros((2**40,), jnp.int8) * 2).block_until_ready()
    assert issubclass(jax._core.ResourceExhaustedError, MemoryError)
    np.testing.assert_array_equal(jnp.arange(4) + 1, [1, 2, 3, 4])


def test_concurrent_dispatch_from_threads():
    results = {}

    def work(i):
        x = jax.device_put(np.full(10_000, float(i), np.float32))
        for _ in range(20):
            x = x * 1.0 + 1.0
        results[i] = float(lax.reduce_max(x, (0,)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: i + 20.0 for i in range(4)}


def test_reading_values_waits():
    a = jax.device_put(np.ones((500, 500), np.float32))
    c = a @ a
    assert float(c[0, 0]) == 500.0  # float() waits
    np.testing.assert_array_equal(np.asarray(c)[1, :2], [500, 500])
    assert c.is_ready()
