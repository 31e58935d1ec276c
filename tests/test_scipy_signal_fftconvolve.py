"""jax.scipy.signal.fftconvolve: against scipy.signal.fftconvolve over modes, shapes,
dtypes and axes; eager, jit, vmap and grad; values and errors pinned from JAX 0.10.2."""
import numpy as np
import pytest
import scipy.signal

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.scipy.signal import fftconvolve
from tinyxla.test_util import check_grads

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((9,), (4,)), ((4,), (9,)), ((5, 7), (3, 4)),
                                    ((6, 1), (1, 5)), ((4, 5, 6), (2, 3, 2)), ((8,), (1,))])
def test_against_scipy(mode, shapes):
    a = RNG.standard_normal(shapes[0]).astype(np.float32)
    b = RNG.standard_normal(shapes[1]).astype(np.float32)
    if mode == "valid" and shapes == ((6, 1), (1, 5)):
        with pytest.raises(ValueError, match="at least as large"):
            fftconvolve(a, b, mode)
        return
    want = scipy.signal.fftconvolve(a.astype(np.float64), b, mode)
    got = fftconvolve(a, b, mode)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    jitted = jax.jit(fftconvolve, static_argnames="mode")(a, b, mode=mode)
    np.testing.assert_allclose(jitted, want, rtol=1e-4, atol=1e-4)


def test_complex_and_axes():
    a = (RNG.standard_normal((3, 10)) + 1j * RNG.standard_normal((3, 10))).astype(np.complex64)
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    got = fftconvolve(a, b, axes=1)
    assert got.dtype == np.complex64
    want = np.stack([np.convolve(a[i], b[i]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    got0 = fftconvolve(a.T, b.T, mode="same", axes=(0,))
    np.testing.assert_allclose(got0, scipy.signal.fftconvolve(a.T, b.T, "same", axes=0),
                               rtol=1e-4, atol=1e-4)


def test_pinned_jax_values():
    a = jnp.array([[1., 2, 3], [4, 5, 6]])
    b = jnp.array([[1, -1], [2, 0.5]])
    np.testing.assert_allclose(fftconvolve(a, b), [[1, 1, 1, -3], [6, 5.5, 8, -4.5],
                                                   [8, 12, 14.5, 3]], atol=2e-6)
    np.testing.assert_allclose(fftconvolve(a, b, "same"), [[1, 1, 1], [6, 5.5, 8]], atol=2e-6)
    valid = fftconvolve(jnp.arange(4), jnp.arange(3), "valid")
    assert valid.dtype == np.float32
    np.testing.assert_allclose(valid, [1, 4], atol=2e-6)
    mixed = fftconvolve(jnp.arange(4), jnp.arange(3) + 1j)
    assert mixed.dtype == np.complex64
    np.testing.assert_allclose(mixed, [0, 1j, 1 + 3j, 4 + 6j, 7 + 5j, 6 + 3j], atol=2e-6)


def test_vmap_and_grad(x64):
    a, b = RNG.standard_normal((4, 7)), RNG.standard_normal((4, 3))
    got = jax.vmap(lambda x, y: fftconvolve(x, y, "same"))(a, b)
    np.testing.assert_allclose(got, [np.convolve(a[i], b[i], "same") for i in range(4)],
                               rtol=1e-10, atol=1e-12)
    check_grads(lambda x, y: fftconvolve(x, y, "valid"), (a[0], b[0]), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("call, error, message", [
    (lambda a, b: fftconvolve(a, b[0]), ValueError,
     "in1 and in2 should have the same dimensionality"),
    (lambda a, b: fftconvolve(a, b, "bad"), ValueError,
     "mode must be one of ['same', 'full', 'valid']"),
    (lambda a, b: fftconvolve(a, jnp.ones((1, 4)), "valid"), ValueError,
     "For 'valid' mode, One input must be at least as large as the other in every dimension."),
    (lambda a, b: fftconvolve([1, 2], [3]), TypeError,
     "fftconvolve requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda a, b: fftconvolve(a, jnp.ones((3, 2)), axes=1), ValueError,
     "mapped axes must have same shape; got in1.shape=(2, 3) in2.shape=(3, 2) axes=(1,)"),
])
def test_errors(call, error, message):
    a, b = jnp.ones((2, 3)), jnp.ones((2, 2))
    with pytest.raises(error) as e:
        call(a, b)
    assert message in str(e.value)
