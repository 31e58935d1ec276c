"""Leaks and growth: the resident set stays flat over 10^5 eager ops, 10^5 cached jit calls
and 10^4 grad calls, and the bound on compiled executables (``executable_budget``, LRU by
entries and bytes, set with ``tinyxla_executable_cache_max_entries`` / ``..._max_bytes``)
keeps many distinct jitted functions from holding every compiled graph."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla._src.interpreters import executable_budget

# Allowed growth: allocator and interpreter noise, not a per-call leak (10^5 calls leaking
# even 40 bytes each would exceed it).
SLACK_MIB = 4.0


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _growth(run, n: int) -> float:
    """RSS growth over ``run(n)`` after a warm-up of ``run(n // 10)``."""
    run(n // 10)
    gc.collect()
    before = _rss_mib()
    run(n)
    gc.collect()
    after = _rss_mib()
    print(f"RSS {before:.1f} -> {after:.1f} MiB over {n} calls")
    return after - before


X = jnp.linspace(0.0, 1.0, 100)


def test_eager_ops_do_not_grow():
    def run(n):
        for _ in range(n // 2):  # two ops per iteration
            y = X * 2.0 + 1.0
        np.testing.assert_allclose(np.asarray(y), np.asarray(X) * 2 + 1, rtol=1e-6)
    assert _growth(run, 100_000) < SLACK_MIB


def test_cached_jit_calls_do_not_grow():
    f = jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0)

    def run(n):
        for _ in range(n):
            y = f(X)
        np.testing.assert_allclose(np.asarray(y), np.sin(np.asarray(X)) * 2 + 1, rtol=1e-6)
    assert _growth(run, 100_000) < SLACK_MIB


def test_grad_calls_do_not_grow():
    g = jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2))

    def run(n):
        for _ in range(n):
            y = g(X)
        np.testing.assert_allclose(np.asarray(y), np.sin(2 * np.asarray(X)), rtol=1e-5, atol=1e-6)
    assert _growth(run, 10_000) < SLACK_MIB


@pytest.fixture
def budget():
    old = (jax.config.tinyxla_executable_cache_max_entries,
           jax.config.tinyxla_executable_cache_max_bytes)
    yield
    jax.config.update("tinyxla_executable_cache_max_entries", old[0])
    jax.config.update("tinyxla_executable_cache_max_bytes", old[1])


def test_executables_are_bounded_by_entries(budget):
    jax.config.update("tinyxla_executable_cache_max_entries", 64)
    kept = [jax.jit(lambda x, i=i: x * i + 1.0) for i in range(300)]
    evictions = executable_budget.stats()["evictions"]
    for i, f in enumerate(kept):
        np.testing.assert_allclose(np.asarray(f(X)), np.asarray(X) * i + 1, rtol=1e-6)
    stats = executable_budget.stats()
    assert stats["entries"] <= 64 and stats["evictions"] - evictions >= 300 - 64
    # A released executable compiles again on its next call, with the same answer.
    for i, f in enumerate(kept[:5]):
        np.testing.assert_allclose(np.asarray(f(X)), np.asarray(X) * i + 1, rtol=1e-6)
    assert executable_budget.stats()["entries"] <= 64


def test_executables_are_bounded_by_bytes(budget):
    jax.config.update("tinyxla_executable_cache_max_bytes", 1 << 20)
    big = np.arange(32768, dtype=np.float32)  # a 128 KiB constant in each executable
    kept = [jax.jit(lambda x, i=i: x + jnp.asarray(big) * i) for i in range(20)]
    for i, f in enumerate(kept):
        np.testing.assert_allclose(np.asarray(f(jnp.zeros(32768))), big * i, rtol=1e-6)
    assert executable_budget.stats()["bytes"] <= 1 << 20


def test_recently_used_executables_are_kept(budget):
    jax.config.update("tinyxla_executable_cache_max_entries", 8)
    hot = jax.jit(lambda x: x - 3.0)
    hot(X)
    hot_exe = hot.lower(X).compile()._executable
    for i in range(40):
        jax.jit(lambda x, i=i: x * i)(X)
        hot(X)  # used between every two compilations: the sweep spares it
    assert type(hot_exe.executable).__name__ != "_Released"


def test_many_distinct_functions_stay_bounded(budget):
    jax.config.update("tinyxla_executable_cache_max_entries", 128)

    def run(n):
        for i in range(n):
            jax.jit(lambda x, i=i: x * i + 2.0)(X).block_until_ready()
    # Functions that die take their traces along; the executables stay within the bound.
    assert _growth(run, 2_000) < SLACK_MIB
    assert executable_budget.stats()["entries"] <= 128


def test_pmap_plans_release_their_executables(budget):
    # A pmap plan's segments hold no compiled graph of their own: once the budget releases
    # one, the memory goes, and the next call compiles it again.
    jax.config.update("tinyxla_executable_cache_max_entries", 4)
    n = jax.local_device_count()
    x = jnp.arange(n * 3.0).reshape(n, 3)
    funs = [jax.pmap(lambda v, i=i: jnp.sin(v) * i + 1.0) for i in range(12)]
    for f in funs:
        f(x).block_until_ready()
    assert executable_budget.stats()["entries"] <= 4
    segments = [step for f in funs for plan, _ in f._pmapped.plans.values()
                for step in plan.steps if type(step).__name__ == "_Segment"]
    assert len(segments) == 12
    released = [s for s in segments if type(s.exe.executable).__name__ == "_Released"]
    assert len(released) >= 8
    np.testing.assert_allclose(np.asarray(funs[0](x)), np.sin(np.asarray(x)) * 0 + 1.0)
    np.testing.assert_allclose(np.asarray(funs[1](x)), np.sin(np.asarray(x)) + 1.0, rtol=1e-6)


def test_budget_options_read_the_environment():
    program = ("import tinyxla as jax; c = jax.config; "
               "print(c.tinyxla_executable_cache_max_entries, c.tinyxla_executable_cache_max_bytes)")
    env = dict(os.environ, TINYXLA_EXECUTABLE_CACHE_MAX_ENTRIES="17",
               TINYXLA_EXECUTABLE_CACHE_MAX_BYTES="123456")
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["17", "123456"]
