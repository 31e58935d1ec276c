"""lax.conv_general_dilated_patches: values and shapes pinned from JAX 0.10.2 (the output
channel order "c" + rhs spatial dims), jit, grad (numerical) and vmap, JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import lax
from tinyxla.test_util import check_grads

_X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) / 7.0

# (args, kwargs, shape, index of the pinned slice, pinned values): from JAX 0.10.2.
_PINNED = [
    (((2, 3), (1, 2), "SAME"), dict(dimension_numbers=("NCHW", "OIHW", "NCHW")),
     (2, 18, 4, 3), (1, slice(None), 1, 1),
     [9.428572, 9.571428, 9.714286, 10.142858, 10.285714, 10.428572, 12.285714, 12.428572,
      12.571428, 13.0, 13.142858, 13.285714, 15.142858, 15.285714, 15.428572, 15.857142,
      16.0, 16.142857]),
    (((3, 2), (1, 1), [(1, 0), (0, 1)]),
     dict(rhs_dilation=(1, 2), dimension_numbers=("NHWC", "OIWH", "CNHW")),
     (30, 2, 2, 3), (slice(None), 1, 1, 1),
     [11.428572, 0, 12.142858, 0, 12.857142, 0, 11.571428, 0, 12.285714, 0, 13.0, 0,
      11.714286, 0, 12.428572, 0, 13.142858, 0, 11.857142, 0, 12.571428, 0, 13.285714, 0,
      12.0, 0, 12.714286, 0, 13.428572, 0]),
]


@pytest.mark.parametrize("case", range(len(_PINNED)))
def test_pinned_against_jax(case):
    args, kwargs, shape, index, want = _PINNED[case]
    got = lax.conv_general_dilated_patches(_X, *args, **kwargs)
    assert got.shape == shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got)[index], want, rtol=1e-6, atol=1e-6)
    jitted = jax.jit(lambda x: lax.conv_general_dilated_patches(x, *args, **kwargs))(_X)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(got))


def test_integers_1d_pinned():
    x = np.arange(2 * 5 * 3).reshape(2, 5, 3).astype(np.int32)
    got = lax.conv_general_dilated_patches(x, (2,), (1,), "VALID",
                                           dimension_numbers=("NWC", "WIO", "NWC"))
    assert got.shape == (2, 4, 6) and got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got)[1], [[15, 18, 16, 19, 17, 20],
                                                       [18, 21, 19, 22, 20, 23],
                                                       [21, 24, 22, 25, 23, 26],
                                                       [24, 27, 25, 28, 26, 29]])


def test_patches_times_kernel_is_the_convolution():
    """Contracting the patches with a kernel flattened in the same order is the conv."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 7, 3)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    p = lax.conv_general_dilated_patches(x, (3, 2), (2, 1), "SAME", dimension_numbers=dn)
    # features ordered (c, h, w): the kernel as [I, H, W, O] flattened.
    got = np.asarray(p) @ w.transpose(2, 0, 1, 3).reshape(-1, 4)
    want = lax.conv_general_dilated(x, w, (2, 1), "SAME", dimension_numbers=dn)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-5)


def test_grad_and_vmap(x64):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 4, 2))
    f = lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), ((1, 0), (0, 1)),
                                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    weights = rng.standard_normal(f(x).shape)
    g = jax.jit(jax.grad(lambda x: jnp.sum(f(x) * weights)))(x)
    # Each input element's gradient sums the weights of the patch slots that read it.
    _, vjp = jax.vjp(f, x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(vjp(weights)[0]), rtol=1e-12)
    xs = rng.standard_normal((3, 2, 5, 4, 2))
    got = jax.vmap(f)(xs)
    want = np.stack([np.asarray(f(xi)) for xi in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


def test_errors_match_jax():
    with pytest.raises(TypeError, match=r"^convolution requires lhs and rhs ndim to be equal, "
                       r"got 4 and 3\.$"):
        lax.conv_general_dilated_patches(_X, (2,), (1, 1), "SAME")
    with pytest.raises(ValueError, match=r"^conv_general_dilated window and window_strides "
                       r"must have the same number of dimensions, but got 2 and 1$"):
        lax.conv_general_dilated_patches(_X, (2, 2), (1,), "SAME")
