"""Large scatters (gather_scatter.cc splits the output into parts, each applying the rows in
order): every element sees its updates in the serial order, so results equal numpy's
unbuffered ``ufunc.at`` (which applies them in index order) bit for bit, duplicates
included, eager and under jit, and do not depend on the number of threads."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from one_core import assert_same_on_one_core

N, ROWS = 20_000, 200_000  # operand elements, updates (~10 per element, out-of-bounds some)

_NUMPY_AT = {"add": np.add.at, "multiply": np.multiply.at, "min": np.minimum.at,
             "max": np.maximum.at}


def _operands(dtype, op):
    rng = np.random.default_rng(4)
    idx = rng.integers(-N, N + 50, ROWS).astype(np.int32)  # negatives wrap; >= N dropped
    if np.issubdtype(dtype, np.complexfloating):
        v = (rng.standard_normal(ROWS) + 1j * rng.standard_normal(ROWS)).astype(dtype)
        x = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(dtype)
    elif np.issubdtype(dtype, np.integer):
        v = rng.integers(-50, 50, ROWS).astype(dtype)
        x = rng.integers(-50, 50, N).astype(dtype)
    else:
        v = rng.standard_normal(ROWS).astype(dtype)
        x = rng.standard_normal(N).astype(dtype)
    if op == "multiply":  # near 1, so products stay finite
        v = (1 + (v.real / 64 if np.iscomplexobj(v) else v / 64)).astype(dtype)
    return x, idx, v


def _numpy_scatter(op, x, idx, v):
    y = x.copy()
    keep = idx < len(x)
    if op == "set":
        for i, u in zip(idx[keep], v[keep]):  # last row wins: the explicit serial order
            y[i] = u
    else:
        _NUMPY_AT[op](y, idx[keep], v[keep])
    return y


@pytest.mark.parametrize("op,dtype", [
    ("add", np.float32), ("add", np.int32), ("add", np.float16), ("add", np.complex64),
    ("multiply", np.float32), ("min", np.float32), ("max", np.float32), ("max", np.int32),
    ("set", np.float32), ("set", np.complex64)])
def test_vector_scatter_with_duplicates_matches_serial_numpy(op, dtype):
    x, idx, v = _operands(dtype, op)
    want = _numpy_scatter(op, x, idx, v)
    f = lambda a, i, u: getattr(a.at[i], op)(u)  # noqa: E731
    for got in (f(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v)),
                jax.jit(f)(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v))):
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)


def test_row_windows_straddling_parts_match_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5001, 16)).astype(np.float32)  # parts split mid-row
    idx = rng.integers(0, 5001, 100_000).astype(np.int32)
    v = rng.standard_normal((100_000, 16)).astype(np.float32)
    want = x.copy()
    np.add.at(want, idx, v)
    f = lambda a, i, u: a.at[i].add(u)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v))),
                                  want)
    np.testing.assert_array_equal(
        np.asarray(jax.jit(f)(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v))), want)


def test_overlapping_windows_along_the_scattered_dim():
    # Windows of 3 consecutive elements starting anywhere: they overlap each other and the
    # parts' boundaries.
    rng = np.random.default_rng(6)
    x = rng.standard_normal(100_000).astype(np.float32)
    starts = rng.integers(0, 100_000 - 3, 50_000).astype(np.int32)
    u = rng.standard_normal((50_000, 3)).astype(np.float32)
    dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                        scatter_dims_to_operand_dims=(0,))
    f = lambda a, s, w: lax.scatter_add(a, s[:, None], w, dnums)  # noqa: E731
    want = x.copy()
    np.add.at(want, starts[:, None] + np.arange(3), u)  # row-major: the rows' order
    for got in (f(jnp.asarray(x), jnp.asarray(starts), jnp.asarray(u)),
                jax.jit(f)(jnp.asarray(x), jnp.asarray(starts), jnp.asarray(u))):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_batched_scatter_under_vmap_matches_numpy():
    # vmap gives the scatter operand batching dims: the kernel's general (unravelled) path.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 5000)).astype(np.float32)
    idx = rng.integers(0, 5000, (8, 20_000)).astype(np.int32)
    v = rng.standard_normal((8, 20_000)).astype(np.float32)
    got = jax.vmap(lambda a, i, u: a.at[i].add(u))(jnp.asarray(x), jnp.asarray(idx),
                                                  jnp.asarray(v))
    want = x.copy()
    for b in range(8):
        np.add.at(want[b], idx[b], v[b])
    np.testing.assert_array_equal(np.asarray(got), want)


def test_complex_max_and_min_order_lexicographically():
    # Pinned from jax 0.10.2: (real, imag) order, duplicates combined in turn.
    x = jnp.zeros(4, jnp.complex64)
    i = jnp.array([[0], [0], [1]], jnp.int32)
    u = jnp.array([1 + 2j, 1 - 5j, -1 + 3j], jnp.complex64)
    dnums = lax.ScatterDimensionNumbers((), (0,), (0,))
    np.testing.assert_array_equal(np.asarray(lax.scatter_max(x, i, u, dnums)),
                                  np.array([1 + 2j, 0, 0, 0], np.complex64))
    np.testing.assert_array_equal(np.asarray(jax.jit(lax.scatter_min, static_argnums=3)(
        x, i, u, dnums)), np.array([0, -1 + 3j, 0, 0], np.complex64))


# Scatters large enough to split over the pool, run here and on one core.
_CASES = """
import numpy as np
import tinyxla as jax
import tinyxla.numpy as jnp

rng = np.random.default_rng(12)
x = jnp.asarray(rng.standard_normal(100_000).astype(np.float32))
idx = jnp.asarray(rng.integers(0, 100_000, 1_000_000).astype(np.int32))
v = jnp.asarray(rng.standard_normal(1_000_000).astype(np.float32))
rows = jnp.asarray(rng.standard_normal((30_001, 8)).astype(np.float32))
ridx = jnp.asarray(rng.integers(0, 30_001, 200_000).astype(np.int32))
rv = jnp.asarray(rng.standard_normal((200_000, 8)).astype(np.float32))
add = jax.jit(lambda a, i, u: a.at[i].add(u))
CASES = {
    "add": lambda: x.at[idx].add(v),
    "add_jit": lambda: add(x, idx, v),
    "set": lambda: x.at[idx].set(v),
    "max_int": lambda: x.astype(jnp.int32).at[idx].max((v * 100).astype(jnp.int32)),
    "half_add": lambda: x.astype(jnp.float16).at[idx].add(v.astype(jnp.float16)),
    "rows_add": lambda: rows.at[ridx].add(rv),
    "rows_add_jit": lambda: add(rows, ridx, rv),
}
"""


def test_results_do_not_depend_on_the_number_of_threads(tmp_path):
    assert_same_on_one_core(_CASES, tmp_path)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64])
def test_integer_add_into_a_small_vector_matches_serial_numpy(x64, dtype):
    # Many updates into few elements take the partial-sums path (bincount's shape); integer
    # sums wrap, so its bits are the serial order's, overflow included.
    rng = np.random.default_rng(7)
    n, rows = 1000, 100_000
    x = rng.integers(0, 100, n).astype(dtype)
    v = rng.integers(0, 120, rows).astype(dtype)
    idx = rng.integers(-n, n + 20, rows).astype(np.int32)  # negatives wrap; >= n dropped
    keep = idx < n
    want = x.copy()
    np.add.at(want, idx[keep], v[keep])
    f = lambda a, i, u: a.at[i].add(u)  # noqa: E731
    for got in (f(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v)),
                jax.jit(f)(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(v))):
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), want)
    got = jnp.asarray(x).at[jnp.asarray(np.abs(idx))].add(jnp.asarray(v), mode="clip")
    want_clip = x.copy()
    np.add.at(want_clip, np.minimum(np.abs(idx), n - 1), v)
    np.testing.assert_array_equal(np.asarray(got), want_clip)


def test_bincount_counts_match_numpy():
    x = np.random.default_rng(8).integers(0, 1000, 300_000).astype(np.int32)
    want = np.bincount(x, minlength=1000)
    np.testing.assert_array_equal(np.asarray(jnp.bincount(jnp.asarray(x), length=1000)), want)
    np.testing.assert_array_equal(
        np.asarray(jax.jit(lambda v: jnp.bincount(v, length=1000))(jnp.asarray(x))), want)
