"""float32 products on tinyxla's own gemms (the AVX-512 one, or on AVX2 machines and Zen 4
the small one up to 64^3, and on AVX2 machines OpenBLAS above): results against float64
numpy over shapes that hit every edge of their blocking (14-row by 32-column tiles,
1152-deep, 112-row and 2048-wide blocks; 6-row by 16-column tiles), every storage order,
batches, and sizes split over the thread pool."""
import numpy as np
import pytest

import tinyxla as jax
from tinyxla import lax


def put(x):
    return jax.device_put(x)


def operand(x, transposed):
    """x on the device, stored transposed (read through a transposed view) if asked."""
    return put(np.ascontiguousarray(x.T)).T if transposed else put(x)


def check(got, a, b):
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    k = a.shape[-1]
    scale = np.sqrt(k) * max(1.0, np.abs(a).max() * np.abs(b).max())
    got = np.asarray(got)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)


SIZES = [1, 2, 3, 13, 14, 15, 16, 17, 31, 32, 33, 47, 64, 100, 113, 129, 225, 300]


@pytest.mark.parametrize("m", SIZES)
@pytest.mark.parametrize("n", [2, 15, 32, 33, 65, 300])
@pytest.mark.parametrize("k", [1, 7, 64, 385, 1151, 1153])
def test_shapes(m, n, k):
    rng = np.random.RandomState(m * 1000 + n * 10 + k)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(k, n).astype(np.float32)
    check(lax.dot(put(a), put(b)), a, b)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m,n,k", [(2, 3, 4), (15, 33, 17), (64, 64, 64), (100, 37, 300),
                                   (3, 300, 129), (300, 5, 64), (170, 150, 513),
                                   (400, 380, 270), (20, 700, 900), (40, 2100, 30)])
def test_storage_orders(trans_a, trans_b, m, n, k):
    rng = np.random.RandomState(m + n + k)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(k, n).astype(np.float32)
    check(lax.dot(operand(a, trans_a), operand(b, trans_b)), a, b)


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("m", [2, 5, 6, 7, 12, 64])
@pytest.mark.parametrize("n", [3, 8, 9, 16, 17, 64])
@pytest.mark.parametrize("k", [1, 4, 9, 64])
def test_small_tiles(trans_a, trans_b, m, n, k):
    # The small gemm's 6 x 16 tiles, their partial rows and masked columns, in every
    # storage order (a transposed b is packed row-major in 8 x 8 blocks, k and n ragged).
    rng = np.random.RandomState(m * 100 + n * 10 + k)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(k, n).astype(np.float32)
    got = lax.dot(operand(a, trans_a), operand(b, trans_b))
    check(got, a, b)
    jitted = jax.jit(lambda x, y: lax.dot(x, y))(operand(a, trans_a), operand(b, trans_b))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


@pytest.mark.parametrize("m,n,k", [(20, 30, 40), (200, 190, 300)])
def test_strided_operands(m, n, k):
    # Sliced views: row strides wider than the rows, in both storage orders.
    rng = np.random.RandomState(3)
    a_full = rng.randn(m + 5, k + 9).astype(np.float32)
    b_full = rng.randn(n + 3, k + 4).astype(np.float32)
    pa, pb = put(a_full)[2:m + 2, 3:k + 3], put(b_full)[1:n + 1, :k].T
    check(lax.dot(pa, pb), a_full[2:m + 2, 3:k + 3], b_full[1:n + 1, :k].T)


@pytest.mark.parametrize("batch,m,n,k", [(3, 5, 7, 9), (40, 64, 64, 64), (2, 300, 280, 260),
                                         (9, 90, 100, 110)])
def test_batched(batch, m, n, k):
    rng = np.random.RandomState(batch)
    a = rng.randn(batch, m, k).astype(np.float32)
    b = rng.randn(batch, k, n).astype(np.float32)
    check(lax.dot_general(put(a), put(b), (((2,), (1,)), ((0,), (0,)))), a, b)
    # The batch dim in the middle of b, and b read transposed.
    bt = np.ascontiguousarray(b.transpose(2, 0, 1))  # n, batch, k
    out = lax.dot_general(put(a), put(bt), (((2,), (2,)), ((0,), (1,))))
    check(out, a, b)


@pytest.mark.parametrize("m,k,n", [(3001, 576, 64), (2000, 1000, 130), (1500, 1024, 64),
                                   (777, 385, 256), (4100, 300, 33), (700, 2400, 64),
                                   (300, 2500, 200)])
@pytest.mark.parametrize("trans_b", [False, True])
def test_tall_products(m, k, n, trans_b):
    """Few columns: a row-major a is read in place (unless its rows are 4 KiB apart), split
    over the pool by rows, k in one or more blocks."""
    rng = np.random.RandomState(m + k + n)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(n, k).astype(np.float32).T if trans_b else rng.randn(k, n).astype(np.float32)
    check(lax.dot(put(a), put(b)), a, b)
    check(jax.jit(lax.dot)(put(a), put(b)), a, b)


@pytest.mark.parametrize("size", [520, 1030])
def test_large_split_over_pool(size):
    # Several KC and MC blocks, panels of b shared by the pool's threads.
    rng = np.random.RandomState(size)
    a = rng.randn(size, 2 * size + 3).astype(np.float32)
    b = rng.randn(2 * size + 3, size - 1).astype(np.float32)
    check(lax.dot(put(a), put(b)), a, b)
    check(lax.dot(operand(a, True), operand(b, True)), a, b)


@pytest.mark.parametrize("m,n,k", [(5, 6, 7), (70, 80, 300), (300, 290, 280)])
def test_nan_inf_propagate(m, n, k):
    rng = np.random.RandomState(1)
    a = rng.randn(m, k).astype(np.float32)
    b = rng.randn(k, n).astype(np.float32)
    a[1, 3] = np.nan
    a[m - 1, k - 1] = np.inf
    b[2, n - 1] = np.nan
    b[k - 1, 0] = -np.inf
    got = np.asarray(lax.dot(put(a), put(b)))
    with np.errstate(invalid="ignore"):
        want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_array_equal(np.sign(got[np.isinf(got)]), np.sign(want[np.isinf(want)]))
    assert np.isnan(got[1]).all() and np.isnan(got[:, n - 1]).all()


def test_jit_matmul_matches_eager():
    rng = np.random.RandomState(2)
    x = rng.randn(64, 64).astype(np.float32)
    w = rng.randn(64, 64).astype(np.float32)
    got = jax.jit(lambda x, w: x @ w)(put(x), put(w))
    check(got, x, w)
