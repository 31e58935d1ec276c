"""float32 exp, log, log1p and pow give XLA:CPU's bits (and so JAX's values), eagerly and
under jit, on about a million inputs spread over every exponent, zeros, subnormals, infinities
and NaNs (NaN payloads aside); so do the functions JAX composes from them (sigmoid, softplus, log_sigmoid).
Digests pinned from jax 0.10.2 by tests/data/make_xla_transcendentals.py. pow is the C
library's powf, as in XLA:CPU (glibc's since 2.28)."""
import hashlib
import json
import pathlib

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

REF = json.loads((pathlib.Path(__file__).parent / "data" / "xla_transcendentals.json").read_text())


def _digest(value) -> str:
    v = np.asarray(value)
    v = np.where(np.isnan(v), np.float32(np.nan), v)  # NaN payloads are not compared
    return hashlib.sha256(v.tobytes()).hexdigest()[:16]


@pytest.mark.parametrize("name", REF["cases"])
def test_matches_xla_bits(name):
    fn, arg = REF["cases"][name]
    env = {"jax": jax, "jnp": jnp, "np": np}
    x = eval(REF["inputs"][arg], env)
    assert _digest(eval(fn, env)(x)) == REF["digests"][name]


def test_exp_flushes_results_below_the_smallest_normal():
    x = np.array([-87.0, -87.5, -88.0, -103.0, -np.inf, 88.8, np.nan], np.float32)
    got = np.asarray(jnp.exp(x))
    assert got[0] > 0 and got[1] == 0 and got[2] == 0 and got[3] == 0 and got[4] == 0
    assert got[5] == np.inf and np.isnan(got[6])
    np.testing.assert_allclose(got[0], np.exp(np.float64(-87.0)), rtol=2e-7)


def test_pow_special_values_follow_c99():
    x = np.array([0., -0., -2., -2., 1., np.nan, -np.inf, 0.5, 2.], np.float32)
    y = np.array([-1., 3., 3., 0.5, np.nan, 0., 3., np.inf, -np.inf], np.float32)
    got = np.asarray(jnp.power(x, y))
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.power(x, y)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)
