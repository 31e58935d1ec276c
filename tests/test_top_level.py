"""The top-level ``jax`` names beyond the transforms: typing, typeof, ShapeDtypeStruct and
eval_shape, custom_gradient, linear_transpose, named scopes, ensure_compile_time_eval,
the config context managers, errors and dtypes, against JAX 0.10.2's values and messages."""
import sys
import warnings

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp


def test_typing():
    from tinyxla.typing import ArrayLike, DTypeLike
    assert isinstance(jnp.ones(2), ArrayLike) and isinstance(3, ArrayLike)
    assert isinstance(np.float32(1), ArrayLike) and isinstance(np.ones(2), ArrayLike)
    assert not isinstance([1], ArrayLike) and not isinstance("a", ArrayLike)
    assert str in DTypeLike.__args__ and np.dtype in DTypeLike.__args__


def test_typeof():
    assert str(jax.typeof(jnp.ones(3))) == "float32[3]"
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    assert str(jax.typeof(1.0)) == "~float32[]"
    assert str(jax.typeof(jnp.ones((2, 3), jnp.int8))) == "int8[2,3]"
    assert str(jax.typeof(True)) == "bool[]" and str(jax.typeof(np.ones(2))) == "float32[2]"
    seen = []
    jax.jit(lambda x: seen.append(str(jax.typeof(x))) or x)(jnp.ones(2))
    assert seen == ["float32[2]"]
    with pytest.raises(TypeError, match="Argument 'a' of type <class 'str'> is not a valid JAX "
                                        "type"):
        jax.typeof("a")
    with pytest.raises(TypeError, match="Argument '\\[1\\]' of type '<class 'list'>' is not a "
                                        "valid JAX type"):
        jax.typeof([1])


def test_shape_dtype_struct():
    s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert (s.sharding, s.weak_type, s.ndim, s.size, len(s)) == (None, False, 2, 6, 2)
    assert s == jax.ShapeDtypeStruct([2, 3], "float32") and hash(s) == hash(
        jax.ShapeDtypeStruct((2, 3), "float32"))
    assert s != jax.ShapeDtypeStruct((2, 3), jnp.float32, weak_type=True)
    assert repr(jax.ShapeDtypeStruct((), int, weak_type=True)) == \
        "ShapeDtypeStruct(shape=(), dtype=int64, weak_type=True)"
    assert repr(s.update(shape=(3,))) == "ShapeDtypeStruct(shape=(3,), dtype=float32)"
    assert repr(s.update(dtype=jnp.int32, weak_type=True)) == \
        "ShapeDtypeStruct(shape=(2, 3), dtype=int32, weak_type=True)"
    sharded = jax.ShapeDtypeStruct([2], "int32", sharding=jax.devices()[0].__class__ and
                                   jax.device_put(jnp.ones(1)).sharding)
    assert repr(sharded) == ("ShapeDtypeStruct(shape=(2,), dtype=int32, sharding="
                             "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device))")
    with pytest.raises(ValueError, match="ShapeDtypeStruct: dtype must be specified."):
        jax.ShapeDtypeStruct((2,), None)
    with pytest.raises(ValueError, match="sharding should be an instance of "
                                         "`jax.sharding.Sharding`"):
        jax.ShapeDtypeStruct((2,), jnp.float32, sharding=3)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(jax.ShapeDtypeStruct((), jnp.float32))
    with pytest.raises(TypeError, match="takes 3 positional arguments"):
        jax.ShapeDtypeStruct((2,), jnp.float32, True)


def test_eval_shape():
    s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert repr(jax.eval_shape(lambda x: x * 2, s)) == \
        "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert repr(jax.eval_shape(lambda x: x * 2, 1.0)) == \
        "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"
    out = jax.eval_shape(lambda x, y: {"a": x @ y}, s, jnp.ones((3, 4)))
    assert repr(out) == "{'a': ShapeDtypeStruct(shape=(2, 4), dtype=float32)}"
    calls = []
    jax.eval_shape(lambda x: calls.append(1) or x, s)
    assert calls == [1]
    with pytest.raises(TypeError, match="Error interpreting argument to .* as an abstract "
                                        "array. The problematic value is of type <class 'str'> "
                                        "and was passed to the function at path x."):
        jax.eval_shape(lambda x: x, "a")


def test_float0():
    assert jax.float0 is jax.dtypes.float0
    assert repr(jax.float0) == "dtype([('float0', 'V')])"


def test_custom_gradient():
    @jax.custom_gradient
    def f(x, y):
        return x * y, lambda g: (g * 10 * y, g * 20 * x)

    assert float(f(2.0, 3.0)) == 6.0
    assert float(jax.grad(f)(2.0, 3.0)) == 30.0  # JAX's
    assert float(jax.grad(f, 1)(2.0, 3.0)) == 40.0
    assert float(jax.jit(jax.grad(f))(2.0, 3.0)) == 30.0
    np.testing.assert_array_equal(jax.vmap(jax.grad(f))(jnp.ones(2), jnp.ones(2)), [10, 10])

    @jax.custom_gradient
    def g(x):
        return jnp.sin(x), lambda ct: ct * 100.0

    np.testing.assert_allclose(g(1.0), np.sin(1.0), rtol=1e-6)
    assert float(jax.grad(g)(1.0)) == 100.0

    # A rule that closes over values computed in the forward pass.
    @jax.custom_gradient
    def clip_gradient(x):
        y = jnp.tanh(x)
        return y, lambda ct: (ct * (1 - y ** 2) * 0.5,)

    x = jnp.array([0.3, -1.2])
    expect = 0.5 * (1 - np.tanh(np.asarray(x)) ** 2)
    np.testing.assert_allclose(jax.grad(lambda v: clip_gradient(v).sum())(x), expect, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda v: clip_gradient(v).sum()))(x), expect,
                               rtol=1e-6)


def test_linear_transpose():
    lt = jax.linear_transpose(lambda x, y: (2 * x + y, x), 1.0, 2.0)
    a, b = lt((1.0, 1.0))
    assert (float(a), float(b)) == (3.0, 1.0) and a.weak_type and b.weak_type
    lt2 = jax.linear_transpose(lambda x: x * 3, jax.ShapeDtypeStruct((2,), jnp.float32))
    (out,) = lt2(jnp.ones(2))
    np.testing.assert_array_equal(out, [3, 3])
    (out,) = jax.linear_transpose(lambda x: {"a": x.sum()}, jnp.ones(3))({"a": 2.0})
    np.testing.assert_array_equal(out, [2, 2, 2])
    # A matrix-vector product transposes to the transposed matrix's product.
    m = jnp.asarray(np.random.RandomState(0).randn(3, 4).astype(np.float32))
    (out,) = jax.linear_transpose(lambda v: m @ v, jnp.ones(4))(jnp.arange(3.0))
    np.testing.assert_allclose(out, np.asarray(m).T @ np.arange(3.0), rtol=1e-5)
    (out,) = jax.jit(jax.linear_transpose(lambda v: m @ v, jnp.ones(4)))(jnp.arange(3.0))
    np.testing.assert_allclose(out, np.asarray(m).T @ np.arange(3.0), rtol=1e-5)
    jax.linear_transpose(lambda x: x, 1)  # integer -> integer is allowed
    with pytest.raises(NotImplementedError, match="Transpose rule \\(for reverse-mode "
                                                  "differentiation\\) for 'sin' not implemented"):
        jax.linear_transpose(lambda x: jnp.sin(x), 1.0)(1.0)
    with pytest.raises(TypeError, match=r"cotangent tree does not match function output, "
                                        r"expected PyTreeDef\(\(\*, \*\)\) but got PyTreeDef\(\*\)"):
        lt(1.0)
    with pytest.raises(TypeError, match=r"cotangent type does not match function output, "
                                        r"expected \(ShapedArray\(float32\[\], weak_type=True\), "
                                        r"ShapedArray\(float32\[\], weak_type=True\)\) but got "
                                        r"\[1, 1.0\]"):
        lt((1, 1.0))
    with pytest.raises(TypeError, match="linear_transpose only supports \\[float or complex\\] "
                                        "-> \\[float or complex\\], and integer -> integer"):
        jax.linear_transpose(lambda x: x * 2.0, 1)
    with pytest.raises(NotImplementedError, match="reduce_axes argument to transpose is "
                                                  "deprecated"):
        jax.linear_transpose(lambda x: x, 1.0, reduce_axes=("i",))


def test_named_scope_and_call():
    def f(x):
        with jax.named_scope("layer"):
            return x * 2

    assert float(jax.jit(f)(3.0)) == 6.0 and float(jax.grad(f)(3.0)) == 2.0
    g = jax.named_call(lambda x: x + 1, name="plus")
    assert float(g(1.0)) == 2.0 and float(jax.jit(g)(1.0)) == 2.0
    with pytest.raises(TypeError, match="named_scope name argument must be a string."):
        with jax.named_scope(3):
            pass


def test_ensure_compile_time_eval():
    seen = {}

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(2.0)
            seen["y"] = type(y).__name__
            seen["concrete"] = float(y) > 0  # Python control flow on the value works
            z = jnp.sin(x)  # still staged: x is a tracer
            seen["z"] = isinstance(z, jax.core.Tracer)
        return x + y

    np.testing.assert_allclose(f(1.0), 1 + np.sin(2.0), rtol=1e-6)
    assert seen == {"y": "ArrayImpl", "concrete": True, "z": True}
    with jax.ensure_compile_time_eval():  # outside a transformation: nothing changes
        assert float(jnp.cos(0.0)) == 1.0
    assert float(jax.grad(lambda x: f(x) * 2)(1.0)) == 2.0


def test_print_environment_info(capsys):
    info = jax.print_environment_info(return_string=True)
    lines = info.splitlines()
    assert lines[0].startswith("tinyxla: ") and lines[1] == f"numpy:   {np.__version__}"
    assert "device info: cpu-" in info and "process_count: 1" in info
    assert lines[-1].startswith("platform: uname_result(")
    assert jax.print_environment_info() is None
    assert capsys.readouterr().out == info + "\n"


def test_config_context_managers():
    assert jnp.ones(2).dtype == jnp.float32
    with jax.enable_x64(True):
        assert jnp.ones(2).dtype == jnp.float64 and jax.config.jax_enable_x64
        assert jax.enable_x64.value is True
    assert jnp.ones(2).dtype == jnp.float32 and not jax.config.jax_enable_x64
    with jax.enable_x64():  # True is its default argument, as in JAX
        assert jax.config.jax_enable_x64

    @jax.enable_x64(True)
    def f():
        return jnp.ones(1).dtype

    assert f() == jnp.float64 and not jax.config.jax_enable_x64
    with pytest.raises(TypeError, match="bool\\(\\) not supported for instances of type 'State' "
                                        "\\(did you mean to use 'State.value' instead\\?\\)"):
        bool(jax.enable_x64)
    with pytest.raises(TypeError, match="Context manager for numpy_rank_promotion config option "
                                        "requires an argument representing the new value for "
                                        "the config option."):
        jax.numpy_rank_promotion()
    with pytest.raises(ValueError, match="new enum value must be in \\['allow', 'warn', 'raise'\\], "
                                         "got bad of type <class 'str'>."):
        jax.numpy_rank_promotion("bad")
    with pytest.raises(ValueError, match="'bad' is not a valid NumpyDtypePromotion"):
        jax.numpy_dtype_promotion("bad")
    with jax.default_matmul_precision("highest"):
        assert jax.config.jax_default_matmul_precision == "highest"
    assert jax.config.jax_default_matmul_precision is None
    with jax.threefry_partitionable(False):
        assert jax.config.jax_threefry_partitionable is False
    assert jax.config.jax_threefry_partitionable is True
    assert jax.log_compiles.name == "jax_log_compiles"
    assert jax.explain_cache_misses.__name__ == "explain_cache_misses"
    with pytest.raises(RuntimeError):  # the value on entry comes back after an exception
        with jax.enable_x64(True):
            raise RuntimeError
    assert not jax.config.jax_enable_x64


def test_numpy_dtype_promotion_strict():
    f = jax.jit(lambda a, b: a + b)
    i, x = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32)
    np.testing.assert_array_equal(f(i, x), [2, 2])
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(jax.dtypes.TypePromotionError, match="have no available implicit "
                                                                "dtype promotion path when "
                                                                "jax_numpy_dtype_promotion=strict"):
            i + x
        with pytest.raises(jax.dtypes.TypePromotionError):  # not a cached trace of f
            f(i, x)
    np.testing.assert_array_equal(f(i, x), [2, 2])


def test_numpy_rank_promotion():
    a, b = jnp.ones(2), jnp.ones((3, 2))
    f = jax.jit(lambda x, y: x + y)
    assert f(a, b).shape == (3, 2)
    msg = ("Operands could not be broadcast together for add on shapes (2,) (3, 2) and with "
           "the config option jax_numpy_rank_promotion='raise'. For more information, see "
           "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError) as e:
            a + b
        assert str(e.value) == msg
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            f(a, b)  # the trace made under 'allow' is not reused
        with pytest.raises(ValueError, match="for add on shapes \\(2,\\) \\(1, 2\\)"):
            a + jnp.ones((1, 2))
        assert (a + 1.0).shape == (2,) and (b * jnp.ones((3, 2))).shape == (3, 2)
    with jax.numpy_rank_promotion("warn"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            jnp.multiply(a, b)
        assert [str(x.message) for x in w] == [
            "Following NumPy automatic rank promotion for multiply on shapes (2,) (3, 2). Set "
            "the jax_numpy_rank_promotion config option to 'allow' to disable this warning; "
            "for more information, see "
            "https://docs.jax.dev/en/latest/rank_promotion_warning.html."]
    assert (a + b).shape == (3, 2)


def test_absl_flags(monkeypatch):
    absl = pytest.importorskip("absl.flags")
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_numpy_rank_promotion=raise",
                                      "--other_flag", "--", "--jax_enable_x64"])
    try:
        jax.config.parse_flags_with_absl()
        assert jax.config.jax_numpy_rank_promotion == "raise"
        assert not jax.config.jax_enable_x64
        assert absl.FLAGS["jax_enable_x64"].value is False
    finally:
        jax.config.update("jax_numpy_rank_promotion", "allow")


def test_errors_module():
    e = jax.errors
    assert issubclass(e.JaxRuntimeError, RuntimeError)
    assert issubclass(e.KeyReuseError, e.JAXTypeError)
    assert issubclass(e.JaxprTypeError, TypeError) and not issubclass(e.JaxprTypeError,
                                                                        e.JAXTypeError)
    assert issubclass(e.InconclusiveDimensionOperation, Exception)
    from tinyxla._src import core
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(1.0)
    core.check_jaxpr(closed.jaxpr)
    eqn = closed.jaxpr.eqns[0]
    broken = core.Jaxpr(closed.jaxpr.constvars, closed.jaxpr.invars, closed.jaxpr.outvars,
                        closed.jaxpr.eqns[1:] + [eqn])
    with pytest.raises(e.JaxprTypeError, match="used before it is defined"):
        core.check_jaxpr(broken)


def test_dtypes_module():
    d = jax.dtypes
    assert [d.itemsize_bits(t) for t in (np.float32, jnp.bfloat16, np.bool_, "int4",
                                         np.complex64)] == [32, 16, 8, 4, 64]
    with pytest.raises(ValueError, match="dtype cannot be None."):
        d.itemsize_bits(None)
    with pytest.raises(ValueError, match="unexpected input"):
        d.itemsize_bits(d.float0)
    assert [d.scalar_type_of(v) for v in (1, np.float32(1), jnp.ones(2, jnp.int8), True, 1j)] \
        == [int, float, int, bool, complex]
    assert issubclass(d.prng_key, d.extended) and issubclass(d.extended, np.generic)
    assert d.issubdtype(jax.random.key(0).dtype, d.prng_key)
    assert d.issubdtype(jax.random.key(0).dtype, d.extended)
    assert not d.issubdtype(np.float32, d.extended)
    assert d.canonicalize_dtype(np.float64) == np.float32
    assert d.canonicalize_dtype(np.int64, allow_extended_dtype=True) == np.int32
    assert d.result_type(1, 2.0) == np.float32
    assert d.result_type(jnp.int8(1), 1, return_weak_type_flag=True) == (np.dtype("int8"), False)


def test_custom_derivatives_module_and_nn_tanh():
    cd = jax.custom_derivatives
    assert cd.custom_jvp is jax.custom_jvp and cd.custom_vjp is jax.custom_vjp
    assert cd.custom_gradient is jax.custom_gradient
    assert cd.closure_convert is jax.closure_convert
    assert jax.nn.tanh is jnp.tanh  # as in JAX
    np.testing.assert_allclose(jax.grad(jax.nn.tanh)(0.5), 1 - np.tanh(0.5) ** 2, rtol=1e-6)


def test_enable_checks(monkeypatch):
    from tinyxla._src import core
    checked = []
    real = core.check_jaxpr
    monkeypatch.setattr(core, "check_jaxpr", lambda j: checked.append(j) or real(j))
    f = lambda x: jnp.sin(x) * 2  # noqa: E731
    jax.jit(f)(1.0)
    assert checked == []
    with jax.enable_checks():
        assert jax.config.jax_enable_checks
        g = lambda x: jnp.sin(x) * 3  # noqa: E731 (a fresh function: jit's trace is cached)
        np.testing.assert_allclose(jax.jit(g)(1.0), 3 * np.sin(1.0), rtol=1e-6)
        jax.make_jaxpr(jax.grad(f))(1.0)
        jax.eval_shape(jax.vmap(f), jnp.ones(3))
    assert len(checked) == 3 and not jax.config.jax_enable_checks
    assert [e.primitive.name for e in checked[0].eqns] == ["sin", "mul"]
