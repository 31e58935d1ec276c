"""lax.rsqrt in float32 (and float16 / bfloat16, computed through it) is XLA:CPU's bit for
bit: the CPU's rsqrtps estimate and one Newton step of fused multiply-adds, the estimate
itself below the smallest normal and at inf. JAX's samplers divide by square roots, which
XLA rewrites into multiplies by rsqrt (gamma's Marsaglia-Tsang constant), so gamma's
samples match JAX's through it. The digests were taken from jax 0.10.2 on an AMD CPU:
rsqrtps's estimate differs between CPU makers (so do XLA's results), and on another
maker's CPUs only the accuracy checks apply."""
import hashlib

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax

from cpu_vendor import amd_only


# Every 4099th float32 bit pattern: all exponents, denormals, both signs, inf and NaNs.
SWEEP = np.arange(0, 2**32 - 1, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _digest(x) -> str:
    return hashlib.sha256(np.asarray(x).tobytes()).hexdigest()[:16]


@amd_only
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_float32_sweep_equals_jax(jitted):
    f = jax.jit(lax.rsqrt) if jitted else lax.rsqrt
    assert _digest(f(SWEEP)) == "a8d15b40814444c6"  # jax.lax.rsqrt, eager and jit alike


@amd_only
@pytest.mark.parametrize("dtype,digest", [(jnp.float16, "c3fd50743d376973"),
                                          (jnp.bfloat16, "7df00f1958116ee6")])
def test_half_precision_equals_jax(dtype, digest):
    dtype = np.dtype(dtype)
    every = np.arange(0, 2**16, dtype=np.uint32).astype(np.uint16).view(dtype)
    every = every[~np.isnan(every.astype(np.float32))]
    got = np.asarray(lax.rsqrt(every))
    # NaN payloads are not compared: one NaN stands for all.
    assert _digest(np.where(np.isnan(got.astype(np.float32)), np.array(np.nan, dtype), got)) \
        == digest


def test_special_values():
    x = np.array([0., -0., 1., 4., np.inf, -1., np.nan, 1e-45, 2.**-126, 0.25], np.float32)
    got = np.asarray(lax.rsqrt(x))
    # As JAX: the estimate at zero (inf, with the zero's sign), denormals (read as zero) and
    # inf; a negative argument gives the CPU's default NaN.
    np.testing.assert_array_equal(got[[0, 1, 4, 7]], [np.inf, -np.inf, 0., np.inf])
    np.testing.assert_array_equal(got[[2, 3, 8, 9]], [1., .5, 2.**63, 2.])
    assert np.isnan(got[5]) and np.isnan(got[6])


def test_within_two_ulp_of_the_rounded_value():
    x = SWEEP[np.isfinite(SWEEP) & (SWEEP >= np.float32(2.**-126))]
    got = np.asarray(lax.rsqrt(x))
    want = (1 / np.sqrt(x.astype(np.float64))).astype(np.float32)
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max() <= 2
    np.testing.assert_array_equal(np.asarray(jax.jit(lax.rsqrt)(x)), got)


def test_float64_is_the_rounded_quotient():
    x = np.geomspace(1e-300, 1e300, 2001)
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        got = np.asarray(lax.rsqrt(jnp.asarray(x, jnp.float64)))
    finally:
        jax.config.update("jax_enable_x64", prev)
    np.testing.assert_array_equal(got, 1 / np.sqrt(x))
