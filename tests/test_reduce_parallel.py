"""Large reductions (reduce.cc): the pairwise error bound of a 1e7 float32 sum, tall narrow
matrices reduced over their rows (the interleaved-lanes path) against numpy, and results
bit-identical whatever the number of threads (a process pinned to one core against this
one), eager and under jit."""
import math

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from one_core import assert_same_on_one_core


def test_sum_1e7_float32_within_pairwise_error_bound():
    x = np.random.default_rng(3).uniform(0, 1, 10_000_000).astype(np.float32)
    exact = math.fsum(x.astype(np.float64))
    # A straight float32 loop is ~100 off here; pairwise summation keeps within a few ulps.
    bound = 4 * float(np.spacing(np.float32(exact)))
    for got in (jnp.sum(jnp.asarray(x)), jax.jit(jnp.sum)(jnp.asarray(x))):
        assert got.dtype == np.float32
        assert abs(float(got) - exact) <= bound


# Bits of pairwise sums and products (lanes, 16-row leaves, the leaf cascade, the tail row,
# negative zeros) as the array-of-lanes kernel gave them before the float kernels moved to
# vector registers: any change of the order of operations shows here.
_PINNED_PAIRWISE_BITS = {
    ("float32", 513): (3256268525, 1064728721),
    ("float32", 65537): (1138307557, 1065482142),
    ("float32", 1000003): (3301600782, 1065616398),
    ("float64", 513): (13853871651413797072, 4606847141294296927),
    ("float64", 65537): (4646349482571056701, 4607251628680228990),
    ("float64", 1000003): (13878209221525016566, 4607323711338392006),
}


@pytest.mark.parametrize("dtype,n", sorted(_PINNED_PAIRWISE_BITS))
def test_pairwise_sum_and_prod_bits_pinned(x64, dtype, n):
    x = np.random.default_rng(n).standard_normal(n).astype(dtype)
    x[::37] = -0.0
    bits = np.uint32 if dtype == "float32" else np.uint64
    got_sum = np.asarray(jnp.asarray(x).sum()).view(bits).item()
    got_prod = np.asarray(jnp.asarray(1 + x[:600] * 1e-3).prod()).view(bits).item()
    assert (got_sum, got_prod) == _PINNED_PAIRWISE_BITS[(dtype, n)]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.uint8])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("cols", [1, 2, 4, 8, 16, 32])
def test_tall_power_of_two_columns_match_numpy(dtype, op, cols):
    rng = np.random.default_rng(cols)
    v = rng.standard_normal((200_003, cols)) * (0.001 if op == "prod" else 3)
    v = (1 + v if op == "prod" else v).astype(dtype)
    x = jnp.asarray(v)
    eager = np.asarray(getattr(jnp, op)(x, axis=0))
    jitted = np.asarray(jax.jit(lambda a: getattr(jnp, op)(a, axis=0))(x))
    if op in ("max", "min") or np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(eager, jitted)
    else:  # jit may fuse a half-float widening into the reduction: another order
        np.testing.assert_allclose(jitted.astype(np.float64), eager.astype(np.float64),
                                   rtol=2e-3 if dtype == np.float16 else 1e-6)
    if np.issubdtype(dtype, np.integer):  # integer sums and products wrap
        want = getattr(np, op)(v, axis=0)
        np.testing.assert_array_equal(eager, want)
        return
    want = getattr(np, op)(v.astype(np.float64), axis=0)
    # Every rounding of a product compounds (any order): 2e5 float32 factors drift ~1e-4.
    tol = 2e-2 if dtype == np.float16 else 3e-4 if op == "prod" else 2e-5
    np.testing.assert_allclose(eager.astype(np.float64), want, rtol=tol,
                               atol=tol * np.abs(want).max())


def test_float64_columns_and_reversed_and_strided_views():
    jax.config.update("jax_enable_x64", True)
    try:
        v = np.random.default_rng(5).standard_normal((100_000, 48))
        dense16 = np.ascontiguousarray(v[:, 4:20])
        for view, host in ((jnp.asarray(v)[:, 4:20], v[:, 4:20]),
                           (jnp.asarray(v)[::-1, 4:20], v[::-1, 4:20]),
                           (jnp.asarray(v)[:, 19:3:-1], v[:, 19:3:-1])):
            got = np.asarray(jnp.sum(view, axis=0))
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, host.sum(axis=0), rtol=1e-12, atol=1e-9)
        # A strided view reduces exactly as its dense copy does.
        np.testing.assert_array_equal(np.asarray(jnp.sum(jnp.asarray(v)[:, 4:20], axis=0)),
                                      np.asarray(jnp.sum(jnp.asarray(dense16), axis=0)))
    finally:
        jax.config.update("jax_enable_x64", False)


def test_column_nan_stays_in_its_column():
    v = np.random.default_rng(6).standard_normal((300_000, 8)).astype(np.float32)
    v[123_457, 5] = np.nan
    for op in ("max", "min", "sum"):
        got = np.asarray(getattr(jnp, op)(jnp.asarray(v), axis=0))
        assert np.isnan(got[5]) and not np.isnan(np.delete(got, 5)).any()


# Reductions large enough to split over the pool, run here and on one core.
_CASES = """
import numpy as np
import tinyxla as jax
import tinyxla.numpy as jnp

rng = np.random.default_rng(11)
a = rng.standard_normal(3_000_017).astype(np.float32)
m = rng.standard_normal((1_000_000, 16)).astype(np.float32)
h = rng.standard_normal((500_000, 4)).astype(np.float16)
i = rng.integers(-1000, 1000, (400_000, 8)).astype(np.int32)
CASES = {
    "sum": lambda: jnp.sum(jnp.asarray(a)),
    "sum_jit": lambda: jax.jit(jnp.sum)(jnp.asarray(a)),
    "max": lambda: jnp.max(jnp.asarray(a)),
    "mean_all": lambda: jnp.mean(jnp.asarray(m)),
    "sum_axis0": lambda: jnp.sum(jnp.asarray(m), axis=0),
    "sum_axis0_jit": lambda: jax.jit(lambda x: x.sum(0))(jnp.asarray(m)),
    "sum_axis1": lambda: jnp.sum(jnp.asarray(m), axis=1),
    "mean_axis0_jit": lambda: jax.jit(lambda x: x.mean(0))(jnp.asarray(m)),
    "sum_strided": lambda: jnp.sum(jnp.asarray(m)[:, 2:10], axis=0),
    "min_half": lambda: jnp.min(jnp.asarray(h), axis=0),
    "sum_half": lambda: jnp.sum(jnp.asarray(h), axis=0),
    "sum_int": lambda: jnp.sum(jnp.asarray(i), axis=0),
}
"""


def test_results_do_not_depend_on_the_number_of_threads(tmp_path):
    assert_same_on_one_core(_CASES, tmp_path)
