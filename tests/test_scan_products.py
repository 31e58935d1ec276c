"""Products in a scan body made whole-scan products at lowering (scan_products.py): an
xs-by-constant product hoisted before the loop, a dot-product accumulator formed by one
product after it. Values against numpy and against the same functions unrolled in Python
(no scan); the lowered graph text shows where the products went."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

RNG = np.random.RandomState(0)


def _arr(*shape):
    return RNG.randn(*shape).astype(np.float32)


def _body_and_after(text: str) -> tuple[str, str, str]:
    """The graph text before the (last) while_loop, its body, and what follows it."""
    start = text.rindex("while_loop(")
    end = text.index("\n} :", start)
    return text[:start], text[start:end], text[end:]


def _rnn(W, U, h0, xs, reverse=False):
    def step(h, x):
        h = jnp.tanh(h @ W + x @ U)
        return h, h
    return lax.scan(step, h0, xs, reverse=reverse)


def _rnn_unrolled(W, U, h0, xs, reverse=False):
    h, ys = h0, [None] * xs.shape[0]
    order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    for t in order:
        h = jnp.tanh(h @ W + xs[t] @ U)
        ys[t] = h
    return h, jnp.stack(ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_grad_matches_unrolled(reverse):
    W, U = _arr(16, 16) / 4, _arr(8, 16) / 3
    h0, xs = _arr(5, 16), _arr(7, 5, 8)
    loss = lambda f: lambda W, U, h0, xs: jnp.sum(f(W, U, h0, xs, reverse)[1] ** 2)
    got = jax.jit(jax.grad(loss(_rnn), argnums=(0, 1, 2, 3)))(W, U, h0, xs)
    want = jax.grad(loss(_rnn_unrolled), argnums=(0, 1, 2, 3))(W, U, h0, xs)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


def test_rnn_grad_graph_has_whole_scan_products():
    W, U = _arr(64, 64), _arr(64, 64)
    h0, xs = _arr(4, 64), _arr(10, 4, 64)
    loss = lambda W, U, h0, xs: jnp.sum(_rnn(W, U, h0, xs)[1] ** 2)
    text = jax.jit(jax.grad(loss, argnums=(0, 1))).lower(W, U, h0, xs).as_text()
    # Forward: xs @ U for all trips before the loop; backward: W's and U's cotangents are
    # each one product contracting the trip and batch axes after the loop.
    assert re.search(r"dot_general\(%3, %1\) \{lhs_contracting=\[2\].*: f32\[10,4,64\]", text)
    before, body, after = _body_and_after(text)
    assert body.count("dot_general") == 1
    assert after.count("lhs_contracting=[0,1], rhs_contracting=[0,1]") == 2


def test_accumulated_products_against_numpy():
    a, b = _arr(6, 3, 5), _arr(6, 3, 4)
    acc0 = _arr(5, 4)

    def f(acc0, a, b, reverse):
        step = lambda acc, ab: (acc + ab[0].T @ ab[1], None)
        return lax.scan(step, acc0, (a, b), reverse=reverse)[0]

    want = acc0 + np.einsum("tki,tkj->ij", a, b)
    for reverse in (False, True):
        got = jax.jit(f, static_argnums=3)(acc0, a, b, reverse)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        after = _body_and_after(jax.jit(f, static_argnums=3).lower(acc0, a, b, reverse).as_text())[2]
        assert "dot_general" in after


def test_accumulator_of_computed_operand_and_transpose():
    a, W = _arr(6, 3, 5), _arr(5, 5)

    def f(a, W):
        def step(c, x):
            acc, h = c
            h = jnp.tanh(x @ W + h)
            return (acc + (h.T @ x).T, h), None
        return lax.scan(step, (jnp.zeros((5, 5)), jnp.zeros((3, 5))), a)[0][0]

    acc, h = np.zeros((5, 5), np.float32), np.zeros((3, 5), np.float32)
    for x in a:
        h = np.tanh(x @ W + h)
        acc = acc + (h.T @ x).T
    np.testing.assert_allclose(jax.jit(f)(a, W), acc, rtol=1e-5, atol=1e-5)
    after = _body_and_after(jax.jit(f).lower(a, W).as_text())[2]
    assert "dot_general" in after


def test_accumulator_read_in_the_body_stays():
    a = _arr(4, 3, 3)

    def f(a):
        step = lambda acc, x: (acc + acc @ x * 0.1 + x.T @ x, None)
        return lax.scan(step, jnp.eye(3), a)[0]

    acc = np.eye(3, dtype=np.float32)
    for x in a:
        acc = acc + acc @ x * 0.1 + x.T @ x
    np.testing.assert_allclose(jax.jit(f)(a), acc, rtol=1e-5, atol=1e-5)
    assert "dot_general" not in _body_and_after(jax.jit(f).lower(a).as_text())[2]


def test_accumulator_smaller_than_its_operands_stays():
    a = _arr(5, 40, 2)  # u_t and v_t: 80 elements each; the accumulator: 4

    def f(a):
        def step(acc, x):
            y = jnp.sin(x)
            return acc + y.T @ y, None
        return lax.scan(step, jnp.zeros((2, 2)), a)[0]

    want = sum(np.sin(x).T @ np.sin(x) for x in a)
    np.testing.assert_allclose(jax.jit(f)(a), want, rtol=1e-5, atol=1e-5)
    assert "dot_general" not in _body_and_after(jax.jit(f).lower(a).as_text())[2]


@pytest.mark.parametrize("reverse", [False, True])
def test_hoisted_products(reverse):
    xs, ys, C = _arr(6, 3, 4), _arr(6, 4, 2), _arr(4, 5)
    B, bx = _arr(2, 3, 4), _arr(6, 2, 4, 3)

    def f(xs, ys, C, B, bx):
        def step(c, t):
            x, y, b = t
            lhs = x @ C                          # xs slice on the left
            rhs = lax.dot_general(C, x, (((0,), (1,)), ((), ())))  # on the right
            both = x @ y                         # both sliced: the trip is a batch axis
            batched = jnp.einsum("bij,bjk->bik", B, b)  # with batch dims
            c = c + jnp.sum(lhs) + jnp.sum(rhs) + jnp.sum(both) + jnp.sum(batched)
            return c, (lhs, rhs, both, batched)
        return lax.scan(step, jnp.float32(0), (xs, ys, bx), reverse=reverse)

    got = jax.jit(f)(xs, ys, C, B, bx)
    lhs = xs @ C
    rhs = np.swapaxes(lhs, 1, 2)
    both = xs @ ys
    batched = np.einsum("bij,tbjk->tbik", B, bx)
    np.testing.assert_allclose(got[1][0], lhs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][1], rhs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][2], both, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][3], batched, rtol=1e-5, atol=1e-5)
    total = lhs.sum() + rhs.sum() + both.sum() + batched.sum()
    np.testing.assert_allclose(got[0], total, rtol=1e-4)
    before, body, _ = _body_and_after(jax.jit(f).lower(xs, ys, C, B, bx).as_text())
    assert "dot_general" not in body and before.count("dot_general") == 4


def test_hoisted_product_of_carry_stays():
    xs, W = _arr(5, 2, 3), _arr(3, 3)

    def f(xs, W):
        return lax.scan(lambda h, x: (jnp.tanh(h @ W + x), None), jnp.zeros((2, 3)), xs)[0]

    h = np.zeros((2, 3), np.float32)
    for x in xs:
        h = np.tanh(h @ W + x)
    np.testing.assert_allclose(jax.jit(f)(xs, W), h, rtol=1e-5, atol=1e-5)
    assert "dot_general" in _body_and_after(jax.jit(f).lower(xs, W).as_text())[1]


def test_vmap_of_grad_of_rnn():
    W, U = _arr(8, 8) / 3, _arr(4, 8) / 2
    h0, xs = _arr(3, 8), _arr(2, 5, 3, 4)  # xs batched on axis 0
    loss = lambda f: lambda W, xs: jnp.sum(f(W, U, h0, xs)[1] ** 2)
    got = jax.jit(jax.vmap(jax.grad(loss(_rnn)), in_axes=(None, 0)))(W, xs)
    for i in range(xs.shape[0]):
        want = jax.grad(loss(_rnn_unrolled))(W, xs[i])
        np.testing.assert_allclose(got[i], want, rtol=2e-5, atol=2e-5)


def test_empty_scan_keeps_initial_accumulator():
    acc0 = _arr(3, 3)
    f = lambda acc0, a: lax.scan(lambda acc, x: (acc + x.T @ x, None), acc0, a)[0]
    np.testing.assert_array_equal(jax.jit(f)(acc0, np.zeros((0, 2, 3), np.float32)), acc0)
