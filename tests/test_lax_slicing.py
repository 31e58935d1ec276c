"""lax's slicing primitives (dynamic_slice, dynamic_update_slice) against numpy: eager, under
jit (the C++ graph nodes and their text round trip), clamping as XLA clamps, JAX's errors,
and the numerical derivatives of both."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, lax
from tinyxla.test_util import check_grads


def _np_dynamic_slice(x, starts, sizes):
    starts = [min(max(s + d if s < 0 else s, 0), d - n) for s, d, n in zip(starts, x.shape, sizes)]
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


def _np_dynamic_update_slice(x, u, starts):
    out = x.copy()
    starts = [min(max(s + d if s < 0 else s, 0), d - n)
              for s, d, n in zip(starts, x.shape, u.shape)]
    out[tuple(slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return out


X = np.arange(30, dtype=np.float32).reshape(5, 6)
STARTS = [(0, 0), (1, 2), (4, 5), (-1, -3), (7, -9), (3, 100)]


@pytest.mark.parametrize("starts", STARTS)
@pytest.mark.parametrize("sizes", [(2, 3), (5, 6), (0, 2), (1, 1)])
def test_dynamic_slice_matches_numpy(starts, sizes):
    want = _np_dynamic_slice(X, starts, sizes)
    np.testing.assert_array_equal(lax.dynamic_slice(X, starts, sizes), want)
    idx = [jnp.int32(s) for s in starts]
    np.testing.assert_array_equal(lax.dynamic_slice(jnp.asarray(X), idx, sizes), want)
    f = jax.jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), sizes))
    np.testing.assert_array_equal(f(X, *idx), want)


@pytest.mark.parametrize("starts", STARTS)
@pytest.mark.parametrize("ushape", [(2, 3), (5, 6), (0, 2), (1, 1)])
def test_dynamic_update_slice_matches_numpy(starts, ushape):
    u = -np.arange(np.prod(ushape), dtype=np.float32).reshape(ushape) - 1
    want = _np_dynamic_update_slice(X, u, starts)
    np.testing.assert_array_equal(lax.dynamic_update_slice(X, u, starts), want)
    f = jax.jit(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)))
    np.testing.assert_array_equal(f(X, u, *[jnp.int32(s) for s in starts]), want)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int64, np.uint16, np.float64,
                                   np.complex64])
def test_dynamic_update_slice_dtypes(dtype):
    x = (np.arange(24) % 3).astype(dtype).reshape(2, 3, 4)
    u = np.ones((1, 2, 2), dtype)
    for idx_dtype in (np.int8, np.uint32, np.int64):
        starts = [idx_dtype(1), idx_dtype(1), idx_dtype(3)]
        got = lax.dynamic_update_slice(x, u, starts)
        np.testing.assert_array_equal(got, _np_dynamic_update_slice(x, u, [1, 1, 3]))
        np.testing.assert_array_equal(lax.dynamic_slice(got, starts, (1, 2, 2)), u)


def test_strided_operands():
    """Transposed and broadcast operands and updates are read through their strides."""
    x = jnp.asarray(X).T
    u = jnp.broadcast_to(jnp.arange(3.0), (2, 3))
    want = _np_dynamic_update_slice(X.T, np.broadcast_to(np.arange(3.0, dtype=np.float32),
                                                         (2, 3)), (2, 1))
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, u, (2, 1)), want)
    np.testing.assert_array_equal(lax.dynamic_slice(x[::-1], (1, 2), (3, 2)),
                                  _np_dynamic_slice(X.T[::-1], (1, 2), (3, 2)))


def test_negative_indices_and_allow_negative_indices():
    x = jnp.arange(10)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (jnp.int32(-3),), (2,)), [7, 8])
    np.testing.assert_array_equal(
        lax.dynamic_slice(x, (jnp.int32(-3),), (2,), allow_negative_indices=False), [0, 1])
    with pytest.raises(ValueError, match="Index -3 is out of bounds for dimension 10"):
        lax.dynamic_update_slice(x, x[:2], (-3,), allow_negative_indices=False)
    np.testing.assert_array_equal(
        lax.dynamic_update_slice(x, jnp.array([0, 0]), (jnp.int32(-1),)),
        [0, 1, 2, 3, 4, 5, 6, 7, 0, 0])


def test_in_dim_helpers():
    x = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(lax.dynamic_slice_in_dim(x, 2, 3, axis=1), x[:, 2:5])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, jnp.int32(1), 0, False), x[1])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 3, 1), x[:, 3:4])
    want = x.copy()
    want[:, 1:3] = 0
    np.testing.assert_array_equal(
        lax.dynamic_update_slice_in_dim(x, np.zeros((4, 2)), jnp.int32(1), axis=1), want)
    want = x.copy()
    want[2] = -1
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, -np.ones(6), 2, 0), want)


def test_errors():
    x = jnp.zeros((3, 4))
    with pytest.raises(TypeError, match="dynamic_update_slice update must have the same rank"):
        lax.dynamic_update_slice(x, jnp.zeros(2), (0, 0))
    with pytest.raises(TypeError, match="dynamic_update_slice update shape must be smaller"):
        lax.dynamic_update_slice(x, jnp.zeros((4, 1)), (0, 0))
    with pytest.raises(TypeError, match="index arguments to dynamic_update_slice must be "
                                        "integers of the same type, got: float32"):
        lax.dynamic_update_slice(x, jnp.zeros((1, 1)), (1.5, 0.5))
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        lax.dynamic_update_slice(x, jnp.zeros((1, 1), jnp.int32), (0, 0))
    with pytest.raises(ValueError, match="Length of slice indices must match"):
        lax.dynamic_update_slice(x, jnp.zeros((1, 1)), (0,))
    with pytest.raises(TypeError, match="slice slice_sizes must be less than or equal"):
        jax.jit(lambda x: lax.dynamic_slice(x, (0, 0), (4, 4)))(x)
    with pytest.raises(TypeError, match="start_indices arguments to dynamic_slice must be "
                                        "scalars"):
        lax.dynamic_slice(x, (jnp.zeros(2, jnp.int32), 0), (1, 1))


def test_graph_nodes_print_and_parse_back():
    f = jax.jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i)) +
                lax.dynamic_slice(x, (i, 0), (1, 4)))
    lowered = f.lower(jnp.zeros((3, 4)), jnp.ones((2, 2)), jnp.int32(1))
    text = lowered.as_text()
    assert "dynamic_update_slice(%0, %1," in text and "dynamic_slice(%0," in text
    assert _core.parse_graph(text).text() == text
    got = f(X[:3, :4], np.ones((2, 2), np.float32), jnp.int32(1))
    want = _np_dynamic_update_slice(X[:3, :4], np.ones((2, 2), np.float32), (1, 1)) + X[1:2, :4]
    np.testing.assert_array_equal(got, want)


def test_graph_builder_rejects_bad_nodes():
    b = _core.GraphBuilder()
    x = b.parameter([3, 4], 11)  # f32
    i = b.parameter([], 3)  # i32
    j = b.parameter([], 4)  # i64
    with pytest.raises(TypeError, match="dynamic_slice.*integers of the same type"):
        b.dynamic_slice(x, [i, j], [1, 1])
    with pytest.raises(TypeError, match="dynamic_slice.*slice_sizes"):
        b.dynamic_slice(x, [i, i], [4, 1])
    with pytest.raises(TypeError, match="dynamic_update_slice.*same rank"):
        b.dynamic_update_slice(x, b.parameter([4], 11), [i, i])
    with pytest.raises(TypeError, match="dynamic_update_slice.*start_indices must have length"):
        b.dynamic_update_slice(x, x, [i])


def test_dynamic_slice_in_a_jitted_loop():
    """A running window over rows, read and written at a traced position."""
    def step(carry, i):
        row = lax.dynamic_slice(carry, (i, 0), (1, 6))
        return lax.dynamic_update_slice(carry, row * 2, (i, 0))

    f = jax.jit(step)
    x = jnp.asarray(X)
    for i in range(5):
        x = f(x, jnp.int32(i))
    np.testing.assert_array_equal(x, X * 2)


@pytest.fixture
def x64():
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", prev)


@pytest.mark.parametrize("starts", [(1, 2), (4, -1)])
def test_grads(starts, x64):
    u = np.random.default_rng(0).standard_normal((2, 3))
    check_grads(lambda x, u: lax.dynamic_update_slice(x, u, starts), (X / np.float64(10), u), 2,
                modes=["fwd", "rev"])
    check_grads(lambda x: lax.dynamic_slice(x, starts, (3, 2)), (X / np.float64(10),), 2,
                modes=["fwd", "rev"])
    # The operand's cotangent is zero inside the window, the update's is the window.
    g_x, g_u = jax.grad(lambda x, u: jnp.sum(lax.dynamic_update_slice(x, u, starts) * X),
                        (0, 1))(X, np.float32(u))
    np.testing.assert_array_equal(g_x, _np_dynamic_update_slice(X, np.zeros((2, 3)), starts))
    np.testing.assert_array_equal(g_u, _np_dynamic_slice(X, starts, (2, 3)))
