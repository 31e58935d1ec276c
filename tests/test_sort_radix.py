"""The radix path of sort (one operand sorted along its last, contiguous axis, rows of at
least 256): bit-exact against a numpy stable reference for every dtype it takes, at sizes
around its thresholds (256 elements, the chunk of 2**16, least- vs most-significant-digit
first at 2**18), with -0.0/0.0, denormals (zeros under DAZ, as JAX's CPU sort compares
them) and NaNs of several payloads and signs kept in input order; eager, jit, vmap,
strided and donated inputs, and one core against the pool."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from one_core import assert_same_on_one_core

_rng = np.random.RandomState(7)

_NAN_BITS32 = np.array([0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFF812345, 0x7F800001],
                       np.uint32)
_NAN_BITS64 = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001,
                        0xFFF0000000ABCDEF], np.uint64)


def _floats(dtype, shape, specials=True):
    """randn with repeats, and when `specials`: signed zeros, denormals, infinities and
    NaNs of several payloads, so that every run the sort must keep in order occurs."""
    x = _rng.randn(*shape).astype(dtype)
    x.flat[::7] = np.round(x.flat[::7])  # repeats
    if not specials:
        return x
    tiny = np.finfo(dtype).tiny
    flat = x.reshape(-1)
    size = flat.size
    pick = _rng.randint(0, 8, size=size)
    flat[pick == 0] = 0.0
    flat[pick == 1] = -0.0
    flat[pick == 2] = tiny / 4 * np.sign(_rng.randn(int((pick == 2).sum()))).astype(dtype)
    flat[pick == 3] = np.inf * np.sign(_rng.randn(int((pick == 3).sum()))).astype(dtype)
    nans = _NAN_BITS32 if dtype == np.float32 else _NAN_BITS64
    bits = flat.view(nans.dtype)
    where = np.flatnonzero(pick == 4)
    bits[where] = nans[_rng.randint(0, len(nans), size=where.size)]
    return x


def _reference(x):
    """Stable sort along the last axis: NaNs last, -0.0, 0.0 and (DAZ) denormals equal."""
    if not np.issubdtype(x.dtype, np.floating):
        return np.sort(x, axis=-1, kind="stable")
    nan = np.isnan(x)
    clean = np.where(nan | (np.abs(x) < np.finfo(x.dtype).tiny), 0, x)
    order = np.lexsort((clean, nan), axis=-1)
    return np.take_along_axis(x, order, axis=-1)


def _ints(dtype, shape):
    """Uniform over every bit pattern of the dtype, with repeats."""
    x = _rng.randint(0, 256, size=shape + (np.dtype(dtype).itemsize,), dtype=np.uint8)
    x = x.view(dtype).reshape(shape)
    x.flat[::5] = x.flat[::3][: x[..., ::5].size]
    return x


def _assert_bits(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [255, 256, 257, 1000, 65536 + 3, 2**18, 2**18 + 1, 300_000])
def test_float32_bits_match_the_stable_reference(n):
    x = _floats(np.float32, (n,))
    want = _reference(x)
    _assert_bits(jnp.sort(jnp.asarray(x)), want)
    _assert_bits(jax.jit(jnp.sort)(jnp.asarray(x)), want)


@pytest.mark.parametrize("n", [256, 4099, 2**18 + 5])
def test_float32_without_zeros_or_nans(n):
    x = _floats(np.float32, (n,), specials=False)
    _assert_bits(jax.jit(jnp.sort)(jnp.asarray(x)), _reference(x))


def test_runs_of_one_value_and_all_specials():
    for x in [np.full(5000, 3.5, np.float32), np.full(300_000, -0.0, np.float32),
              np.zeros(300, np.float32), np.full(70_000, np.nan, np.float32),
              np.where(np.arange(2**18 + 9) % 2 == 0, -0.0, 0.0).astype(np.float32),
              np.where(np.arange(2**18 + 9) % 3 == 0, np.nan, 1.0).astype(np.float32)]:
        _assert_bits(jnp.sort(jnp.asarray(x)), _reference(x))


def test_one_large_outlier_and_clusters():
    x = np.full(300_000, 1.0, np.float32)
    x[123] = 3e38
    x[4567] = -3e38
    x[::1000] = np.float32(1.0000001)
    _assert_bits(jnp.sort(jnp.asarray(x)), _reference(x))


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.int32, np.uint32])
@pytest.mark.parametrize("n", [256, 3000, 2**18 + 1])
def test_integers_by_value(dtype, n):
    x = _ints(dtype, (n,))
    _assert_bits(jax.jit(jnp.sort)(jnp.asarray(x)), _reference(x))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64])
@pytest.mark.parametrize("n", [300, 2**18 + 1])
def test_64_bit_dtypes(dtype, n, x64):
    x = _floats(dtype, (n,)) if dtype == np.float64 else _ints(dtype, (n,))
    want = _reference(x)
    _assert_bits(jnp.sort(jnp.asarray(x)), want)
    _assert_bits(jax.jit(jnp.sort)(jnp.asarray(x)), want)


@pytest.mark.parametrize("shape", [(3, 256), (1000, 300), (40, 4096), (2, 2**18 + 2)])
def test_rows(shape):
    x = _floats(np.float32, shape)
    want = _reference(x)
    _assert_bits(jax.jit(lambda a: jnp.sort(a, axis=-1))(jnp.asarray(x)), want)
    _assert_bits(jax.vmap(jnp.sort)(jnp.asarray(x)), want)


def test_strided_and_transposed_inputs():
    x = _floats(np.float32, (600, 700))
    a = jnp.asarray(x)
    _assert_bits(jax.jit(lambda a: jnp.sort(a[:, ::2], axis=-1))(a), _reference(x[:, ::2]))
    _assert_bits(jnp.sort(a.T, axis=-1), _reference(np.ascontiguousarray(x.T)))


def _daz_argsort(x, axis=-1):
    """numpy's stable argsort with denormals read as zero (DAZ), NaNs last."""
    clean = np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.zeros_like(x), x)
    return np.argsort(clean, axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((255,), -1), ((256,), -1), ((5000,), -1),
                                        ((3, 700), -1), ((700, 3), 0)])
def test_argsort_orders_denormals_as_zeros_under_daz(dtype, shape, axis, x64):
    # The runtime runs with DAZ (as XLA:CPU): denormals compare equal to zero, so argsort's
    # radix keys put them with the zeros in input order, as sort's do and the comparisons do.
    x = _floats(dtype, shape)
    want = _daz_argsort(x, axis)
    a = jnp.asarray(x)
    got = np.asarray(jnp.argsort(a, axis=axis))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: jnp.argsort(v, axis=axis))(a)),
                                  want)
    sorted_bits = np.asarray(jnp.sort(a, axis=axis))
    _assert_bits(np.take_along_axis(x, got, axis=axis), sorted_bits)


def test_donated_input_keeps_the_zero_and_nan_order():
    x = _floats(np.float32, (5000,))
    want = _reference(x)
    _assert_bits(jax.jit(jnp.sort, donate_argnums=0)(jnp.asarray(x)), want)


_CASES = """
import numpy as np
import tinyxla as jax
import tinyxla.numpy as jnp
rng = np.random.RandomState(3)
big = rng.randn(1_000_003).astype(np.float32)
big[::97] = 0.0
big[::89] = -0.0
big[::101] = np.nan
rows = rng.randn(500, 1000).astype(np.float32)
ints = rng.randint(-2**31, 2**31 - 1, size=2**18 + 7).astype(np.int32)
CASES = {
    "big": lambda: jnp.sort(jnp.asarray(big)),
    "big_jit": lambda: jax.jit(jnp.sort)(jnp.asarray(big)),
    "rows": lambda: jax.jit(lambda r: jnp.sort(r, axis=1))(jnp.asarray(rows)),
    "ints": lambda: jnp.sort(jnp.asarray(ints)),
}
"""


def test_results_do_not_depend_on_the_number_of_threads(tmp_path):
    assert_same_on_one_core(_CASES, tmp_path)
