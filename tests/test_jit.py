"""make_jaxpr and jit: printed jaxprs and error texts pinned from JAX 0.10.2, caching,
static arguments, donation, pytrees, and jit against eager."""
import functools

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors, lax


def test_make_jaxpr_seed_polynomial():
    assert str(jax.make_jaxpr(lambda x: 2 * x * x + 3 * x + 3)(3.0)) == (
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = mul 2.0:f32[] a\n"
        "    c:f32[] = mul b a\n"
        "    d:f32[] = mul 3.0:f32[] a\n"
        "    e:f32[] = add c d\n"
        "    f:f32[] = add e 3.0:f32[]\n"
        "  in (f,) }")


def test_make_jaxpr_reduction_and_consts():
    assert str(jax.make_jaxpr(lambda x: jnp.sin(x).sum() + 1)(jnp.ones((3, 4)))) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3,4] = sin a\n"
        "    c:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b\n"
        "    d:f32[] = add c 1.0:f32[]\n"
        "  in (d,) }")
    c = jnp.arange(3.0)
    assert str(jax.make_jaxpr(lambda x: x + c)(jnp.ones(3))) == (
        "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }")


def test_make_jaxpr_nested_jit_and_iota():
    text = str(jax.make_jaxpr(lambda x, y: (x * 2, jax.jit(lambda z: z + 1)(y)))(jnp.ones(3), 2))
    assert text == (
        "{ lambda ; a:f32[3] b:i32[]. let\n"
        "    c:f32[3] = mul a 2.0:f32[]\n"
        "    d:i32[] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; b:i32[]. let d:i32[] = add b 1:i32[] in (d,) }\n"
        "    ] b\n"
        "  in (c, d) }")
    assert str(jax.make_jaxpr(lambda x: x.astype(jnp.int32) + jnp.arange(3))(jnp.ones(3))) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    c:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] \n"
        "    d:i32[3] = add b c\n"
        "  in (d,) }")


def test_jit_matches_eager_and_does_not_retrace():
    calls = []

    def f(x, y):
        calls.append(1)
        return jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(y)

    x = jnp.linspace(-2, 2, 11)
    y = jnp.arange(11.0)
    g = jax.jit(f)
    np.testing.assert_allclose(g(x, y), f(x, y), rtol=1e-6)
    n = len(calls)
    g(x + 1, y)
    assert len(calls) == n  # cached: Python does not run again
    g(x.astype(jnp.int32), y)
    assert len(calls) == n + 1  # new dtype: retrace


def test_cache_key_weak_types_and_static_by_type():
    calls = []

    @functools.partial(jax.jit, static_argnums=1)
    def f(x, k):
        calls.append(k)
        return x * k

    f(1.0, 2)
    f(1.0, 2)
    f(1.0, 2.0)  # 2 == 2.0 but a different type: a new entry, as JAX
    f(jnp.float32(1.0), 2)  # strong float32 vs weak Python float
    assert calls == [2, 2.0, 2]


def test_static_argnames_and_pytrees():
    @functools.partial(jax.jit, static_argnames="mode")
    def f(params, x, mode="add"):
        out = params["w"] * x + params["b"]
        return {"out": out, "pair": (out.sum(), mode == "add")}

    r = f({"w": jnp.ones(3), "b": 2.0}, jnp.arange(3.0), mode="add")
    np.testing.assert_allclose(r["out"], [2, 3, 4])
    assert float(r["pair"][0]) == 9.0 and bool(r["pair"][1]) is True


def test_static_errors():
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported. An "
                       "error occurred while trying to hash an object of type <class 'list'>, "
                       r"\[1, 2\]. The error was:\nTypeError: unhashable type: 'list'"):
        jax.jit(lambda x, y: x, static_argnums=1)(1.0, [1, 2])
    with pytest.raises(ValueError, match=r"Jitted function has static_argnums=\(3,\), but only "
                       "accepts 1 positional arguments."):
        jax.jit(lambda x: x, static_argnums=3)(1.0)


def test_donation_deletes_input():
    x = jnp.ones((2, 3))
    y = jax.jit(lambda x: x + 1, donate_argnums=0)(x)
    np.testing.assert_allclose(y, 2 * np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2,3\]."):
        x + 1


def test_tracer_errors():
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(errors.TracerBoolConversionError) as e:
        jax.jit(f)(1.0)
    msg = str(e.value)
    assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].\n"
                          "The error occurred while tracing the function f at ")
    assert msg.endswith(" for jit. This concrete value was not available in Python because it "
                        "depends on the value of the argument x.\nSee https://docs.jax.dev/en/"
                        "latest/errors.html#jax.errors.TracerBoolConversionError")
    assert isinstance(e.value, errors.ConcretizationTypeError) and isinstance(e.value, TypeError)

    with pytest.raises(errors.ConcretizationTypeError, match="The problem arose with the `float` "
                       "function"):
        jax.jit(lambda x: float(x))(1.0)
    with pytest.raises(errors.TracerArrayConversionError, match=r"The numpy.ndarray conversion "
                       r"method __array__\(\) was called on traced array with shape float32\[\]"):
        jax.jit(lambda x: np.asarray(x))(1.0)
    with pytest.raises(errors.TracerIntegerConversionError, match=r"The __index__\(\) method was "
                       r"called on traced array with shape int32\[\]"):
        jax.jit(lambda x: range(x))(1)


def test_leaked_tracer():
    leak = []
    jax.jit(lambda x: leak.append(x) or x)(1.0)
    with pytest.raises(errors.UnexpectedTracerError, match="Encountered an unexpected tracer. A "
                       "function transformed by JAX had a side effect, allowing for a reference "
                       r"to an intermediate value with type float32\[\] wrapped in a "
                       "DynamicJaxprTracer to escape the scope of the transformation."):
        leak[0] + 1


def test_eval_shape_and_lower():
    s = jax.eval_shape(lambda x: x.sum(), jnp.ones(3))
    assert repr(s) == "ShapeDtypeStruct(shape=(), dtype=float32)"
    f = jax.jit(lambda x: x * 2)
    assert f.eval_shape(jnp.ones((2, 3))).shape == (2, 3)
    assert "mul" in f.lower(jnp.ones(3)).as_text()
    np.testing.assert_allclose(f.lower(jnp.ones(3)).compile()(jnp.ones(3)), [2, 2, 2])


def test_side_effects_only_while_tracing(capsys):
    @jax.jit
    def f(x):
        print("tracing")
        return x + 1

    f(1.0)
    f(2.0)
    assert capsys.readouterr().out == "tracing\n"


def test_long_trace():
    def f(x):
        for _ in range(20000):
            x = x + 1.0
        return x

    assert float(jax.jit(f)(0.0)) == 20000.0


def test_make_jaxpr_prints_params_as_jax():
    """Pinned from jax 0.10.2: hidden and reformatted params, and the 80-column break."""
    x, y = np.ones((3, 4), np.float32), np.ones(4, np.float32)
    assert str(jax.make_jaxpr(lambda x, y: jnp.dot(x + 1, y + 1))(x, y)) == (
        "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
        "    c:f32[3,4] = add a 1.0:f32[]\n"
        "    d:f32[4] = add b 1.0:f32[]\n"
        "    e:f32[3] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      preferred_element_type=float32\n"
        "    ] c d\n"
        "  in (e,) }")
    dims = (((1,), (0,)), ((), ()))
    assert str(jax.make_jaxpr(lambda a, b: lax.dot_general(a, b, dims))(x, y)) == (
        "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
        "    c:f32[3] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }")
    hi = lax.Precision.HIGHEST
    assert "      precision=(Precision.HIGHEST, Precision.HIGHEST)\n" in str(
        jax.make_jaxpr(lambda a, b: lax.dot_general(a, b, dims, precision=hi))(x, y))
    short = jax.make_jaxpr(lambda a: lax.broadcast_in_dim(a, (5, 3, 4, 7, 8, 9, 10, 11, 12), (1, 2)))
    assert str(short(x)).splitlines()[1] == \
        "    b:f32[5,3,4,7,8,9,10,11,12] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a"
    long = jax.make_jaxpr(lambda a: lax.broadcast_in_dim(a, (5, 3, 4, 7, 8, 9, 10, 11, 12, 13), (1, 2)))
    assert str(long(x)).splitlines()[1:4] == [
        "    b:f32[5,3,4,7,8,9,10,11,12,13] = broadcast_in_dim[",
        "      broadcast_dimensions=(1, 2)",
        "    ] a"]
