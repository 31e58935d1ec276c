"""jax.scipy.signal's direct convolutions (convolve, correlate, convolve2d, correlate2d)
against scipy.signal, and JAX 0.10.2's orientation and errors where they differ."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.signal as osp_signal

import tinyxla as jax
import tinyxla.scipy.signal as jsp_signal

_SHAPES = [((9,), (4,)), ((4,), (9,)), ((6, 5), (3, 2)), ((3, 2), (6, 5)), ((5, 4), (5, 4)),
           ((4, 5, 3), (2, 3, 3))]


@pytest.mark.parametrize("shapes", _SHAPES, ids=[str(s) for s in _SHAPES])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_match_scipy(shapes, mode):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    for name in ("convolve", "correlate"):
        f = getattr(jsp_signal, name)
        want = getattr(osp_signal, name)(a.astype(np.float64), b.astype(np.float64), mode,
                                         method="direct")
        for g in (f, jax.jit(f, static_argnums=2)):
            got = g(a, b, mode)
            assert got.dtype == np.float32 and got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_2d_functions_match_scipy(mode):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((7, 6))
    k = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    np.testing.assert_allclose(np.asarray(jsp_signal.convolve2d(x, k, mode)),
                               osp_signal.convolve2d(x, k, mode), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jsp_signal.correlate2d(x, k, mode)),
                               osp_signal.correlate2d(x, k, mode), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(jsp_signal.convolve2d(k, x, mode)),
                               osp_signal.convolve2d(k, x, mode), rtol=1e-4, atol=1e-4)


def test_correlate2d_larger_second_operand_pinned():
    """JAX orients correlate2d(small, large) its own way; values from JAX 0.10.2."""
    x = np.arange(12.).reshape(3, 4) - 5
    y = np.array([[1., 2j], [3, -1]])
    want = {"full": [6, 5 + 12j, 4 + 10j, 3 + 8j, 6j, 20],
            "same": [7 + 2j, 4, -5 - 6j, -8 - 8j],
            "valid": [10 - 4j, 7 - 2j, 4, -2 + 4j, -5 + 6j, -8 + 8j]}
    for mode, values in want.items():
        got = np.asarray(jsp_signal.correlate2d(y, x, mode)).ravel()[:6]
        np.testing.assert_allclose(got, values, atol=1e-5)


def test_grad_and_vmap():
    rng = np.random.default_rng(2)
    x, k = rng.standard_normal((8, 7)).astype(np.float32), rng.standard_normal((3, 3)).astype(
        np.float32)
    g = jax.grad(lambda x: jsp_signal.convolve2d(x, k, "same").sum())(x)
    np.testing.assert_allclose(np.asarray(g), osp_signal.convolve2d(np.ones((8, 7)), k[::-1, ::-1],
                                                                    "same"), rtol=1e-5, atol=1e-5)
    batch = rng.standard_normal((3, 8, 7)).astype(np.float32)
    got = jax.vmap(lambda a: jsp_signal.correlate(a, k, "valid"))(batch)
    for i in range(3):
        np.testing.assert_allclose(np.asarray(got[i]), osp_signal.correlate(batch[i], k, "valid"),
                                   rtol=1e-4, atol=1e-4)


def _raises(exc, msg, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == msg


def test_errors_match_jax():
    one = np.ones
    _raises(ValueError, "in1 and in2 must have the same number of dimensions",
            lambda: jsp_signal.convolve(one(3), one((2, 2))))
    _raises(ValueError, "One input must be smaller than the other in every dimension.",
            lambda: jsp_signal.convolve(one((3, 2)), one((2, 3))))
    _raises(ValueError, "mode must be one of ['full', 'same', 'valid']",
            lambda: jsp_signal.convolve(one(3), one(2), "x"))
    _raises(ValueError, "Got method='y'; expected 'auto', 'fft', or 'direct'.",
            lambda: jsp_signal.convolve(one(3), one(2), "full", "y"))
    _raises(ValueError, "convolve2d() only supports 2-dimensional inputs.",
            lambda: jsp_signal.convolve2d(one(3), one(2)))
    _raises(NotImplementedError, "convolve2d() only supports boundary='fill', fillvalue=0",
            lambda: jsp_signal.convolve2d(one((3, 3)), one((2, 2)), "full", "wrap"))
    _raises(ValueError, "zero-size arrays not supported in convolutions, got shapes (0,) and "
            "(2,).", lambda: jsp_signal.convolve(one(0), one(2)))
    _raises(ValueError, "correlate2d() only supports 2-dimensional inputs.",
            lambda: jsp_signal.correlate2d(one(3), one(2)))
