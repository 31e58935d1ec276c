"""Lowering jaxprs to the C++ graph and running them compiled: fusion decisions read from
the optimised graph, the fallback for primitives without a lowering, donation, the text
form's round trip, dumps and compile logs, and a 100,000-equation function."""
from __future__ import annotations

import logging
import re

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core
from tinyxla._src import core
from tinyxla._src.interpreters import lowering


def _executable(f, *args):
    return lowering.executable_for(jax.jit(f).lower(*args).jaxpr)


def _chain(x):
    return jnp.tanh(x * 2 + 1) * 0.5 + jnp.exp(-x * x) - jnp.sin(x)


def test_jit_runs_the_compiled_graph():
    x = jnp.linspace(-3, 3, 101)
    exe = _executable(_chain, x)
    assert isinstance(exe, lowering.GraphExecutable)
    np.testing.assert_allclose(jax.jit(_chain)(x), _chain(x), rtol=1e-6)


@pytest.mark.parametrize("f,shapes,kernels", [
    (_chain, [(1000,)], 1),  # an elementwise chain is one fused loop
    (lambda x: jnp.sum(x * x + 1.0), [(1000,)], 1),  # prologue fused into the reduction
    (lambda x: (jnp.sin(x) + 1, jnp.sin(x) * 2), [(64,)], 1),  # one loop, two results
    (lambda x, w, b: jnp.maximum(x @ w + b, 0.0), [(8, 16), (16, 4), (4,)], 2),  # dot, epilogue
    (lambda x: x.reshape(4, 25).T * 2.0, [(100,)], 1),  # layout ops are views
    (lambda x: x + 1.0, [(7,)], 1),
])
def test_fusion_decisions(f, shapes, kernels):
    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    exe = _executable(f, *args)
    assert exe.num_kernels == kernels, exe.text()
    got, want = jax.jit(f)(*args), f(*args)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_norm_fuses_reductions_with_their_prologues():
    x = jnp.asarray(np.random.default_rng(1).standard_normal((1000, 10)).astype(np.float32))

    def norm(x):
        return (x - x.mean(0)) / x.std(0)

    exe = _executable(norm, x)
    top = [line for line in exe.text().splitlines() if line.startswith("%")]
    big = [line for line in top
           if "f32[1000,10]" in line.split(" : ")[-1] or re.search(r"[(, ]%0[,)]", line)]
    kinds = [line.split(" = ")[1].split("(")[0] for line in big]
    # Over the (1000, 10) array: the mean's reduction, the variance's reduction with its
    # (x - mean)**2 prologue, and one elementwise epilogue; everything else is views.
    assert sorted(k for k in kinds if k not in ("parameter", "broadcast_in_dim")) == \
        ["fused", "fused", "reduce_sum"], exe.text()
    assert "square" in exe.text().split("reduce_sum(%3)")[0]
    np.testing.assert_allclose(jax.jit(norm)(x), norm(x), rtol=1e-5, atol=1e-5)


def test_as_text_is_the_optimised_graph_and_parses_back():
    text = jax.jit(_chain).lower(jnp.ones(8)).as_text()
    assert text.startswith("%0 = parameter(0) : f32[8]") and "fused(" in text
    assert _core.parse_graph(text).text() == text
    compiled = jax.jit(_chain).lower(jnp.ones(8)).compile()
    np.testing.assert_allclose(compiled(jnp.ones(8)), _chain(jnp.ones(8)), rtol=1e-6)


def test_primitive_without_lowering_runs_eagerly():
    double_p = core.Primitive("test_double")
    double_p.def_impl(lambda x: x * 2)
    double_p.def_abstract_eval(lambda x: x)
    f = jax.jit(lambda x: double_p.bind(jnp.sin(x)) + 1)
    x = jnp.arange(5.0)
    exe = _executable(lambda x: double_p.bind(jnp.sin(x)) + 1, x)
    assert isinstance(exe, lowering.JaxprExecutable) and exe.reason == "no lowering for test_double"
    np.testing.assert_allclose(f(x), np.sin(np.arange(5.0)) * 2 + 1, rtol=1e-6)


def test_every_primitive_lowers():
    import sys

    prims = {v for mod in list(sys.modules.values())
             if getattr(mod, "__name__", "").startswith("tinyxla")
             for v in vars(mod).values() if isinstance(v, core.Primitive)}
    # custom_lin only exists inside linear jaxprs, which are transposed, never run.
    missing = sorted(p.name for p in prims if p not in lowering._lowerings
                     and p not in lowering._inlined and p.name != "custom_lin")
    assert not missing, f"primitives without a lowering rule: {missing}"


def test_nested_calls_are_inlined_into_one_graph():
    inner = jax.jit(lambda x: jnp.exp(x) * 2.0)
    f = jax.checkpoint(lambda x: inner(x) + jnp.sin(x))
    x = jnp.linspace(0, 1, 16)
    exe = _executable(f, x)
    assert exe.num_kernels == 1, exe.text()
    np.testing.assert_allclose(jax.jit(f)(x), np.exp(np.linspace(0, 1, 16)) * 2 +
                               np.sin(np.linspace(0, 1, 16)), rtol=1e-5)


def test_donated_argument_becomes_the_output():
    f = jax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    y = jnp.ones(1000) + 0
    x = jnp.arange(1000.0) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    out = f(x, y)
    assert out.unsafe_buffer_pointer() == before
    np.testing.assert_array_equal(out, np.arange(1000.0) * 2 + 1)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[1000\]"):
        x + 1


def test_donation_of_an_argument_still_being_computed():
    f = jax.jit(lambda x, y: x * 2 + y, donate_argnums=0)
    y = jnp.ones(1_000_000)
    for _ in range(3):
        x = jnp.arange(1e6) * 1  # may still be running when f is called
        np.testing.assert_array_equal(f(x, y)[-2:], [1999997.0, 1999999.0])


def test_twenty_op_chain_peaks_at_three_buffers():
    @jax.jit
    def chain20(x):
        for i in range(10):
            x = jnp.sin(x) * (1.0 + i)
        return x

    x = jnp.ones(1_000_000)
    want = chain20(x)
    want.block_until_ready()
    del want
    _core.trim_memory_cache()
    _core.reset_peak_memory()
    base = _core.memory_stats()["bytes_in_use"] - x.nbytes
    out = chain20(x)
    out.block_until_ready()
    peak = _core.memory_stats()["peak_bytes_in_use"] - base
    assert peak <= 3 * x.nbytes


def test_dump_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TINYXLA_DUMP_DIR", str(tmp_path))

    def dumped(x):
        return jnp.cos(x) + 1.0

    jax.jit(dumped)(jnp.ones(4))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert [n.split(".", 1)[1] for n in names] == [
        "dumped.graph.txt", "dumped.jaxpr.txt", "dumped.optimized.txt"]
    texts = {n.split(".")[2]: (tmp_path / n).read_text() for n in names}
    assert texts["jaxpr"].startswith("{ lambda ; a:f32[4]. let")
    assert "cos(" in texts["graph"] and "fused(" in texts["optimized"]


def test_log_compiles_and_cache_miss_explanations(caplog):
    def logged(x, y):
        return x * y

    f = jax.jit(logged)
    jax.config.update("jax_log_compiles", True)
    jax.config.update("jax_explain_cache_misses", True)
    try:
        with caplog.at_level(logging.WARNING, logger="tinyxla"):
            f(jnp.ones(3), 2.0)
            f(jnp.ones(3), 3.0)  # cached: nothing logged
            f(jnp.ones(4), 2.0)
    finally:
        jax.config.update("jax_log_compiles", False)
        jax.config.update("jax_explain_cache_misses", False)
    messages = [r.getMessage() for r in caplog.records]
    assert any("never seen function:\n    logged id=" in m for m in messages)
    assert any("Compiling jit(logged) with global shapes and types (ShapedArray(float32[3]), "
               "ShapedArray(float32[], weak_type=True))." in m for m in messages)
    assert any("different input types:\n  * at x, now f32[4] and before f32[3]" in m
               for m in messages)
    assert sum("Finished tracing logged for jit" in m for m in messages) == 2


def test_hundred_thousand_equations_trace_and_compile():
    def long(x):
        for _ in range(100_000):
            x = x + 1.0
        return x

    jaxpr = jax.make_jaxpr(long)(1.0)
    assert len(jaxpr.jaxpr.eqns) == 100_000
    assert float(jax.jit(long)(jnp.float32(0.5))) == 100_000.5


def test_fast_call_path_keys_on_shape_dtype_and_weak_type():
    calls = []

    @jax.jit
    def f(x):
        calls.append(x.aval)
        return x * 2

    f(jnp.ones(3))
    f(jnp.arange(3.0) + 1)
    assert len(calls) == 1  # same signature: no retrace
    out = f(jnp.full((3,), 1.0))  # weak f32[3]: a new signature, and a weak result
    assert len(calls) == 2 and out.weak_type
    out = f(jnp.full((3,), 2) + jnp.int32(0))  # int32
    assert len(calls) == 3 and out.dtype == jnp.int32
    f(jnp.ones(4))
    assert len(calls) == 4
    jax.config.update("jax_enable_x64", True)
    try:
        f(jnp.ones(3))
        assert len(calls) == 5  # x64 is part of the key
    finally:
        jax.config.update("jax_enable_x64", False)
    np.testing.assert_array_equal(f(jnp.ones(3)), [2.0, 2.0, 2.0])
    assert len(calls) == 5


def test_fast_tree_path_keys_on_tree_leaves_and_scalar_types():
    # Pytree and Python-scalar arguments take a second cached path, keyed by the tree
    # (aux data included) and the leaves' signatures (a Python scalar by its type).
    import collections
    State = collections.namedtuple("State", ["step", "params"])
    calls = []

    @jax.jit
    def f(i, state, opts):
        calls.append(1)
        (w,) = state.params.values()
        return w * i + state.step, opts[0] * 2

    w = jnp.arange(3.0)
    out, o = f(2, State(jnp.float32(1), {"w": w}), (jnp.ones(2),))
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0])
    assert out.dtype == jnp.float32 and not out.weak_type
    f(3, State(jnp.float32(2), {"w": w + 1}), (jnp.zeros(2),))
    assert len(calls) == 1
    out, _ = f(3, State(jnp.float32(2), {"w": w}), (jnp.zeros(2),))
    np.testing.assert_array_equal(out, [2.0, 5.0, 8.0])  # the values of this call
    f(2.5, State(jnp.float32(1), {"w": w}), (jnp.ones(2),))  # float: a new signature
    assert len(calls) == 2
    f(True, State(jnp.float32(1), {"w": w}), (jnp.ones(2),))  # bool is not int
    assert len(calls) == 3
    f(2, State(jnp.float32(1), {"v": w}), (jnp.ones(2),))  # other dict keys: a new tree
    assert len(calls) == 4
    f(2, State(jnp.float32(1), {"w": w}), [jnp.ones(2)])  # list, not tuple
    assert len(calls) == 5
    f(2, State(jnp.float32(1), {"w": jnp.arange(4.0)}), (jnp.ones(2),))  # another shape
    assert len(calls) == 6
    f(2, State(jnp.float32(1), {"w": w}), (jnp.ones(2),))
    assert len(calls) == 6
    with pytest.raises(OverflowError):  # on the cached path as on the first call
        f(2 ** 40, State(jnp.float32(1), {"w": w}), (jnp.ones(2),))
    with pytest.raises(TypeError, match=r"problematic value is of type <class 'str'> and "
                                        r"was passed to the function at path opts\[0\]"):
        f(2, State(jnp.float32(1), {"w": w}), ("2",))


def test_disable_jit_runs_python():
    calls = []

    @jax.jit
    def f(x):
        calls.append(type(x).__name__)
        return x + 1

    x = jnp.ones(2)
    f(x)
    f(x)
    assert calls == ["DynamicJaxprTracer"]
    with jax.disable_jit():
        np.testing.assert_array_equal(f(x), [2.0, 2.0])
    assert calls == ["DynamicJaxprTracer", "ArrayImpl"]
    f(x)
    assert len(calls) == 2
