"""Fused epilogues of convolutions: elementwise consumers of a conv (bias, activations)
run inside the conv's output loop as one kernel (a fused node whose body starts with the
conv), with the unfused answers: eager == jit base tier == jit upper tier."""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, lax
from tinyxla._src.interpreters import lowering

_DN = ("NHWC", "HWIO", "NHWC")


def _executable(f, *args):
    return lowering.executable_for(jax.jit(f).lower(*args).jaxpr)


def _conv(x, w, **kw):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=_DN, **kw)


def _bias_relu(x, w, b):
    return jnp.maximum(_conv(x, w) + b, 0.0)


def _args(rng, n=2, hw=9, c=5, o=7):
    return (rng.standard_normal((n, hw, hw, c)).astype(np.float32),
            rng.standard_normal((3, 3, c, o)).astype(np.float32),
            rng.standard_normal((1, 1, 1, o)).astype(np.float32))


def _upper(f, *args):
    os.environ["TINYXLA_CODEGEN"] = "1"
    try:
        compiled = jax.jit(f).lower(*args).compile()
    finally:
        del os.environ["TINYXLA_CODEGEN"]
    compiled.wait_codegen()
    return compiled(*args)


@pytest.mark.parametrize("f,kernels", [
    (_bias_relu, 1),                                          # conv + bias + relu: one kernel
    (lambda x, w, b: jnp.tanh(_conv(x, w)), 1),               # a lone elementwise consumer
    (lambda x, w, b: _conv(x, w) * _conv(x, w) + b, 1),       # CSE'd conv read twice by one node
    (lambda x, w, b: (jax.nn.relu(_conv(x, w) + b), jnp.exp(_conv(x, w) + b)), 1),  # 2 outputs
    (lambda x, w, b: (_bias_relu(x, w, b), _conv(x, w)), 1),  # the conv's result also returned
    (lambda x, w, b: (jnp.tanh(_conv(x, w)), jnp.sum(_conv(x, w))), 2),  # and read later
    (lambda x, w, b: jnp.sum(_conv(x, w) + b), 2),            # a reduction is no epilogue
])
def test_epilogue_runs_in_the_conv_kernel(f, kernels):
    rng = np.random.default_rng(0)
    args = _args(rng)
    exe = _executable(f, *args)
    assert exe.num_kernels == kernels, exe.text()
    eager, jitted, upper = f(*args), jax.jit(f)(*args), _upper(f, *args)
    for e, j, u in zip(jax.tree.leaves(eager), jax.tree.leaves(jitted), jax.tree.leaves(upper)):
        np.testing.assert_array_equal(np.asarray(j), np.asarray(e))
        np.testing.assert_array_equal(np.asarray(u), np.asarray(e))


def test_fused_graph_has_one_kernel_fewer_and_its_text_parses_back(monkeypatch):
    rng = np.random.default_rng(1)
    args = _args(rng)
    fused = _executable(_bias_relu, *args)
    # The same program compiled without epilogue fusion: the conv and its epilogue apart.
    monkeypatch.setenv("TINYXLA_FUSE_EPILOGUES", "0")
    apart = lowering.compile_jaxpr(jax.jit(_bias_relu).lower(*args).jaxpr)
    monkeypatch.delenv("TINYXLA_FUSE_EPILOGUES")
    assert fused.num_kernels == apart.num_kernels - 1 == 1
    np.testing.assert_array_equal(np.asarray(apart(list(args))[0]),
                                  np.asarray(jax.jit(_bias_relu)(*args)))
    text = jax.jit(_bias_relu).lower(*args).as_text()
    body = text.split("fused(")[1]
    assert body.index("conv") < body.index("max"), text
    assert _core.parse_graph(text).text() == text


def test_epilogue_in_place_and_into_other_dtypes():
    """Results of another dtype than the conv's (a temporary holds the conv's values), and
    a big output the epilogue streams."""
    rng = np.random.default_rng(2)
    x, w, b = _args(rng, n=8, hw=32, c=16, o=64)
    f = lambda x, w, b: (jnp.tanh(_conv(x, w) + b).astype(ml_dtypes.bfloat16),
                         _conv(x, w) > b)
    for got, want in zip(jax.jit(f)(x, w, b), f(x, w, b)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    big = _args(rng, n=32, hw=32, c=8, o=64)  # 8 MB result: chunked by the conv's rows
    np.testing.assert_array_equal(np.asarray(jax.jit(_bias_relu)(*big)),
                                  np.asarray(_bias_relu(*big)))


def test_groups_and_kernel_gradients_keep_their_answers():
    """Grouped convs run their epilogue after the conv; kernel-gradient shapes (the
    reduction split over taps) too; the CNN's jit(grad) equals the eager one."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 8, 4)).astype(np.float32)
    wg = rng.standard_normal((3, 3, 2, 6)).astype(np.float32)
    grouped = lambda x, w: jax.nn.relu(_conv(x, w, feature_group_count=2) * 2.0)
    np.testing.assert_array_equal(np.asarray(jax.jit(grouped)(x, wg)),
                                  np.asarray(grouped(x, wg)))
    w1 = rng.standard_normal((3, 3, 4, 8)).astype(np.float32) * 0.3
    w2 = rng.standard_normal((3, 3, 8, 8)).astype(np.float32) * 0.3
    b1 = rng.standard_normal((1, 1, 1, 8)).astype(np.float32)

    def loss(p, x):
        h = jax.nn.relu(_conv(x, p[0]) + p[2])
        return jnp.sum(jnp.tanh(_conv(h, p[1])))
    params = (w1, w2, b1)
    want = jax.grad(loss)(params, x)
    got = jax.jit(jax.grad(loss))(params, x)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
    # The forward convs' results, read again by the backward pass, leave their epilogue's
    # kernel as extra outputs: both run with their consumers (a kernel gradient followed
    # by a transpose stays alone).
    exe = _executable(jax.grad(loss), params, x)
    top = [line for line in exe.text().splitlines() if line.startswith("%")]
    anchored = exe.text().count(" conv(") - sum(" conv(" in line for line in top)
    assert anchored >= 2, exe.text()
