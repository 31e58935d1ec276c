"""The config knobs JAX users debug with: jax_debug_nans / jax_debug_infs,
jax_disable_jit, jax_log_compiles, jax_explain_cache_misses. Messages pinned from
JAX 0.10.2."""
import logging

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp


@pytest.fixture
def nans():
    with jax.debug_nans(True):
        yield


def test_debug_nans_names_the_primitive(nans, capsys):
    @jax.jit
    def f(x):
        y = jnp.log(x)
        return y * 2

    with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in log$"):
        f(jnp.array([-1.0, 1.0]))
    assert ("Invalid nan value encountered in the output of a jax.jit function. Calling the "
            "de-optimized version.") in capsys.readouterr().out


def test_debug_nans_inside_nested_jit(nans):
    @jax.jit
    def g(x):
        @jax.jit
        def inner(y):
            return jnp.sqrt(y) + 1
        return inner(x) * 2

    with pytest.raises(FloatingPointError, match=r"encountered in sqrt$"):
        g(jnp.array([-1.0]))


def test_debug_nans_names_the_first_nan_not_the_first_inf(nans):
    # JAX 0.10.2: x / 0 is inf (not checked), inf * 0 is the nan: "encountered in mul".
    with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in mul$"):
        jax.jit(lambda x: x / 0.0 * 0.0)(jnp.ones(2))


def test_debug_infs():
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError,
                           match=r"^invalid value \(inf\) encountered in log$"):
            jax.jit(lambda x: jnp.log(x) * 2)(jnp.array([0.0, 1.0]))


def test_debug_nans_off_and_clean_results_pass(nans):
    f = jax.jit(lambda x: x + 1)
    np.testing.assert_allclose(f(jnp.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(f(jnp.ones(2)), [2.0, 2.0])  # the checked path again
    with jax.debug_nans(False):
        assert np.isnan(float(jax.jit(jnp.log)(-1.0)))


def test_debug_nans_turned_on_after_a_cached_call():
    f = jax.jit(lambda x: jnp.log(x))
    x = jnp.array([-1.0])
    assert np.isnan(np.asarray(f(x))).all()  # cached on the fast path, unchecked
    jax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(x)
    finally:
        jax.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(x))).all()


def test_debug_nans_with_integer_outputs_and_under_grad(nans):
    assert int(jax.jit(lambda x: x * 2)(jnp.arange(3)).sum()) == 6
    np.testing.assert_allclose(jax.grad(jax.jit(jnp.sin))(0.0), 1.0)


def test_debug_nans_config_values():
    assert jax.config.jax_debug_infs is False
    assert jax.debug_nans.value is False
    with jax.debug_infs(True):
        assert jax.config.jax_debug_infs is True
    assert jax.config.jax_debug_infs is False


def test_disable_jit_as_config_and_context_manager():
    log = []

    @jax.jit
    def f(x):
        log.append(isinstance(x, jax.core.Tracer))
        return x + 1

    with jax.disable_jit():
        f(jnp.ones(2))
    jax.config.update("jax_disable_jit", True)
    try:
        f(jnp.ones(2))
    finally:
        jax.config.update("jax_disable_jit", False)
    f(jnp.ones(2))
    assert log == [False, False, True]


def test_log_compiles_logs_function_signature_and_time(caplog):
    def logged_fn(x, y):
        return x * y

    with caplog.at_level(logging.WARNING, logger="tinyxla"), jax.log_compiles(True):
        jax.jit(logged_fn)(jnp.ones(3), 2.0)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing logged_fn for jit in ") and m.endswith(" sec")
               for m in messages)
    assert ("Compiling jit(logged_fn) with global shapes and types (ShapedArray(float32[3]), "
            "ShapedArray(float32[], weak_type=True)).") in "\n".join(messages)
