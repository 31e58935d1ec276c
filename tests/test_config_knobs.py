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


def _explain(caplog, calls):
    """The explanation lines (after the header) logged for the last call of ``calls``."""
    jax.config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="tinyxla"):
            for call in calls:
                caplog.clear()
                call()
    finally:
        jax.config.update("jax_explain_cache_misses", False)
    (message,) = [r.getMessage() for r in caplog.records]
    return message.split("\n", 1)[1]


def logged(x, y):
    return x * y


def test_explain_cache_miss_shape_dtype_and_weak_type(caplog):
    # Messages of JAX 0.10.2 (after the "TRACING CACHE MISS at file:line" header).
    head = ("  for logged defined at " + __file__ + ":{}\n  all previously seen cache keys "
            "differ. For the closest previous key:\n").format(logged.__code__.co_firstlineno)
    f = jax.jit(logged)
    f.clear_cache()
    first = _explain(caplog, [lambda: f(jnp.ones(3), 2.0)])
    assert first.startswith("  never seen function:\n    logged id=")
    assert _explain(caplog, [lambda: f(jnp.ones(4), 2.0)]) == head + (
        "  different input types:\n  * at x, now f32[4] and before f32[3]")
    assert _explain(caplog, [lambda: f(jnp.ones(4, jnp.int32), 2.0)]) == head + (
        "  different input types:\n  * at x, now i32[4] and before f32[3]")
    assert _explain(caplog, [lambda: f(jnp.ones(4), jnp.float32(2.0))]) == head + (
        "  different input types:\n  * at y, now f32[]{weak_type=False} and before "
        "f32[]{weak_type=True}https://docs.jax.dev/en/latest/type_promotion.html#weak-types")


def test_explain_cache_miss_tree(caplog):
    def t(x, y=None):
        return x

    f = jax.jit(t)
    msgs = [_explain(caplog, [lambda: f([jnp.ones(3)]), lambda: f([jnp.ones(3), jnp.ones(3)])]),
            _explain(caplog, [lambda: f({"a": 1.0})]),
            _explain(caplog, [lambda: f({"a": jnp.ones(2)}, y=1.0)])]
    tails = [m.split("For the closest previous key:\n")[1] for m in msgs]
    assert tails == [
        "  different input pytree:\n  * at input path [0][0], now list of length 2 and before "
        "list of length 1, so the lengths do not match",
        "  different input pytree:\n  * at input path [0][0], now <class 'dict'> and before "
        "<class 'list'>, so their Python types differ",
        "  different input pytree:\n  * at input path [1], now <class 'dict'> with 1 child and "
        "before <class 'dict'> with 0 child, so the numbers of children do not match, with the "
        "symmetric difference of key sets: {'y'}"]


def test_explain_cache_miss_static_argument_and_config(caplog):
    def s(x, n):
        return x * n

    def kw(x, *, n=1):
        return x * n

    g = jax.jit(s, static_argnums=1)
    h = jax.jit(kw, static_argnames="n")
    static = _explain(caplog, [lambda: g(1.0, 2), lambda: g(1.0, 3)])
    static_kw = _explain(caplog, [lambda: h(1.0, n=2), lambda: h(1.0, n=3)])
    meta = ("now <class 'tinyxla._src.compile_log.Static'> with pytree metadata Static(val=3) "
            "and before <class 'tinyxla._src.compile_log.Static'> with pytree metadata "
            "Static(val=2), so the pytree node metadata does not match")
    assert static.endswith("  different input pytree:\n  * at input path [0][1], " + meta)
    assert static_kw.endswith("  different input pytree:\n  * at input path [1]['n'], " + meta)

    def t(x):
        return x

    f = jax.jit(t)
    f(jnp.ones(3))
    with jax.enable_x64(True):
        x64 = _explain(caplog, [lambda: f(jnp.ones(3, jnp.float32))])
    assert x64.endswith("  Tracing context doesn't match, e.g. due to config or context "
                        "manager.\n  * jax_enable_x64 differs: now True and before False")


_leaked = []


def test_check_tracer_leaks_under_jit():
    @jax.jit
    def leaky(x):
        _leaked.append(x)
        return x * 2

    try:
        with jax.checking_leaks():
            with pytest.raises(Exception) as e:
                leaky(1.0)
    finally:
        _leaked.clear()
    lines = str(e.value).splitlines()
    # As JAX 0.10.2:
    assert lines[0] == "Leaked trace DynamicJaxprTrace. Leaked tracer(s):"
    assert lines[2] == "JitTracer(~float32[])"
    assert lines[3].startswith("The error occurred while tracing the function leaky at ")
    assert lines[3].endswith(" for jit. This concrete value was not available in Python "
                             "because it depends on the value of the argument x.")
    assert lines[4].startswith("<DynamicJaxprTracer ") and " is referred to by <list " in lines[4]
    assert lines[5].endswith(" is referred to by test_config_knobs._leaked")
    assert type(e.value) is Exception


def test_check_tracer_leaks_under_vmap():
    def leaky(x):
        _leaked.append(x)
        return x * 2

    try:
        with jax.checking_leaks():
            with pytest.raises(Exception, match=r"^Leaked trace BatchTrace\. Leaked tracer\(s\):"
                                                r"\n\nVmapTracer\(aval=float32\[\], "
                                                r"batched=float32\[3\]\)\n"):
                jax.vmap(leaky)(jnp.ones(3))
    finally:
        _leaked.clear()


def test_check_tracer_leaks_passes_clean_functions():
    assert not jax.config.jax_check_tracer_leaks
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
        assert float(jax.jit(lambda x: x + 1)(1.0)) == 2.0
        np.testing.assert_allclose(jax.vmap(lambda x: x * 2)(jnp.ones(2)), [2.0, 2.0])
        assert float(jax.grad(lambda x: x * x)(3.0)) == 6.0
    assert not jax.config.jax_check_tracer_leaks


_H2D = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray({}), "
        "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")


def test_transfer_guard_disallow():
    # JAX 0.10.2's messages; device_put is explicit, so "disallow" lets it through.
    x = np.ones(3, np.float32)
    with jax.transfer_guard("disallow"):
        for fn, aval in [(lambda: jnp.asarray(x), "float32[3]"),
                         (lambda: jnp.array(x), "float32[3]"),
                         (lambda: jnp.add(x, jnp.ones(3)), "float32[3]"),
                         (lambda: jax.jit(lambda a: a + 1)(x), "float32[3]"),
                         (lambda: jax.jit(lambda a: a + 1)(1.0), "float32[], weak_type=True"),
                         (lambda: jax.random.PRNGKey(0), "int32[]")]:
            with pytest.raises(jax.errors.JaxRuntimeError) as e:
                fn()
            assert str(e.value) == _H2D.format(aval)
        assert jax.device_put(x).shape == (3,)
        y = jnp.ones(3) * 2  # made on the device: no transfer
        np.testing.assert_allclose(np.asarray(y), [2.0, 2.0, 2.0])  # reading is no transfer
        assert float(jax.jit(lambda a: a.sum())(y)) == 6.0


def test_transfer_guard_disallow_explicit_and_per_direction():
    x = np.ones(2, np.float32)
    with jax.transfer_guard("disallow_explicit"):
        with pytest.raises(jax.errors.JaxRuntimeError, match="Disallowed host-to-device"):
            jax.device_put(x)
    with jax.transfer_guard_host_to_device("disallow"):
        assert jax.config.jax_transfer_guard_host_to_device == "disallow"
        with pytest.raises(jax.errors.JaxRuntimeError):
            jnp.asarray(x)
    with jax.transfer_guard_device_to_host("disallow"):
        jnp.asarray(x)
    assert jnp.asarray(x).shape == (2,)
    with pytest.raises(ValueError, match=r"^new enum value must be None or in \['allow', "
                                         r"'log', 'disallow', 'log_explicit', "
                                         r"'disallow_explicit'\], got bogus of type "
                                         r"<class 'str'>\.$"):
        jax.config.update("jax_transfer_guard", "bogus")


def test_transfer_guard_log(caplog):
    x = np.ones(2, np.float32)
    with caplog.at_level(logging.WARNING, logger="tinyxla"):
        with jax.transfer_guard("log"):
            jnp.asarray(x)
            jax.device_put(x)  # explicit: not logged at "log"
        with jax.transfer_guard("log_explicit"):
            jax.device_put(x)
    messages = [r.getMessage() for r in caplog.records]
    want = _H2D.format("float32[2]").removeprefix("INVALID_ARGUMENT: Disallowed ")
    assert messages == [want, want]
