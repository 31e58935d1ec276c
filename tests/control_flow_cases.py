"""The control-flow cases whose results tests/test_control_flow.py compares with values
pinned from JAX 0.10.2 (tests/data/control_flow_jax.npz, written by
tests/data/make_control_flow_jax.py running these same cases under jax)."""
from __future__ import annotations

from typing import Any

import numpy as np


def run_cases(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    """Each case's result (arrays, or lists of them) by name."""
    def rnn(W, U, h0, xs):
        def step(h, x):
            h = jnp.tanh(W @ h + U @ x)
            return h, h.sum()
        return lax.scan(step, h0, xs)

    rng = np.random.RandomState(0)
    W = (rng.randn(4, 4) * 0.5).astype(np.float32); U = rng.randn(4, 3).astype(np.float32)
    h0 = rng.randn(4).astype(np.float32); xs = rng.randn(5, 3).astype(np.float32)

    def loss(W, U, h0, xs):
        h, ys = rnn(W, U, h0, xs)
        return (h ** 2).sum() + ys.sum()

    def fcond(x, p):
        return lax.cond(p > 0, lambda x: jnp.sin(x) * 3., lambda x: jnp.cos(x) * x, x)

    def fswitch(x, i):
        return lax.switch(i, [lambda x: x * 2., lambda x: jnp.sin(x), lambda x: x ** 3], x)

    def ffori(x):
        return lax.fori_loop(0, 4, lambda i, c: c * jnp.sin(c) + i, x)

    def fwhile(x):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1 + jnp.sin(c[1])), (0, x))[1]

    def newton(a):
        return lax.while_loop(lambda c: jnp.abs(c * c - a) > 1e-5 * a, lambda c: 0.5 * (c + a / c), a)

    def fscan_rev(x, xs):
        return lax.scan(lambda c, a: (c * a + 1., c), x, xs, reverse=True)

    out: dict[str, Any] = {}
    out["rnn_h"], out["rnn_ys"] = [np.asarray(v) for v in rnn(W, U, h0, xs)]
    out["rnn_grad"] = [np.asarray(g) for g in jax.grad(loss, argnums=(0, 1, 2, 3))(W, U, h0, xs)]
    out["rnn_jit_grad"] = [np.asarray(g) for g in jax.jit(jax.grad(loss, argnums=(0, 2)))(W, U, h0, xs)]
    out["rnn_vmap"] = np.asarray(jax.vmap(lambda h: rnn(W, U, h, xs)[0])(np.stack([h0, h0 * 2])))
    out["rnn_vmap_xs"] = np.asarray(jax.vmap(lambda x: rnn(W, U, h0, x)[1], in_axes=1)(np.stack([xs, xs * 0.5], 1)))
    out["cond"] = [float(fcond(1.3, 1.)), float(fcond(1.3, -1.))]
    out["cond_grad"] = [float(jax.grad(fcond)(1.3, 1.)), float(jax.grad(fcond)(1.3, -1.))]
    out["cond_jit_grad"] = [float(jax.jit(jax.grad(fcond))(1.3, 1.)), float(jax.jit(jax.grad(fcond))(1.3, -1.))]
    out["cond_vmap"] = np.asarray(jax.vmap(fcond)(jnp.array([1.3, 0.2, -0.7]), jnp.array([1., -1., 2.])))
    out["cond_vmap_grad"] = np.asarray(jax.vmap(jax.grad(fcond))(jnp.array([1.3, 0.2, -0.7]), jnp.array([1., -1., 2.])))
    out["switch"] = [float(fswitch(0.7, i)) for i in range(-1, 4)]
    out["switch_grad"] = [float(jax.grad(fswitch)(0.7, i)) for i in range(3)]
    out["switch_vmap"] = np.asarray(jax.vmap(fswitch)(jnp.array([0.7, 0.8, 0.9, 1.0]), jnp.array([0, 1, 2, 5])))
    out["fori"] = float(ffori(0.5))
    out["fori_grad"] = float(jax.grad(ffori)(0.5))
    out["fori_grad2"] = float(jax.grad(jax.grad(ffori))(0.5))
    out["fori_jit"] = float(jax.jit(ffori)(0.5))
    out["while"] = float(fwhile(0.5))
    out["while_jvp"] = [float(v) for v in jax.jvp(fwhile, (0.5,), (1.0,))]
    out["while_jit"] = float(jax.jit(fwhile)(0.5))
    out["newton_vmap"] = np.asarray(jax.vmap(newton)(jnp.array([2., 9., 100., 0.5])))
    out["newton_jit_vmap"] = np.asarray(jax.jit(jax.vmap(newton))(jnp.array([2., 9., 100., 0.5])))
    out["scan_rev"] = [np.asarray(v) for v in fscan_rev(0.5, jnp.array([1., 2., 0.5]))]
    out["scan_rev_grad"] = np.asarray(jax.grad(lambda x, xs: fscan_rev(x, xs)[1].sum(), argnums=1)(0.5, jnp.array([1., 2., 0.5])))
    out["map_bs"] = np.asarray(lax.map(lambda x: x ** 2 + 1, jnp.arange(7.), batch_size=3))
    out["assoc"] = np.asarray(lax.associative_scan(jnp.add, jnp.arange(1., 12.)))
    out["assoc_rev_mul"] = np.asarray(lax.associative_scan(jnp.multiply, jnp.arange(1., 7.), reverse=True))
    out["assoc_axis"] = np.asarray(lax.associative_scan(jnp.maximum, jnp.array([[1., 5., 2.], [3., 0., 7.]]), axis=1))
    out["vmap_scan_cond"] = np.asarray(jax.vmap(lambda x: lax.scan(lambda c, a: (lax.cond(a > 0, lambda c: c + a, lambda c: c * 2., c), c), x, jnp.array([1., -1., 2.]))[1])(jnp.array([0.5, 1.5])))
    out["grad_vmap_scan"] = np.asarray(jax.grad(lambda w: jax.vmap(lambda h: rnn(w, U, h, xs)[0].sum())(np.stack([h0, -h0])).sum())(W))
    out["hessian_scan"] = np.asarray(jax.hessian(lambda x: lax.scan(lambda c, a: (jnp.sin(c * a), c), x, jnp.array([1., 2.]))[0])(0.3))
    out["remat_scan"] = np.asarray(jax.grad(lambda w: lax.scan(jax.checkpoint(lambda c, a: (jnp.tanh(w * c + a), None)), 0.1, jnp.arange(4.))[0])(0.7))
    out["jacfwd_while"] = float(jax.jacfwd(fwhile)(0.5))
    out["int_carry"] = np.asarray(lax.scan(lambda c, a: (c + a, c * a), jnp.int32(1), jnp.arange(5))[1])
    out["complex_carry"] = np.asarray(lax.scan(lambda c, a: (c * (1 + 1j) + a, c), jnp.complex64(1), jnp.arange(3.))[1])
    x23 = jnp.arange(6.).reshape(2, 3)
    out["psum_in_vmapped_scan"] = np.asarray(jax.vmap(lambda x: lax.scan(
        lambda c, a: (c + lax.psum(a, 'i') * c, c), 1., x), axis_name='i')(x23)[1])
    inner = jax.jit(lambda c, a: jnp.sin(c) * a)
    out["jit_in_body_vmap"] = np.asarray(jax.vmap(lambda x: lax.scan(
        lambda c, a: (inner(c, a) + 1., c), 0.5, x))(x23)[0])
    out["jit_in_body_grad"] = np.asarray(jax.grad(lambda w: lax.scan(
        lambda c, a: (inner(c, a * w), c), 0.5, x23[1])[0])(0.7))
    return out


def flat_results(results: dict[str, Any]) -> dict[str, np.ndarray]:
    """``results`` with each list of arrays spread into ``name.i`` entries."""
    flat = {}
    for name, value in results.items():
        if isinstance(value, list):
            flat.update({f"{name}.{i}": np.asarray(v) for i, v in enumerate(value)})
        else:
            flat[name] = np.asarray(value)
    return flat
