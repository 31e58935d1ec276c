"""Checks of tinyxla.numpy functions against references, shared by the test_numpy_* files:
exact agreement with numpy, jit == eager, vmap == a Python loop, and reverse-mode
gradients against central differences."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp


def assert_same(got: Any, want: Any, *, dtype: Any = None, rtol: float = 0.0,
                atol: float = 0.0) -> None:
    """Equal shapes and values (sequences element by element); the dtype too if given."""
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_same(g, w, dtype=dtype, rtol=rtol, atol=atol)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    if dtype is not None:
        assert g.dtype == np.dtype(dtype), (g.dtype, dtype)
    if rtol or atol:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(g, w)


def assert_jit_matches(fn: Callable[..., Any], *args: Any) -> None:
    """fn under jit gives eager's result, with the same dtype."""
    want = fn(*args)
    got = jax.jit(fn)(*args)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def assert_vmap_matches(fn: Callable[[Any], Any], batch: Any) -> None:
    """vmap(fn) over the leading axis equals stacking fn of each row."""
    got = jax.vmap(fn)(batch)
    rows = [fn(batch[i]) for i in range(batch.shape[0])]
    want = jax.tree_util.tree_map(lambda *r: jnp.stack(r), *rows)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def assert_grad_numeric(fn: Callable[[Any], Any], x: np.ndarray, eps: float = 1e-3,
                        tol: float = 1e-2) -> None:
    """grad of sum(fn(x) * w) (a fixed random w) against central differences."""
    w = np.random.default_rng(0).standard_normal(np.shape(fn(jnp.asarray(x))))
    w = w.astype(np.float32)

    def scalar(v: Any) -> Any:
        return jnp.sum(fn(v) * w)

    g = np.asarray(jax.grad(scalar)(jnp.asarray(x)))
    num = np.zeros_like(x, dtype=np.float64)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = (float(scalar(jnp.asarray(hi))) - float(scalar(jnp.asarray(lo)))) / (2 * eps)
    np.testing.assert_allclose(g, num, rtol=tol, atol=tol)
