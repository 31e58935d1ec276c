"""jnp.pad in every mode against numpy.pad (shapes, dtypes, widths, mode options), the
values JAX pins where it departs from numpy, jit == eager, vmap == a loop, and gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla.numpy as jnp
from jnp_reference import (assert_grad_numeric, assert_jit_matches, assert_same,
                           assert_vmap_matches)

MODES = ["constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum",
         "reflect", "symmetric", "wrap"]
WIDTHS = [0, 1, (1, 2), ((0, 1), (2, 0), (3, 5)), ((0, 0), (0, 0), (7, 9)), [[2, 3]]]
X = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_pad_matches_numpy(mode, width, dtype):
    x = (X * 1.3).astype(dtype)
    got = jnp.pad(x, width, mode=mode)
    want = np.pad(x, width, mode=mode)
    if mode in ("mean", "median") and dtype != "float32":
        want = np.pad(x.astype(np.float64), width, mode=mode)  # JAX rounds half to even
        want = np.round(np.asarray(want)).astype(dtype)
    assert_same(got, want, dtype=dtype, rtol=1e-6 if mode in ("linear_ramp", "mean") else 0)


@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
@pytest.mark.parametrize("reflect_type", ["even", "odd"])
@pytest.mark.parametrize("vector", [[0.0, 1, 2, 3, 4], [3.0], [1.0, 4, 2]], ids=str)
@pytest.mark.parametrize("width", [(0, 7), (6, 2), 3], ids=str)
def test_reflect_types_with_long_padding(mode, reflect_type, vector, width):
    v = np.asarray(vector, np.float32)
    assert_same(jnp.pad(v, width, mode=mode, reflect_type=reflect_type),
                np.pad(v, width, mode=mode, reflect_type=reflect_type))


@pytest.mark.parametrize("kwargs", [
    dict(mode="mean", stat_length=2),
    dict(mode="maximum", stat_length=((1, 2), (2, 1), (3, 3))),
    dict(mode="minimum", stat_length=(1, 9)),
    dict(mode="constant", constant_values=((1, 2), (3, 4), (5, 6))),
    dict(mode="constant", constant_values=(7, 8)),
    dict(mode="constant", constant_values=[9]),
    dict(mode="linear_ramp", end_values=((1, 2), (3, 4), (5, 6))),
    dict(mode="linear_ramp", end_values=-3),
], ids=str)
def test_mode_options(kwargs):
    x = X.astype(np.float32)
    assert_same(jnp.pad(x, 2, **kwargs), np.pad(x, 2, **kwargs), rtol=1e-6)


def test_values_pinned_from_jax():
    # Integer statistics round to nearest even; linear ramps floor; constants convert.
    assert_same(jnp.pad(jnp.array([1, 2, 4, 7]), 2, mode="median"),
                np.array([3, 3, 1, 2, 4, 7, 3, 3]), dtype="int32")
    assert_same(jnp.pad(jnp.array([1, 2, 4, 8]), 2, mode="mean"),
                np.array([4, 4, 1, 2, 4, 8, 4, 4]), dtype="int32")
    assert_same(jnp.pad(jnp.array([1, 2, 4, 8]), 3, mode="linear_ramp", end_values=(20, -5)),
                np.array([20, 13, 7, 1, 2, 4, 8, 3, -1, -5]), dtype="int32")
    assert_same(jnp.pad(jnp.arange(3), 1, constant_values=2.7),
                np.array([2, 0, 1, 2, 2]), dtype="int32")
    weak = jnp.pad(jnp.asarray(1.0)[None], 1, constant_values=2)
    assert weak.weak_type and weak.dtype == np.float32
    scalar = jnp.pad(jnp.float32(2), 3)  # 0-d arrays are returned as they are
    assert scalar.shape == () and float(scalar) == 2.0


def test_empty_mode_and_empty_axes():
    got = jnp.pad(X.astype(np.float32), ((1, 0), (0, 2), (3, 1)), mode="empty")
    assert got.shape == (3, 5, 8)
    assert_same(got[1:, :3, 3:7], X.astype(np.float32))
    assert_same(jnp.pad(np.ones((0, 2)), ((0, 0), (1, 1)), mode="edge"), np.ones((0, 4)))
    assert_same(jnp.pad(np.ones((0, 2), np.float32), 1), np.pad(np.ones((0, 2), np.float32), 1))


def test_callable_mode():
    def jax_fn(v, width, axis, kwargs):
        return v.at[:width[0]].set(-1.0).at[v.shape[0] - width[1]:].set(kwargs.get("fill", -2))

    def np_fn(v, width, axis, kwargs):
        v[:width[0]] = -1.0
        v[v.shape[0] - width[1]:] = kwargs.get("fill", -2)

    x = X.astype(np.float32)
    assert_same(jnp.pad(x, ((1, 2), (0, 1), (2, 0)), mode=jax_fn, fill=5.0),
                np.pad(x, ((1, 2), (0, 1), (2, 0)), mode=np_fn, fill=5.0))


@pytest.mark.parametrize("mode", MODES)
def test_jit_vmap_grad(mode):
    x = (X[0] * 0.7 + 1).astype(np.float32)
    fn = lambda v: jnp.pad(v, ((1, 2), (3, 0)), mode=mode)  # noqa: E731
    assert_jit_matches(fn, x)
    assert_vmap_matches(lambda v: jnp.pad(v, (2, 3), mode=mode), x)
    if mode not in ("maximum", "minimum", "median"):  # ties make those non-smooth here
        assert_grad_numeric(fn, x)
