"""Reductions of tall matrices over their rows (reduce.cc's column path, with dense rows at
one stride accumulated in locals): every op and dtype against numpy, strided rows, NaNs,
and results identical to the same reduction of a copy laid out densely."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("shape", [(70_000, 16), (300, 3), (5000, 64), (5000, 65)])
def test_tall_column_reductions_match_numpy(dtype, op, shape):
    jax.config.update("jax_enable_x64", dtype == np.float64)
    try:
        rng = np.random.default_rng(1)
        v = (rng.standard_normal(shape) * (0.01 if op == "prod" else 3)).astype(dtype)
        if op == "prod":
            v = (1 + v).astype(dtype)
        got = np.asarray(getattr(jnp, op)(jnp.asarray(v), axis=0))
        want = getattr(np, op)(v.astype(np.float64), axis=0)
        tol = {np.float16: 2e-2, np.float32: 2e-5}.get(dtype, 1e-12)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol,
                                   atol=tol * np.abs(want).max())
    finally:
        jax.config.update("jax_enable_x64", False)


def test_strided_rows_and_nans():
    v = np.random.default_rng(2).standard_normal((40_000, 40)).astype(np.float32)
    v[123, 5] = np.nan
    x = jnp.asarray(v)[:, 3:19]  # rows 16 wide at stride 40
    for op in ("sum", "max", "min"):
        got = np.asarray(getattr(jnp, op)(x, axis=0))
        dense = np.asarray(getattr(jnp, op)(jnp.asarray(np.ascontiguousarray(v[:, 3:19])), axis=0))
        np.testing.assert_array_equal(got, dense)
        want = getattr(np, op)(v[:, 3:19].astype(np.float64), axis=0)
        assert np.isnan(got[2]) and np.isnan(want[2])
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-3)
