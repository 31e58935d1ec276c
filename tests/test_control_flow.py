"""lax.cond, switch, while_loop, fori_loop, scan, map and associative_scan: values pinned
from JAX 0.10.2 (tests/control_flow_cases.py) under eager, jit, grad, vmap and their
compositions; Python-loop references; numerical derivatives; JAX's error messages and
jaxpr text."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla._src import core
from tinyxla._src.interpreters import lowering

from control_flow_cases import flat_results, run_cases

_PINNED = np.load(os.path.join(os.path.dirname(__file__), "data", "control_flow_jax.npz"))


@pytest.fixture(scope="module")
def results():
    return flat_results(run_cases(jax, jnp, lax))


@pytest.mark.parametrize("name", sorted(_PINNED.files))
def test_against_jax(results, name):
    np.testing.assert_allclose(results[name], _PINNED[name], rtol=2e-5, atol=1e-5)


# ---- Python-loop references -------------------------------------------------------------

def _py_scan(f, c, xs, reverse=False):
    ys = []
    idx = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in idx:
        c, y = f(c, xs[i])
        ys.append(y)
    return c, np.stack(ys[::-1] if reverse else ys)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_scan_matches_python_loop(reverse, wrap):
    xs = np.linspace(-1, 1, 7).astype(np.float32)
    f = lambda c, x: (c * 0.9 + x, c * x)
    run = lambda c, xs: lax.scan(f, c, xs, reverse=reverse)
    if wrap == "jit":
        run = jax.jit(run)
    c, ys = run(np.float32(0.3), xs)
    rc, rys = _py_scan(lambda c, x: (np.float32(c * np.float32(0.9) + x), np.float32(c * x)),
                       np.float32(0.3), xs, reverse)
    np.testing.assert_allclose(c, rc, rtol=1e-6)
    np.testing.assert_allclose(ys, rys, rtol=1e-6)


def test_scan_pytrees_and_xs_none():
    init = {"a": jnp.float32(1.0), "b": (jnp.zeros(2), jnp.int32(0))}
    def f(c, x):
        return {"a": c["a"] * 2, "b": (c["b"][0] + x["v"], c["b"][1] + 1)}, (x["v"].sum(), c["a"])
    xs = {"v": jnp.arange(6.0).reshape(3, 2)}
    c, (s, a) = lax.scan(f, init, xs)
    assert float(c["a"]) == 8.0 and int(c["b"][1]) == 3
    np.testing.assert_array_equal(c["b"][0], [6.0, 9.0])
    np.testing.assert_array_equal(s, [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(a, [1.0, 2.0, 4.0])
    c, ys = lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=4)
    assert int(c) == 4
    np.testing.assert_array_equal(ys, [0, 2, 4, 6])


def test_scan_length_zero():
    c, ys = lax.scan(lambda c, x: (c + x.sum(), c * x), jnp.float32(2.0), jnp.zeros((0, 3)))
    assert float(c) == 2.0 and ys.shape == (0, 3)
    c, ys = jax.jit(lambda c: lax.scan(lambda c, _: (c + 1, c), c, None, length=0))(1.0)
    assert float(c) == 1.0 and ys.shape == (0,)


def _types(tree):
    return [(str(x.dtype), x.shape, x.weak_type) for x in jax.tree_util.tree_leaves(tree)]


def test_empty_loops_give_jaxs_types():
    # Pinned from JAX 0.10.2: the carry takes the body's output types (a weak 1.0 carried
    # through strong float32 arithmetic comes out strong), even when no trip runs.
    f32 = ("float32", (), False)
    scan = lambda xs: lax.scan(lambda c, x: (c + x.sum(), c * x), 1.0, xs)
    for n in (0, 2):
        xs = jnp.zeros((n, 3))
        assert _types(scan(xs)) == [f32, ("float32", (n, 3), False)]
        assert _types(jax.jit(scan)(xs)) == [f32, ("float32", (n, 3), False)]
    pair = lambda: lax.scan(lambda c, x: ((c[0] + x, c[1] + 1), x.astype(jnp.int32)), (1.0, 2),
                            jnp.zeros((0,)))
    want = [f32, ("int32", (), True), ("int32", (0,), False)]
    assert _types(pair()) == want and _types(jax.jit(pair)()) == want
    assert _types(lax.scan(lambda c, _: (c + 1, c), 1.0, None, length=0)) == [
        ("float32", (), True), ("float32", (0,), True)]
    one = lambda i, c: c + jnp.float32(1)
    assert _types(lax.while_loop(lambda c: c < 0, lambda c: one(0, c), 1.0)) == [f32]
    assert _types(lax.fori_loop(0, 0, one, 1.0)) == [f32]
    assert _types(lax.fori_loop(0, jnp.int32(0), one, 1.0)) == [f32]


def test_fori_loop_static_and_traced_bounds():
    body = lambda i, x: x * 0.5 + i
    ref = 1.0
    for i in range(2, 9):
        ref = ref * 0.5 + i
    assert float(lax.fori_loop(2, 9, body, 1.0)) == pytest.approx(ref)
    assert float(jax.jit(lambda n: lax.fori_loop(2, n, body, 1.0))(9)) == pytest.approx(ref)
    assert float(lax.fori_loop(5, 2, body, 1.0)) == 1.0
    assert float(lax.fori_loop(0, 6, body, 1.0, unroll=3)) == pytest.approx(
        float(lax.fori_loop(0, 6, body, 1.0)))


def test_while_loop_pytree_and_int_carry():
    def body(c):
        i, (a, b) = c
        return i + 1, (b, a + b)
    i, (a, b) = lax.while_loop(lambda c: c[0] < 10, body, (0, (jnp.int32(0), jnp.int32(1))))
    assert (int(i), int(a), int(b)) == (10, 55, 89)
    assert int(jax.jit(lambda n: lax.while_loop(lambda c: c < n, lambda c: c * 2, 1))(100)) == 128


def test_cond_operand_forms():
    assert float(lax.cond(True, lambda: 1.0, lambda: 2.0)) == 1.0
    assert float(lax.cond(False, lambda x, y: x + y, lambda x, y: x - y, 1.0, 2.0)) == -1.0
    assert float(lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x * 2)) == 2.0
    assert float(lax.cond(2, lambda x: x + 1, lambda x: x * 2, 3.0)) == 4.0
    assert float(lax.cond(0.0, lambda x: x + 1, lambda x: x * 2, 3.0)) == 6.0
    assert float(jax.jit(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(False, 0.0)) == 1.0


def test_switch_clamps_index():
    fs = [lambda x: x + 1, lambda x: x * 2]
    assert float(lax.switch(5, fs, 3.0)) == 6.0
    assert float(lax.switch(-5, fs, 3.0)) == 4.0
    assert float(jax.jit(lambda i: lax.switch(i, fs, 3.0))(7)) == 6.0


def test_map_matches_python_loop():
    xs = np.arange(10.0, dtype=np.float32).reshape(5, 2)
    f = lambda x: jnp.sin(x) * x.sum()
    ref = np.stack([np.sin(x) * x.sum() for x in xs])
    for bs in (None, 2, 5, 7):
        np.testing.assert_allclose(lax.map(f, xs, batch_size=bs), ref, rtol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_cumsum(reverse):
    x = np.random.RandomState(1).randn(3, 37).astype(np.float32)
    out = lax.associative_scan(jnp.add, x, reverse=reverse, axis=-1)
    ref = np.flip(np.cumsum(np.flip(x, -1), -1), -1) if reverse else np.cumsum(x, -1)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jax.jit(lambda x: lax.associative_scan(jnp.add, x, axis=-1))(x),
                               np.cumsum(x, -1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn,ref", [(jnp.multiply, np.multiply), (jnp.maximum, np.maximum),
                                    (lax.min, np.minimum), (lambda a, b: b + a, np.add)])
def test_associative_scan_of_one_op_is_its_cumulative(fn, ref):
    x = np.random.RandomState(4).uniform(0.5, 1.5, (5, 6)).astype(np.float32)
    for axis, reverse in ((0, False), (1, True)):
        want = np.flip(ref.accumulate(np.flip(x, axis), axis), axis) if reverse else ref.accumulate(x, axis)
        scan = lambda x: lax.associative_scan(fn, x, reverse=reverse, axis=axis)
        np.testing.assert_allclose(scan(x), want, rtol=1e-6)
        np.testing.assert_allclose(jax.jit(scan)(x), want, rtol=1e-6)
        assert "cum" in str(jax.make_jaxpr(scan)(x))
    np.testing.assert_allclose(jax.vmap(lambda r: lax.associative_scan(fn, r))(x),
                               ref.accumulate(x, 1), rtol=1e-6)
    # Gradients as the tree of ops would give (numerically).
    g = jax.grad(lambda x: jnp.sum(lax.associative_scan(fn, x) ** 2))(x)
    eps, k = 1e-3, (2, 3)
    f = lambda x: float(np.sum(ref.accumulate(x.astype(np.float64), 0) ** 2))
    dx = np.zeros_like(x, np.float64)
    dx[k] = eps
    assert float(g[k]) == pytest.approx((f(x + dx) - f(x - dx)) / (2 * eps), rel=1e-3)


def test_associative_scan_of_other_functions_combines_pairs():
    x = np.random.RandomState(5).randn(13).astype(np.float32)
    out = lax.associative_scan(jnp.logaddexp, x)
    np.testing.assert_allclose(out, np.logaddexp.accumulate(x), rtol=1e-5)
    assert "cum" not in str(jax.make_jaxpr(lambda x: lax.associative_scan(jnp.logaddexp, x))(x))


def test_associative_scan_pytree_linear_recurrence():
    a = np.random.RandomState(2).uniform(0.5, 1.0, 9).astype(np.float32)
    b = np.random.RandomState(3).randn(9).astype(np.float32)
    def op(x, y):
        return (x[0] * y[0], y[0] * x[1] + y[1])
    _, h = lax.associative_scan(op, (a, b))
    ref, hs = 0.0, []
    for ai, bi in zip(a, b):
        ref = ai * ref + bi
        hs.append(ref)
    np.testing.assert_allclose(h, hs, rtol=1e-5, atol=1e-6)


# ---- derivatives against numerical ones -----------------------------------------------

def _numerical(f, x, eps=1e-3):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_grad_scan_numerical_first_and_second_order():
    xs = np.array([0.3, -0.2, 0.5], np.float32)
    f = lambda w: lax.scan(lambda c, x: (jnp.sin(c * w + x), c), 0.4, xs)[0]
    g = jax.grad(f)
    assert float(g(0.8)) == pytest.approx(_numerical(lambda w: float(f(w)), 0.8), rel=2e-3)
    assert float(jax.grad(g)(0.8)) == pytest.approx(_numerical(lambda w: float(g(w)), 0.8), rel=2e-2)


def test_grad_cond_inside_jit_and_switch_numerical():
    f = jax.jit(lambda x: lax.switch(jnp.int32(x > 0), [jnp.cos, lambda x: x ** 3], x))
    for x in (-0.7, 0.6):
        assert float(jax.grad(f)(x)) == pytest.approx(_numerical(lambda v: float(f(v)), x), rel=2e-3)


def test_while_loop_reverse_mode_error():
    f = lambda x: lax.while_loop(lambda c: c < 10, lambda c: c * 2, x)
    with pytest.raises(ValueError, match=re.escape(
            "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
            "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
            "start/stop.")):
        jax.grad(f)(1.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation"):
        jax.grad(jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2, x)))(1.0, 3)


# ---- errors, as JAX words them ---------------------------------------------------------

@pytest.mark.parametrize("call, exc, msg", [
    (lambda: lax.while_loop(lambda c: c < 10, lambda c: (c, c), 0), TypeError,
     "while_loop body function carry input and carry output must have the same pytree "
     "structure, but they differ:\n\nThe input carry c is a <class 'jax._src.core.ShapedArray'> "
     "but the corresponding component of the carry output is a <class 'tuple'>, so their "
     "Python types differ.\n\nRevise the function so that the carry output has the same pytree "
     "structure as the carry input."),
    (lambda: lax.while_loop(lambda c: (c < 10, 1), lambda c: c + 1, 0), TypeError,
     "cond_fun must return a boolean scalar, but got pytree PyTreeDef((*, *))."),
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 0), TypeError,
     "cond_fun must return a boolean scalar, but got output type(s) "
     "[ShapedArray(int32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: c < 10, lambda c: jnp.ones(2), jnp.float32(0)), TypeError,
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry c has type float32[] but the corresponding output carry "
     "component has type float32[2], so the shapes do not match.\n\nRevise the function so "
     "that all output types match the corresponding input types."),
    (lambda: lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), jnp.float32(0)), TypeError,
     "The input carry component loop_carry[1] has type float32[] but the corresponding output "
     "carry component has type int32[], so the dtypes do not match."),
    (lambda: lax.cond(jnp.array([True, False]), lambda x: x, lambda x: x, 1.), TypeError,
     "Pred must be a scalar, got [ True False] of shape (2,)."),
    (lambda: lax.cond(True, 1, lambda x: x, 1.), TypeError,
     "lax.cond: true_fun and false_fun arguments should be callable."),
    (lambda: lax.switch(1, [], 1.), ValueError, "Empty branch sequence"),
    (lambda: lax.switch(1.0, [lambda x: x], 1.), TypeError,
     "Index type must be an integer, got 1.0 as float32"),
    (lambda: lax.switch(0, [lambda x: x.astype(jnp.int32), lambda x: x], jnp.float32(1)),
     TypeError, "The output of branch 0 has type int32[] but the corresponding output of "
     "branch1 has type float32[], so the dtypes do not match."),
    (lambda: lax.cond(True, lambda x: x, lambda x: (x, x), 1.), TypeError,
     "true_fun output is a pytree leaf but false_fun output is a <class 'tuple'>, so their "
     "Python types differ."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., jnp.ones(3), length=4), ValueError,
     "scan got `length` argument of 4 which disagrees with leading axis sizes [3]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., None), ValueError,
     "scan got no values to scan over and `length` not provided."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., (jnp.ones(3), jnp.ones(4))), ValueError,
     "scan got values with different leading axis sizes: 3, 4."),
    (lambda: lax.scan(lambda c, x: c, 0., jnp.ones(3)), TypeError,
     "scan body output must be a pair, got ~float32[]."),
    (lambda: lax.scan(lambda c, x: (c, x), 0., 1.0), ValueError,
     "scan got value with no leading axis to scan over: 1.0."),
    (lambda: lax.associative_scan(jnp.add, [jnp.arange(5.), jnp.arange(4.)]), ValueError,
     "Array inputs to associative_scan must have the same first dimension. "
     "(saw: [(5,), (4,)])"),
    (lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 0., unroll=2))(3), ValueError,
     "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


def test_weak_typed_carry_is_promoted():
    out = lax.while_loop(lambda c: c < 10, lambda c: c + 1.0, 0)
    assert out.dtype == np.float32 and float(out) == 10.0
    c, _ = lax.scan(lambda c, x: (c + 1.0, x), 0, jnp.ones(3))
    assert c.dtype == np.float32 and not c.weak_type


def test_exception_inside_body_leaves_runtime_usable():
    def body(c):
        raise RuntimeError("boom in body")
    with pytest.raises(RuntimeError, match="boom in body"):
        lax.while_loop(lambda c: c < 3, body, 0)
    assert float(lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0)) == 3.0


# ---- jaxpr text ------------------------------------------------------------------------

def test_jaxpr_printing_matches_jax():
    text = str(jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x + 1., lambda x: x * 2., x))(
        True, 1.))
    assert text == """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = mul e 2.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 1.0:f32[] in (h,) }
      )
    ] c b
  in (d,) }"""
    text = str(jax.make_jaxpr(lambda x: lax.while_loop(
        lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.), (0, x)))(1.))
    assert text == """{ lambda ; a:f32[]. let
    b:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:f32[]. let
          f:i32[] = add d 1:i32[]
          g:f32[] = mul e 2.0:f32[]
        in (f, g) }
      body_nconsts=0
      cond_jaxpr={ lambda ; h:i32[] i:f32[]. let j:bool[] = lt h 10:i32[] in (j,) }
      cond_nconsts=0
    ] 0:i32[] a
  in (b, c) }"""
    text = str(jax.make_jaxpr(lambda x, xs: lax.scan(lambda c, a: (c + a, c * a), x, xs))(
        jnp.float32(1.), jnp.ones(3)))
    assert "scan[\n      jaxpr={ lambda ; e:f32[] f:f32[]. let" in text
    assert "length=3\n      num_carry=1\n      num_consts=0\n      reverse=False\n      unroll=1" in text


def test_transformed_jaxprs_type_check():
    xs = jnp.arange(3.0)
    f = lambda w: lax.scan(lambda c, x: (jnp.tanh(c * w + x), c), 0.1, xs)[0]
    for g, arg in ((f, 0.5), (jax.grad(f), 0.5), (jax.vmap(f), jnp.ones(2)),
                   (jax.vmap(jax.grad(f)), jnp.ones(2))):
        core.check_jaxpr(jax.make_jaxpr(g)(arg).jaxpr)


# ---- the C++ while_loop region ---------------------------------------------------------

def _executable(f, *args):
    return lowering.executable_for(jax.jit(f).lower(*args).jaxpr)


def test_loops_lower_to_one_region_graph():
    for f in (lambda x: lax.fori_loop(0, 10, lambda i, c: c * 0.5 + i, x),
              lambda x: lax.while_loop(lambda c: c < 100.0, lambda c: c * 2.0, x),
              lambda x: lax.scan(lambda c, a: (c + a, c * a), x, jnp.arange(4.0))[1]):
        exe = _executable(f, 1.0)
        assert isinstance(exe, lowering.GraphExecutable)
        assert "while_loop(" in exe.text()


def test_million_trip_loop_runs_in_constant_memory():
    dev = jax.devices()[0]
    f = jax.jit(lambda x: lax.fori_loop(0, 1_000_000, lambda i, c: c * 0.999 + 1.0, x))
    f(0.0).block_until_ready()
    before = dev.memory_stats()["bytes_in_use"]
    out = f(jnp.float32(0.0))
    assert float(out) == pytest.approx(1000.0, rel=1e-3)
    assert dev.memory_stats()["bytes_in_use"] - before < 1 << 16


def test_scan_writes_stacked_outputs_and_reads_slices_in_c():
    xs = np.random.RandomState(0).randn(300, 5).astype(np.float32)
    f = jax.jit(lambda c, xs: lax.scan(lambda c, x: (c * 0.5 + x, c.sum() * x), c, xs, reverse=True))
    c, ys = f(np.zeros(5, np.float32), xs)
    rc, rys = _py_scan(lambda c, x: (c * np.float32(0.5) + x, c.sum() * x),
                       np.zeros(5, np.float32), xs, reverse=True)
    np.testing.assert_allclose(c, rc, rtol=1e-5)
    np.testing.assert_allclose(ys, rys, rtol=1e-5, atol=1e-6)


def test_scan_outputs_nothing_reads_are_not_written():
    xs = np.random.RandomState(1).randn(20, 3).astype(np.float32)
    step = lambda c, x: (c * 0.5 + x, (jnp.sin(x) * c, c + 1.0))
    carry_only = jax.jit(lambda c, xs: lax.scan(step, c, xs)[0])
    one_ys = jax.jit(lambda c, xs: lax.scan(step, c, xs)[1][1])
    c0 = np.zeros(3, np.float32)
    rc, rys = _py_scan(lambda c, x: (c * np.float32(0.5) + x, c + np.float32(1.0)), c0, xs)
    np.testing.assert_allclose(carry_only(c0, xs), rc, rtol=1e-6)
    np.testing.assert_allclose(one_ys(c0, xs), rys, rtol=1e-6)
    assert "dynamic_update_slice" not in carry_only.lower(c0, xs).as_text()
    text = one_ys.lower(c0, xs).as_text()
    assert text.count("dynamic_update_slice") == 1 and "sin" not in text


def test_eager_loop_runs_as_one_compiled_region():
    out = lax.fori_loop(0, 100_000, lambda i, c: c * 0.5 + 1.0, jnp.float32(0.0))
    assert float(out) == 2.0
    assert isinstance(lowering.executable_for(jax.jit(
        lambda c: lax.fori_loop(0, 100_000, lambda i, c: c * 0.5 + 1.0, c)).lower(0.0).jaxpr),
        lowering.GraphExecutable)


def test_nested_loops_and_cond_inside_region():
    def f(x):
        def outer(i, c):
            inner = lax.fori_loop(0, i, lambda j, d: d + lax.cond(j % 2 == 0, lambda: 1.0,
                                                                 lambda: 2.0), 0.0)
            return c + inner
        return lax.fori_loop(0, 6, outer, x)
    ref = sum(sum(1.0 if j % 2 == 0 else 2.0 for j in range(i)) for i in range(6))
    assert float(jax.jit(f)(0.0)) == ref
    assert isinstance(_executable(f, 0.0), lowering.GraphExecutable)


@pytest.mark.parametrize("pred", [True, False])
def test_large_cond_runs_as_regions(pred):
    def big(x):
        for _ in range(6):
            x = jnp.sin(x) * 1.1 + 0.1
        return x

    def f(p, x):
        return lax.cond(p, big, lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), x)
    x = jnp.linspace(0.0, 1.0, 7)
    exe = _executable(f, pred, x)
    assert exe.text().count("while_loop(") >= 2
    np.testing.assert_allclose(jax.jit(f)(pred, x), f(pred, x), rtol=1e-6)
    np.testing.assert_allclose(f(pred, x), big(x) if pred else x * 8.0, rtol=1e-6)


def test_python_control_flow_on_traced_values_answered_by_lax():
    """jit cannot follow Python control flow on traced values (JAX's sharp bit); the lax
    versions of the same functions can, as JAX's documentation shows."""
    def f(x):
        return x if x > 0 else 2 * x

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(f)(1.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(g)(1.0, 5)
    f_lax = jax.jit(lambda x: lax.cond(x > 0, lambda x: x, lambda x: 2 * x, x))
    g_lax = jax.jit(lambda x, n: x + lax.while_loop(lambda i: i < n, lambda i: i + 1, 0))
    assert [float(f_lax(v)) for v in (3.0, -3.0)] == [f(3.0), f(-3.0)]
    assert float(g_lax(1.0, 5)) == g(1.0, 5)


def test_body_without_lowering_runs_trip_by_trip():
    """A body holding a primitive without a lowering (the host-driven gamma sampler) runs
    as a Python loop of its compiled body, eagerly and under jit."""
    keys = jax.random.split(jax.random.key(0), 3)
    f = lambda keys: lax.scan(lambda c, k: (c + jax.random.gamma(k, 2.0), c), 0.0, keys)
    ref_c, ref_ys = 0.0, []
    for k in keys:
        ref_ys.append(ref_c)
        ref_c = ref_c + float(jax.random.gamma(k, 2.0))
    for run in (f, jax.jit(f)):
        c, ys = run(keys)
        np.testing.assert_allclose(c, ref_c, rtol=1e-6)
        np.testing.assert_allclose(ys, ref_ys, rtol=1e-6)
