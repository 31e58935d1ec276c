"""jnp nanmin/nanmax/nanprod/nanvar/nanstd/nanargmax/nanargmin against numpy over axes,
dtypes, all-NaN slices (JAX's -1 / NaN), where/initial; jit, vmap and grad."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla.test_util import check_grads

_rng = np.random.RandomState(1)
X = _rng.randn(4, 5).astype(np.float32)
X[1, 2] = X[3, 0] = X[3, 4] = np.nan
ALLNAN = np.array([[np.nan, np.nan], [1.0, 0.0]], np.float32)


@pytest.mark.parametrize("name", ["nanmin", "nanmax", "nanprod", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_against_numpy(name, axis, keepdims):
    got = getattr(jnp, name)(X, axis=axis, keepdims=keepdims)
    want = getattr(np, name)(X, axis=axis, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda x: getattr(jnp, name)(x, axis=axis,
                                                                    keepdims=keepdims))(X),
                               got, rtol=1e-6)


@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nanarg(name, axis):
    np.testing.assert_array_equal(getattr(jnp, name)(X, axis=axis), getattr(np, name)(X, axis=axis))
    # JAX gives -1 for an all-NaN slice (numpy raises).
    np.testing.assert_array_equal(getattr(jnp, name)(ALLNAN, axis=1), [-1, 1 if name == "nanargmin" else 0])
    assert getattr(jnp, name)(ALLNAN, axis=0, keepdims=True).shape == (1, 2)
    ints = np.array([[3, 2], [1, 0]])
    np.testing.assert_array_equal(getattr(jnp, name)(ints), getattr(np, name)(ints))


def test_all_nan_and_dtypes_pinned_from_jax():
    np.testing.assert_array_equal(jnp.nanmin(ALLNAN, axis=1), [np.nan, 0.0])
    np.testing.assert_array_equal(jnp.nanmin(ALLNAN, axis=1, initial=-5), [-5, -5])
    np.testing.assert_array_equal(jnp.nanmax(ALLNAN, axis=1, initial=0.5), [0.5, 1.0])
    assert jnp.nanprod(np.array([1, 2, 4], np.int8)).dtype == np.int32
    assert jnp.nanprod(np.array([1, 2, np.nan], np.float16)).dtype == np.float16
    assert jnp.nanmax(np.array([1, 2, 4], np.int8)).dtype == np.int8
    assert jnp.nanvar(np.array([1, 2, 4])).dtype == np.float32
    c = np.array([1 + 1j, 2, np.nan, 4], np.complex64)
    out = jnp.nanstd(c)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.nanstd(c), rtol=1e-6)
    np.testing.assert_allclose(jnp.nanvar(X, axis=0, ddof=1), np.nanvar(X, axis=0, ddof=1),
                               rtol=1e-5)
    np.testing.assert_array_equal(jnp.nanvar(np.array([1.0, np.nan]), ddof=1), np.nan)
    w = np.ones_like(X, bool)
    w[0] = False
    np.testing.assert_allclose(jnp.nanmax(X, axis=0, where=w, initial=-10),
                               np.nanmax(np.where(w, X, -10), axis=0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        jnp.nanmax(jnp.zeros((0,)))
    with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.nanvar"):
        jnp.nanvar(X, out=X)


def test_vmap_and_grad():
    np.testing.assert_allclose(jax.vmap(jnp.nanvar)(X), np.nanvar(X, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(jax.vmap(jnp.nanargmax)(ALLNAN), [-1, 0])
    x = np.array([1.0, 2.0, np.nan, 4.0])
    g = jax.grad(jnp.nanvar)(x)
    np.testing.assert_allclose(g, [2 * (1 - 7 / 3) / 3, 2 * (2 - 7 / 3) / 3, 0, 2 * (4 - 7 / 3) / 3],
                               rtol=1e-5)
    np.testing.assert_array_equal(jax.grad(jnp.nanmax)(x), [0, 0, 0, 1])
    y = X[0].astype(np.float64)
    check_grads(jnp.nanstd, (y,), order=2, modes=("fwd", "rev"))
    check_grads(jnp.nanprod, (y,), order=1, modes=("rev",))
