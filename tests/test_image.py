"""jax.image.resize (every method, up and down, with and without antialiasing) and
scale_and_translate against values pinned from JAX 0.10.2 (tests/data), under jit, grad and
vmap; JAX's errors."""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import tinyxla as jax

_PINNED = (pathlib.Path(__file__).parent / "data" / "image_resize_jax_0.10.2.txt").read_text()
_X = (np.arange(2 * 5 * 6 * 3) % 11 / 7.0).reshape(2, 5, 6, 3).astype(np.float32)


def _pinned_lines():
    """Each line of the data file: the call's description, then a list of every 13th
    value (every 17th / 7th for scale_and_translate), as JAX printed them."""
    for line in _PINNED.splitlines():
        head, values = line.split(" [", 1) if " [" in line else (line, "")
        yield head, ast.literal_eval("[" + values)


def _results():
    for m in ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"):
        for shape in ((2, 9, 4, 3), (2, 3, 11, 3)):
            for aa in (True, False):
                r = np.asarray(jax.image.resize(_X, shape, m, antialias=aa))
                yield f"{m} {shape} {aa} {r.dtype} {r.shape}", r.ravel()[::13][:6]
    r = jax.image.scale_and_translate(_X, (2, 7, 8, 3), (1, 2), np.array([1.3, 1.1]),
                                      np.array([0.4, -0.7]), "linear")
    yield "st", np.asarray(r).ravel()[::17][:8]
    r = jax.image.scale_and_translate(_X, (2, 4, 4, 3), (1, 2), np.array([0.7, 0.5]),
                                      np.array([0.2, 0.1]), "lanczos3", antialias=True)
    yield "st2", np.asarray(r).ravel()[::7][:8]
    xi = (np.arange(20) % 7).reshape(4, 5).astype(np.int32)
    r = np.asarray(jax.image.resize(xi, (7, 3), "nearest"))
    yield f"int {r.dtype}", r.ravel()


def test_resize_and_scale_and_translate_match_jax():
    got = list(_results())
    want = list(_pinned_lines())
    assert [g[0] for g in got] == [w[0] for w in want]
    for (name, values), (_, pinned) in zip(got, want):
        np.testing.assert_allclose(values, pinned, rtol=0, atol=2e-5, err_msg=name)


def test_resize_under_transforms():
    f = lambda x: jax.image.resize(x, (9, 4, 3), "cubic")
    batch = jax.vmap(f)(_X)
    np.testing.assert_allclose(np.asarray(batch[1]), np.asarray(f(_X[1])), rtol=1e-6, atol=1e-6)
    # resize is linear in the image: its gradient of a sum is the weights' column sums.
    g = jax.grad(lambda x: jax.image.resize(x, (2, 10, 12, 3), "linear").sum())(_X)
    np.testing.assert_allclose(np.asarray(g), np.full(_X.shape, 4.0), rtol=1e-5)
    s = jax.jit(lambda x, t: jax.image.scale_and_translate(
        x, (2, 7, 8, 3), (1, 2), np.array([1.3, 1.1]), t, "linear"))
    np.testing.assert_allclose(
        np.asarray(s(_X, np.array([0.4, -0.7]))),
        np.asarray(jax.image.scale_and_translate(_X, (2, 7, 8, 3), (1, 2), np.array([1.3, 1.1]),
                                                 np.array([0.4, -0.7]), "linear")), rtol=1e-6)


def test_errors_match_jax():
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        jax.image.resize(_X, (2, 3, 3, 3), "bogus")
    with pytest.raises(ValueError, match="shape must have length equal to the number of "
                                         "dimensions of x"):
        jax.image.resize(_X, (3, 3), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently "
                                         "supported for scale_and_translate."):
        jax.image.scale_and_translate(_X, (2, 3, 3, 3), (1, 2), np.ones(2), np.zeros(2),
                                      "nearest")
