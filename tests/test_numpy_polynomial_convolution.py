"""convolve/correlate (every mode, swapped and complex operands) and the polynomial
functions against numpy, with JAX's conventions pinned; jit, vmap, grad and errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors
from tinyxla.test_util import check_grads

A = np.array
_rng = np.random.RandomState(4)
PAIRS = [(A([1.0, 2, 3, 4, 5]), A([1.0, 0.5, 2])), (A([1.0, 2, 3]), A([1.0, 2, 3, 4, 5, 6])),
         (A([1 + 1j, 2, 3j, 4]), A([1j, 1])), (A([1.0, 2]), A([3.0, 4])), (A([2.0]), A([3.0])),
         (_rng.randn(300), _rng.randn(41)), (A([1, 2, 3]), A([0, 1]))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("i", range(len(PAIRS)))
def test_convolve_correlate(mode, i):
    a, v = PAIRS[i]
    tol = dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jnp.convolve(a, v, mode=mode), np.convolve(a, v, mode=mode), **tol)
    np.testing.assert_allclose(jnp.correlate(a, v, mode=mode), np.correlate(a, v, mode=mode), **tol)
    f = jax.jit(lambda a, v: jnp.correlate(a, v, mode=mode))
    np.testing.assert_allclose(f(a, v), np.correlate(a, v, mode=mode), **tol)


def test_convolution_blocks_dtypes_and_errors():
    # Long enough that the window matrix is split into column blocks.
    a, v = _rng.randn(5000).astype(np.float32), _rng.randn(3000).astype(np.float32)
    np.testing.assert_allclose(jnp.convolve(a, v), np.convolve(a, v), rtol=1e-3, atol=2e-3)
    assert jnp.convolve(A([1, 2, 3]), A([1, 1])).dtype == np.float32
    out = jnp.convolve(A([1, 2, 3]), A([1, 1]), preferred_element_type=np.int32)
    assert out.dtype == np.int32 and out.tolist() == [1, 3, 5, 3]
    out = jnp.convolve(A([1, 2, 3], np.int8), A([1, 1], np.int8), preferred_element_type=np.float32)
    assert out.dtype == np.float32
    with pytest.raises(ValueError, match=r"convolve: inputs cannot be empty, got shapes \(0,\) and \(1,\)."):
        jnp.convolve(A([]), A([1.0]))
    with pytest.raises(ValueError, match=r"convolve\(\) only support 1-dimensional inputs."):
        jnp.convolve(np.ones((2, 2)), A([1.0]))
    with pytest.raises(ValueError, match=r"mode must be one of \['full', 'same', 'valid'\]"):
        jnp.correlate(A([1.0]), A([1.0]), mode="bad")
    np.testing.assert_allclose(jax.grad(lambda a: jnp.convolve(a, A([1.0, 2, 3])).sum())(A([1.0, 2])),
                               [6, 6])
    got = jax.vmap(lambda a: jnp.correlate(a, A([1.0, 2]), mode="same"))(np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(got, [np.correlate(r, [1, 2], mode="same") for r in np.arange(6.0).reshape(2, 3)])
    check_grads(lambda a, v: jnp.correlate(a, v, mode="full"), (_rng.randn(7), _rng.randn(3)),
                order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)


def test_polynomial_arithmetic():
    p, q = A([1.0, 2, 3, 4]), A([2.0, 1, 1])
    np.testing.assert_allclose(jnp.polyadd(A([1, 2]), A([1.0, 2, 3])), np.polyadd([1, 2], [1.0, 2, 3]))
    np.testing.assert_array_equal(jnp.polysub(A([1, 2]), A([1, 2, 3])), np.polysub([1, 2], [1, 2, 3]))
    np.testing.assert_allclose(jnp.polymul(A([1, 2]), A([1, 2, 3])), np.polymul([1, 2], [1, 2, 3]))
    np.testing.assert_allclose(jnp.polymul(A([0, 0, 1, 2]), A([1, 2, 3]), trim_leading_zeros=True),
                               np.polymul([0, 0, 1, 2], [1, 2, 3]))
    for got, want in zip(jnp.polydiv(p, A([1.0, 1])), np.polydiv(p, [1.0, 1])):
        np.testing.assert_allclose(got[-len(want):], want, atol=1e-6)
    quot, rem = jnp.polydiv(p, q, trim_leading_zeros=True)
    np.testing.assert_allclose(quot, np.polydiv(p, q)[0])
    np.testing.assert_allclose(rem, np.polydiv(p, q)[1], atol=1e-6)
    np.testing.assert_allclose(jnp.polyder(p), np.polyder(p))
    np.testing.assert_allclose(jnp.polyder(p, m=2), np.polyder(p, m=2))
    assert jnp.polyder(p, m=5).shape == (0,)
    np.testing.assert_allclose(jnp.polyint(A([1.0, 2, 3])), np.polyint([1.0, 2, 3]))
    np.testing.assert_allclose(jnp.polyint(A([1.0, 2, 3]), m=2, k=A([1.0, 2])),
                               np.polyint([1.0, 2, 3], m=2, k=[1.0, 2]))
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array of length 1 or m."):
        jnp.polyint(p, m=2, k=A([1.0, 2, 3]))
    with pytest.raises(ValueError, match="Order of derivative must be positive"):
        jnp.polyder(p, m=-1)
    np.testing.assert_allclose(jnp.polyval(A([1.0, 2, 3]), A([0.0, 1, 2])), np.polyval([1, 2, 3], [0, 1, 2]))
    assert int(jnp.polyval(A([1, 2, 3]), 2)) == 11
    np.testing.assert_allclose(jax.grad(lambda c: jnp.polyval(c, 2.0))(A([1.0, 2, 3])), [4, 2, 1])
    np.testing.assert_allclose(jax.vmap(lambda x: jnp.polyval(p, x))(A([0.5, 1.5])), np.polyval(p, [0.5, 1.5]),
                               rtol=1e-6)
    np.testing.assert_array_equal(jnp.vander(A([1.0, 2, 3])), np.vander([1.0, 2, 3]))
    np.testing.assert_array_equal(jnp.vander(A([1, 2, 3]), N=2, increasing=True),
                                  np.vander([1, 2, 3], N=2, increasing=True))
    with pytest.raises(ValueError, match="x must be a one-dimensional array"):
        jnp.vander(np.ones((2, 2)))


def test_poly_roots_trim_zeros():
    np.testing.assert_allclose(jnp.poly(A([1.0, 2, 3])), np.poly([1.0, 2, 3]))
    np.testing.assert_allclose(jnp.poly(A([[1.0, 2], [3, 4]])), np.poly([[1.0, 2], [3, 4]]), rtol=1e-5)
    assert jnp.poly(A([])).shape == ()
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(A([1.0, -3, 2])))), [1, 2], rtol=1e-5)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(A([0, 0, 1.0, -6, 11, -6])))),
                               [1, 2, 3], rtol=1e-4)
    r = jnp.roots(A([0, 0, 1.0, -3, 2]), strip_zeros=False)   # JAX: NaN for the leading zeros
    assert np.isnan(np.asarray(r)[2:]).all()
    np.testing.assert_allclose(np.sort_complex(np.asarray(r)[:2]), [1, 2], rtol=1e-5)
    assert jnp.roots(A([5.0])).shape == (0,) and jnp.roots(A([5.0])).dtype == np.complex64
    with pytest.raises(errors.ConcretizationTypeError, match="pass strip_zeros=False"):
        jax.jit(jnp.roots)(A([1.0, 2.0]))
    np.testing.assert_array_equal(jnp.trim_zeros(A([0, 0, 1, 2, 0])), [1, 2])
    np.testing.assert_array_equal(jnp.trim_zeros(A([0, 0, 1, 2, 0]), trim="b"), [0, 0, 1, 2])
    np.testing.assert_array_equal(jnp.trim_zeros(A([[0, 0, 0], [0, 1, 0], [0, 0, 0]])), [[1]])
    np.testing.assert_array_equal(jnp.trim_zeros(A([[0, 0, 0], [0, 1, 0]]), axis=1), [[0], [1]])
    assert jnp.trim_zeros(A([0, 0])).shape == (0,)


def test_polyfit():
    x = np.linspace(0, 1, 20).astype(np.float32)
    y = (3 * x**2 - 2 * x + 1 + 0.01 * np.sin(30 * x)).astype(np.float32)
    np.testing.assert_allclose(jnp.polyfit(x, y, 2), np.polyfit(x, y, 2), rtol=1e-4, atol=1e-5)
    y2 = np.stack([y, 2 * y], 1)
    np.testing.assert_allclose(jnp.polyfit(x, y2, 2), np.polyfit(x, y2, 2), rtol=1e-4, atol=1e-5)
    c, resids, rank, s, rcond = jnp.polyfit(x, y, 2, full=True)
    wc, wres, wrank, ws, wrcond = np.polyfit(x, y, 2, full=True)
    np.testing.assert_allclose(resids, wres, rtol=1e-3)
    assert int(rank) == wrank
    np.testing.assert_allclose(s, ws, rtol=1e-4)
    np.testing.assert_allclose(rcond, wrcond, rtol=1e-6)
    c, v = jnp.polyfit(x, y, 2, cov=True)
    np.testing.assert_allclose(v, np.polyfit(x, y, 2, cov=True)[1], rtol=1e-3, atol=1e-9)
    np.testing.assert_allclose(jnp.polyfit(x, y, 1, w=np.linspace(1, 2, 20)),
                               np.polyfit(x, y, 1, w=np.linspace(1, 2, 20)), rtol=1e-4)
    np.testing.assert_allclose(jax.jit(lambda x, y: jnp.polyfit(x, y, 2))(x, y),
                               np.polyfit(x, y, 2), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        jnp.polyfit(x, y[:3], 1)
