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


def test_donated_operand_is_updated_in_place():
    f = jax.jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), donate_argnums=0)
    x = jnp.arange(1000, dtype=jnp.float32) + 0
    x.block_until_ready()
    before = x.unsafe_buffer_pointer()
    out = f(x, jnp.ones(4), 3)
    assert out.unsafe_buffer_pointer() == before
    want = np.arange(1000, dtype=np.float32)
    want[3:7] = 1
    np.testing.assert_array_equal(out, want)


def _peak_buffers(f, *args, nbytes):
    """Bytes allocated at the peak of running ``f`` beyond what was live before, in
    units of ``nbytes``."""
    f(*args).block_until_ready()  # compiled, warm
    _core.reset_peak_memory()
    start = _core.memory_stats()["bytes_in_use"]
    out = f(*args)
    out.block_until_ready()
    return (_core.memory_stats()["peak_bytes_in_use"] - start) / nbytes, out


def test_update_of_a_dead_intermediate_copies_nothing():
    """Each update writes into its dead operand's buffer, and the last one into the
    output's: the doubled array and the result are the only buffers (copying updates
    would need a third)."""
    n = 1 << 20

    def chain(x, i):
        y = x * 2
        for k in range(4):
            y = lax.dynamic_update_slice(y, jnp.full((3,), float(k)), (i + k,))
        return y

    x = jnp.arange(n, dtype=jnp.float32) + 0
    peak, out = _peak_buffers(jax.jit(chain), x, jnp.int32(5), nbytes=4 * n)
    assert peak < 2.5, peak
    want = np.arange(n, dtype=np.float32) * 2
    for k in range(4):
        want[5 + k:8 + k] = k
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(x[:4], [0, 1, 2, 3])  # the argument is untouched


def test_update_of_a_live_operand_copies():
    """An operand still needed later is not overwritten."""
    def f(x, i):
        y = x * 2
        z = lax.dynamic_update_slice(y, jnp.zeros(2), (i,))
        return z + y

    x = jnp.arange(8.0)
    np.testing.assert_array_equal(jax.jit(f)(x, 1), f(x, 1))
    np.testing.assert_array_equal(jax.jit(f)(x, 1)[:4], [0, 2, 4, 12])


# ---------------------------------------------------------------------------------------
# gather and scatter

ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
ELEMS = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1),
                                   start_index_map=(0, 1))
ROWS_S = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
ELEMS_S = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1),
                                      scatter_dims_to_operand_dims=(0, 1))


def _both(f, *args):
    """``f(*args)`` eagerly and under jit, checked equal; returns the eager result."""
    eager = f(*args)
    np.testing.assert_array_equal(jax.jit(f)(*args), eager)
    return np.asarray(eager)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.bool_, np.complex64])
def test_gather_rows_and_elements_match_numpy(dtype):
    x = (np.arange(30) % 7).astype(dtype).reshape(5, 6)
    i = np.array([[4], [0], [2], [2]], np.int32)
    np.testing.assert_array_equal(_both(lambda x, i: lax.gather(x, i, ROWS, (1, 6)), x, i),
                                  x[i[:, 0]])
    e = np.array([[[1, 5], [0, 0]], [[4, 2], [3, 3]]], np.int64)
    np.testing.assert_array_equal(_both(lambda x, e: lax.gather(x, e, ELEMS, (1, 1)), x, e),
                                  x[e[..., 0], e[..., 1]])


def test_gather_windows_and_offset_dims():
    """2x3 windows at each start, the window dims placed before the batch dim."""
    x = np.arange(48.0, dtype=np.float32).reshape(6, 8)
    dn = lax.GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(),
                                    start_index_map=(0, 1))
    starts = np.array([[0, 0], [4, 5], [1, 2]], np.int32)
    got = _both(lambda x, s: lax.gather(x, s, dn, (2, 3)), x, starts)
    want = np.stack([x[a:a + 2, b:b + 3] for a, b in starts], axis=-1)
    np.testing.assert_array_equal(got, want)


# Pinned from jax 0.10.2 on CPU: a start that does not fit is clamped (clip,
# promise_in_bounds, the default) or fills the whole window (fill).
def test_gather_modes_pinned_from_jax():
    x = jnp.arange(10.0).reshape(5, 2)
    i = jnp.array([[3], [5], [-1], [4]])
    assert lax.gather(x, i, ROWS, (1, 2), mode="clip").tolist() == \
        [[6.0, 7.0], [8.0, 9.0], [0.0, 1.0], [8.0, 9.0]]
    assert lax.gather(x, i, ROWS, (1, 2), mode="promise_in_bounds").tolist() == \
        [[6.0, 7.0], [8.0, 9.0], [0.0, 1.0], [8.0, 9.0]]
    assert lax.gather(x, i, ROWS, (1, 2)).tolist() == \
        [[6.0, 7.0], [8.0, 9.0], [0.0, 1.0], [8.0, 9.0]]  # the default: promise_in_bounds
    filled = np.asarray(lax.gather(x, i, ROWS, (1, 2), mode="fill"))
    np.testing.assert_array_equal(filled[[0, 3]], [[6, 7], [8, 9]])
    assert np.isnan(filled[[1, 2]]).all()
    windows = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
                                         start_index_map=(0,))
    y = jnp.arange(6)
    # A window of 3 at start 4 does not fit in 6: clip moves it to 3, fill fills it all.
    assert lax.gather(y, jnp.array([[4], [1]]), windows, (3,), mode="clip").tolist() == \
        [[3, 4, 5], [1, 2, 3]]
    assert lax.gather(y, jnp.array([[4], [1]]), windows, (3,), mode="fill").tolist() == \
        [[-2147483648] * 3, [1, 2, 3]]
    assert lax.gather(y.astype(jnp.uint8), jnp.array([[9]]), windows, (1,),
                      mode="fill").tolist() == [[255]]
    assert lax.gather(y.astype(jnp.uint8), jnp.array([[9]]), windows, (1,)).tolist() == [[5]]
    assert lax.gather(y > 2, jnp.array([[9]]), windows, (1,), mode="fill").tolist() == [[True]]
    assert lax.gather(y, jnp.array([[9]]), windows, (1,), mode="fill",
                      fill_value=7).tolist() == [[7]]


def _np_scatter(op, x, rows, updates, mode):
    out = x.copy()
    for r, u in zip(rows, updates):
        if not 0 <= r < x.shape[0]:
            if mode == "clip":
                r = min(max(r, 0), x.shape[0] - 1)
            else:
                continue
        out[r] = op(out[r], u)
    return out


SCATTERS = {
    "scatter": (lax.scatter, lambda a, b: b),
    "scatter_add": (lax.scatter_add, lambda a, b: a + b),
    "scatter_mul": (lax.scatter_mul, lambda a, b: a * b),
    "scatter_min": (lax.scatter_min, np.minimum),
    "scatter_max": (lax.scatter_max, np.maximum),
}


@pytest.mark.parametrize("name", sorted(SCATTERS))
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds", "drop"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16])
def test_scatters_match_a_loop(name, mode, dtype):
    """Rows in order: duplicates accumulate (set: the last wins); rows that do not fit are
    dropped except in clip mode."""
    scatter, op = SCATTERS[name]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 5, (5, 3)).astype(dtype)
    rows = np.array([1, 3, 1, 7, -1, 4, 1], np.int32)
    u = rng.integers(1, 4, (7, 3)).astype(dtype)
    got = _both(lambda x, i, u: scatter(x, i, u, ROWS_S, mode=mode), x, rows[:, None], u)
    np.testing.assert_array_equal(got, _np_scatter(op, x, rows, u, mode or "drop"))


def test_scatter_bool_and_complex():
    x = np.array([True, False, False, True])
    i = np.array([[1], [2], [1]])
    u = np.array([True, False, True])
    one = lax.ScatterDimensionNumbers((), (0,), (0,))
    np.testing.assert_array_equal(lax.scatter_add(x, i, u, one), [True, True, False, True])
    np.testing.assert_array_equal(lax.scatter_mul(x, i, u, one), [True, False, False, True])
    z = np.array([1 + 1j, 2, 3], np.complex64)
    np.testing.assert_array_equal(lax.scatter_mul(z, np.array([[0]]), np.array([1j], np.complex64),
                                                  one), [-1 + 1j, 2, 3])


def test_scatter_nan_propagates_through_min_max():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    i = np.array([[0], [1], [2]])
    u = np.array([np.nan, 0.0, 5.0], np.float32)
    one = lax.ScatterDimensionNumbers((), (0,), (0,))
    np.testing.assert_array_equal(lax.scatter_max(x, i, u, one), [np.nan, np.nan, 5.0])
    np.testing.assert_array_equal(lax.scatter_min(x, i, u, one), [np.nan, np.nan, 3.0])


def test_scatter_window_that_does_not_fit_is_dropped_whole():
    """A window of 2 at start 3 of 4 elements: dropped entirely, not partly written
    (pinned from jax 0.10.2)."""
    x = jnp.zeros(4)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0,))
    u = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    i = jnp.array([[3], [1]])
    assert lax.scatter_add(x, i, u, dn).tolist() == [0.0, 3.0, 4.0, 0.0]
    assert lax.scatter_add(x, i, u, dn, mode="clip").tolist() == [0.0, 3.0, 5.0, 2.0]
    assert lax.scatter_add(x, i, u, dn, mode="promise_in_bounds").tolist() == \
        [0.0, 3.0, 4.0, 0.0]


def test_batching_dims():
    """operand_batching_dims pair operand dim 0 with indices dim 0: row b picks from x[b]."""
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    i = np.array([[[2], [0]], [[1], [1]]], np.int32)  # (batch 2, 2 picks, 1)
    dn = lax.GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    got = _both(lambda x, i: lax.gather(x, i, dn, (1, 1, 4)), x, i)
    np.testing.assert_array_equal(got, np.stack([x[b][i[b, :, 0]] for b in range(2)]))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(2,), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
    got = _both(lambda x, i, u: lax.scatter_add(x, i, u, sdn), x, i, np.ones((2, 2, 4), np.float32))
    want = x.copy()
    for b in range(2):
        for r in i[b, :, 0]:
            want[b, r] += 1
    np.testing.assert_array_equal(got, want)


def test_gather_scatter_errors():
    x = jnp.zeros((3, 4))
    with pytest.raises(ValueError, match="indices must have an integer type"):
        lax.gather(x, jnp.zeros((2, 1)), ROWS, (1, 4))
    with pytest.raises(TypeError, match="Slice size at index 1 in gather op is out of range"):
        lax.gather(x, jnp.zeros((2, 1), jnp.int32), ROWS, (1, 5))
    with pytest.raises(TypeError, match="Gather op can only collapse slice dims with bound 1"):
        lax.gather(x, jnp.zeros((2, 1), jnp.int32), ROWS, (2, 4))
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        lax.scatter_add(x, jnp.zeros((2, 1), jnp.int32), jnp.zeros((2, 4), jnp.int32), ROWS_S)
    with pytest.raises(TypeError, match="Bounds of the scatter dimensions of updates"):
        lax.scatter(x, jnp.zeros((2, 1), jnp.int32), jnp.zeros((3, 4)), ROWS_S)
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        lax.gather(x, jnp.zeros((2, 1), jnp.int32), ROWS, (1, 4), mode="wrap")
    with pytest.raises(TypeError, match="lax.scatter requires arguments to have the same"):
        jax.jit(lambda x: lax.scatter_add(x, jnp.zeros((2, 1), jnp.int32),
                                          jnp.zeros((2, 4), jnp.int32), ROWS_S))(x)


def test_gather_scatter_nodes_print_and_parse_back():
    def f(x, i, u):
        g = lax.gather(x, i, ROWS, (1, 4), mode="fill", fill_value=-1.0)
        return lax.scatter_max(x, i, u, ROWS_S) + g.sum()

    args = (jnp.ones((3, 4)), jnp.array([[2], [0]]), jnp.zeros((2, 4)))
    text = jax.jit(f).lower(*args).as_text()
    assert "gather(%0, %1, " in text and "slice_sizes=[1,4], mode=1" in text
    assert "scatter_max(%0, %1, %2) {update_window_dims=[1]" in text
    assert _core.parse_graph(text).text() == text


def test_scatter_into_a_dead_intermediate_copies_nothing():
    n = 1 << 20

    def f(x, i, u):
        y = x * 2
        for k in range(3):
            y = lax.scatter_add(y, i + k, u, lax.ScatterDimensionNumbers((), (0,), (0,)))
        return y

    x = jnp.arange(n, dtype=jnp.float32) + 0
    i = jnp.array([[5], [5], [9]])
    peak, out = _peak_buffers(jax.jit(f), x, i, jnp.ones(3), nbytes=4 * n)
    assert peak < 2.5, peak
    want = np.arange(n, dtype=np.float32) * 2
    for k in range(3):
        np.add.at(want, np.array([5, 5, 9]) + k, 1)
    np.testing.assert_array_equal(out, want)


def test_gather_transpose_is_scatter_add():
    x = jnp.arange(5.0)
    i = jnp.array([[1], [1], [3], [7]])
    one = lax.GatherDimensionNumbers((), (0,), (0,))
    jaxpr = jax.make_jaxpr(jax.grad(lambda x: lax.gather(x, i, one, (1,), mode="clip").sum()))(x)
    assert "scatter-add" in str(jaxpr)
    np.testing.assert_array_equal(
        jax.grad(lambda x: lax.gather(x, i, one, (1,), mode="clip").sum())(x), [0, 2, 0, 1, 1])
    # Filled (out-of-bounds) windows get no gradient.
    np.testing.assert_array_equal(
        jax.grad(lambda x: lax.gather(x, i, one, (1,), mode="fill").sum())(x), [0, 2, 0, 1, 0])
