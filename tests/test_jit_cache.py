"""jit's cache keyed as JAX keys it: by the function (weakly held) and the options that
change tracing, shared by every ``jit`` wrapper; ``clear_cache``, ``jax.clear_caches``,
``_cache_size``. Trace counts pinned from JAX 0.10.2."""
import functools
import gc
import weakref

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla._src.interpreters import caches


def test_seed_004_side_effect_count():
    # JAX 0.10.2: len(log) == 1, j._cache_size() == 1
    log = []

    def f():
        log.append(1)

    jax.jit(f)()
    j = jax.jit(f)
    j()
    j()
    assert len(log) == 1
    assert j._cache_size() == 1


def test_wrappers_share_traces_across_options_that_trace_alike():
    # JAX 0.10.2: eval_shape, jit, jit(static_argnums=()), jit(donate_argnums=0) of the
    # same function trace once between them.
    log = []

    def g(x):
        log.append(1)
        return x * 2

    jax.eval_shape(g, 1.0)
    np.testing.assert_allclose(jax.jit(g)(1.0), 2.0)
    jax.jit(g, static_argnums=())(1.0)
    jax.jit(g, donate_argnums=0)(1.0)
    assert len(log) == 1
    assert jax.jit(g)._cache_size() == 1


def test_static_arguments_are_part_of_the_key():
    log = []

    def g(x, n):
        log.append(n if isinstance(n, int) else "traced")
        return x * n

    a = jax.jit(g, static_argnums=1)
    b = jax.jit(g, static_argnums=1)
    assert float(a(2.0, 3)) == 6.0
    assert float(b(2.0, 3)) == 6.0
    assert float(b(2.0, 4)) == 8.0
    assert log == [3, 4]
    assert a._cache_size() == 2
    # Without static_argnums the same function is traced afresh (a different key).
    assert float(jax.jit(g)(2.0, 5)) == 10.0
    assert log == [3, 4, "traced"]


def test_clear_cache_and_clear_caches_retrace():
    # JAX 0.10.2: after jit(g).clear_cache() the size is 0 and the next call traces;
    # jax.clear_caches() likewise; lower() reuses the trace and the call after it too.
    log = []

    def g(x):
        log.append(1)
        return x + 1

    jax.jit(g)(1.0)
    jax.jit(g).clear_cache()
    assert jax.jit(g)._cache_size() == 0
    jax.jit(g)(1.0)
    assert len(log) == 2
    jax.clear_caches()
    jax.jit(g)(1.0)
    assert len(log) == 3
    h = jax.jit(g)
    h.lower(2.0)
    h(2.0)
    assert len(log) == 3
    assert h._cache_size() == 1


def test_new_signature_traces_again():
    log = []

    def g(x):
        log.append(x.shape)
        return x.sum()

    jax.jit(g)(jnp.ones(3))
    jax.jit(g)(jnp.ones(3))
    jax.jit(g)(jnp.ones(4))
    jax.jit(g)(jnp.ones(3, jnp.int32))
    assert log == [(3,), (4,), (3,)]


def test_dropped_functions_are_collected_and_their_caches_go():
    gc.collect()
    before = caches.jit_cached_functions()
    refs = []
    x = jnp.ones(2)
    for i in range(1000):
        f = lambda x, i=i: x * i  # noqa: E731
        refs.append(weakref.ref(f))
        jax.jit(f)(x)
        assert caches.jit_cached_functions() >= before + 1
    del f
    gc.collect()
    assert all(r() is None for r in refs)
    assert caches.jit_cached_functions() <= before


def test_decorated_function_keeps_its_cache():
    log = []

    @jax.jit
    def f(x):
        log.append(1)
        return x * 3

    f(1.0)
    gc.collect()
    f(1.0)
    assert len(log) == 1


def test_functions_that_cannot_be_weakly_held_still_cache():
    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            log.append(1)
            return x - 1

    log = []
    j = jax.jit(Unhashable())
    j(1.0)
    j(1.0)
    assert len(log) == 1
    np.testing.assert_allclose(j(3.0), 2.0)


def test_partial_and_bound_method():
    log = []

    class M:
        def method(self, x):
            log.append(1)
            return x * 2

    # JAX 0.10.2: 2, 3, 4. A bound method made afresh dies with its wrapper (and its
    # cache with it); one partial object is one function; a new partial is another.
    m = M()
    jax.jit(m.method)(1.0)
    jax.jit(m.method)(1.0)
    assert len(log) == 2
    p = functools.partial(m.method)
    jax.jit(p)(1.0)
    jax.jit(p)(1.0)
    assert len(log) == 3
    jax.jit(functools.partial(m.method))(1.0)
    assert len(log) == 4


def test_shared_cache_under_vmap_and_grad():
    log = []

    def g(x):
        log.append(1)
        return jnp.sin(x)

    xs = jnp.arange(3.0)
    np.testing.assert_allclose(jax.vmap(jax.jit(g))(xs), np.sin(np.arange(3.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(jax.jit(g))(0.5), np.cos(0.5), rtol=1e-6)
    n = len(log)
    jax.grad(jax.jit(g))(0.7)
    assert len(log) == n
