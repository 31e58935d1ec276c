"""jax.stages: jit(f).trace / .lower / .compile, cost_analysis hand counts (pinned from
JAX 0.10.2's XLA cost analysis), shardings and args_info."""
import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import stages


def test_trace_lower_compile_chain():
    f = jax.jit(lambda x: x * 2)
    traced = f.trace(jnp.ones(3))
    assert isinstance(traced, stages.Traced)
    assert str(traced.jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    lowered = traced.lower()
    assert isinstance(lowered, stages.Lowered)
    assert lowered.as_text()
    compiled = lowered.compile()
    assert isinstance(compiled, stages.Compiled)
    np.testing.assert_allclose(compiled(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    assert compiled.as_text()


def test_trace_uses_jits_cache():
    log = []

    def g(x):
        log.append(1)
        return x + 1

    jax.jit(g).trace(1.0)
    jax.jit(g).lower(1.0).compile()
    jax.jit(g)(1.0)
    assert len(log) == 1


def test_cost_analysis_dot():
    # JAX 0.10.2: flops 1024.0 (2*4*8*16), bytes accessed 896.0 ((32 + 128 + 64) * 4).
    c = jax.jit(lambda x, y: x @ y).lower(jnp.ones((4, 8)), jnp.ones((8, 16))).compile()
    assert c.cost_analysis() == {"flops": 1024.0, "bytes accessed": 896.0}


def test_cost_analysis_elementwise():
    # JAX 0.10.2: x * y + 1 on 100 elements: 200 flops, 1200 bytes; exp(x) * 2: 100 flops,
    # 100 transcendentals, 800 bytes.
    c = jax.jit(lambda x, y: x * y + 1.0).lower(jnp.ones(100), jnp.ones(100)).compile()
    assert c.cost_analysis() == {"flops": 200.0, "bytes accessed": 1200.0}
    c = jax.jit(lambda x: jnp.exp(x) * 2).lower(jnp.ones(100)).compile()
    assert c.cost_analysis() == {"flops": 100.0, "bytes accessed": 800.0,
                                 "transcendentals": 100.0}


def test_cost_analysis_counts_nested_jit():
    inner = jax.jit(lambda x: x * 3)
    c = jax.jit(lambda x: inner(x) + 1).lower(jnp.ones(10)).compile()
    assert c.cost_analysis()["flops"] == 20.0


def test_shardings_and_args_info():
    c = jax.jit(lambda x, y: x @ y).lower(jnp.ones((4, 8)), jnp.ones((8, 16))).compile()
    s = jax.devices()[0]
    ins, kw = c.input_shardings
    assert kw == {} and len(ins) == 2 and all(i.device_set == {s} for i in ins)
    assert c.output_shardings.device_set == {s}
    (a, b), kw = c.args_info
    assert kw == {}
    assert repr(a) == "ArgInfo(_aval=ShapedArray(float32[4,8]), donated=False)"
    assert b.shape == (8, 16) and b.dtype == np.float32 and not b.donated


def test_donated_args_info():
    t = jax.jit(lambda x, y: x + y, donate_argnums=0).trace(jnp.ones(2), jnp.ones(2))
    (a, b), _ = t.args_info
    assert a.donated and not b.donated


def test_out_info_and_pytrees():
    t = jax.jit(lambda d: {"s": d["a"].sum(), "a": d["a"]}).trace({"a": jnp.ones((2, 3))})
    out = t.out_info
    assert out["s"].shape == () and out["a"].shape == (2, 3)
    c = t.lower().compile()
    res = c({"a": jnp.ones((2, 3))})
    assert float(res["s"]) == 6.0


def test_memory_analysis_hand_counts():
    # x @ w is an intermediate (8*32*4 = 1024 bytes); tanh's result is written over it,
    # the product times 2 is an output. JAX 0.10.2 gives the same argument size (2560);
    # its output size is 1044: XLA adds a 16-byte tuple index table to the 1028 here.
    def f(x, w):
        h = x @ w
        return jnp.tanh(h).sum(), h * 2

    m = jax.jit(f).lower(jnp.ones((8, 16)), jnp.ones((16, 32))).compile().memory_analysis()
    assert (m.argument_size_in_bytes, m.output_size_in_bytes, m.alias_size_in_bytes,
            m.temp_size_in_bytes) == (2560, 1028, 0, 1024)
    assert m.peak_memory_in_bytes == 2560 + 1028 + 1024
    assert m.generated_code_size_in_bytes == 0 and m.host_temp_size_in_bytes == 0


def test_memory_analysis_in_place_reuse_and_live_ranges():
    # sort(x) is a 4000-byte intermediate; x*2 is written over it; the second sort is the
    # output: one intermediate buffer at a time.
    g = jax.jit(lambda x: jnp.sort(jnp.sort(x) * 2))
    m = g.lower(jnp.ones(1000)).compile().memory_analysis()
    assert (m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes) == (
        4000, 4000, 4000)
    # While sort(-x) runs, sort(x), -x and sort(-x) are alive: 12000 bytes; the sum is then
    # written over a dead sort.
    h = jax.jit(lambda x: jnp.sort(jnp.sort(x) + jnp.sort(-x)))
    c = h.lower(jnp.ones(1000)).compile()
    assert [line.split(" = ")[1].split("(")[0] for line in c.as_text().splitlines()[1:5]] == [
        "sort", "neg", "sort", "add"]
    assert c.memory_analysis().temp_size_in_bytes == 12000
    # Nothing but elementwise work: no intermediates.
    e = jax.jit(lambda x: jnp.tanh(x) * 2 + 1).lower(jnp.ones(10)).compile().memory_analysis()
    assert e.temp_size_in_bytes == 0


def test_memory_analysis_alias_of_donated_arguments():
    # JAX 0.10.2 counts a donated argument's buffer taken by an output as alias bytes.
    f = lambda x: x * 2 + 1  # noqa: E731
    donated = jax.jit(f, donate_argnums=0).lower(jnp.ones(256)).compile().memory_analysis()
    kept = jax.jit(f).lower(jnp.ones(256)).compile().memory_analysis()
    assert (donated.alias_size_in_bytes, kept.alias_size_in_bytes) == (1024, 0)
    assert donated.peak_memory_in_bytes == 1024


def test_compiled_as_text_is_after_fusion():
    c = jax.jit(lambda x: jnp.tanh(x * 2.0) + 1.0).lower(jnp.ones(8)).compile()
    text = c.as_text()
    assert "fused(" in text and "tanh(" in text
    assert text.count("= parameter(") == 2  # the graph's and the fused body's
