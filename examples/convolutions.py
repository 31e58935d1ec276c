"""Convolutions in JAX (seed 003), as a JAX user writes them: 1-d smoothing with
``jnp.convolve``, 2-d image smoothing with ``jax.scipy.signal.convolve``, and
``lax.conv_general_dilated`` with its layouts, strides, paddings and dilations; only the
imports name tinyxla. Each result is checked against a plain numpy computation.

    python examples/convolutions.py
"""
import numpy as np

import tinyxla as jax
import tinyxla.numpy as jnp
import tinyxla.scipy as jsp
from tinyxla import lax


def smooth_1d() -> None:
    key = jax.random.PRNGKey(1701)
    x = jnp.linspace(0, 10, 500)
    y = jnp.sin(x) + 0.2 * jax.random.normal(key, shape=(500,))
    window = jsp.stats.norm.pdf(jnp.linspace(-3, 3, 25))
    y_smooth = jnp.convolve(y, window / window.sum(), mode="same")
    np.testing.assert_allclose(np.asarray(y_smooth),
                               np.convolve(np.asarray(y), np.asarray(window / window.sum()),
                                           mode="same"), rtol=1e-4, atol=1e-5)
    print("1-d smoothing: noise std", float(jnp.std(y - jnp.sin(x))), "->",
          float(jnp.std(y_smooth[20:-20] - jnp.sin(x)[20:-20])))


def smooth_2d() -> None:
    yy, xx = np.mgrid[0:64, 0:64]
    image = ((xx // 8 + yy // 8) % 2).astype(np.float32)  # a checkerboard
    noisy = image + 0.3 * np.asarray(jax.random.normal(jax.random.PRNGKey(0), image.shape))
    g = jnp.linspace(-2, 2, 7)
    kernel = jnp.exp(-g[:, None] ** 2 - g[None, :] ** 2)
    smooth = jsp.signal.convolve(noisy, kernel / kernel.sum(), mode="same")
    k = np.asarray(kernel / kernel.sum())
    padded = np.pad(noisy, 3)
    want = sum(padded[i:i + 64, j:j + 64] * k[6 - i, 6 - j] for i in range(7) for j in range(7))
    np.testing.assert_allclose(np.asarray(smooth), want, rtol=1e-4, atol=1e-5)
    print("2-d smoothing:", smooth.shape, "error vs clean image",
          float(jnp.abs(noisy - image).mean()), "->", float(jnp.abs(smooth - image).mean()))


def general_convolutions() -> None:
    # A 2x2 edge detector as an OIHW kernel (out=3, in=3 channels), on an NCHW image.
    kernel = jnp.zeros((3, 3, 3, 3), jnp.float32)
    kernel += jnp.array([[1, 1, 0], [1, 0, -1], [0, -1, -1]])[:, :, None, None]
    img = jnp.zeros((1, 200, 198, 3), jnp.float32)
    for k in range(3):
        x, y = 30 + 60 * k, 100
        img = img.at[0, x:x + 10, y:y + 10, k].set(1.0)
    nchw = jnp.transpose(img, [0, 3, 1, 2])
    oihw = jnp.transpose(kernel, [3, 2, 0, 1])
    out = lax.conv(nchw, oihw, (1, 1), "SAME")
    print("lax.conv SAME:", out.shape)
    out = lax.conv(nchw, oihw, (1, 1), "VALID")
    print("lax.conv VALID:", out.shape)
    out = lax.conv_with_general_padding(nchw, oihw, (2, 2), ((2, 2), (2, 2)), (1, 1), (1, 1))
    print("strided, explicit padding:", out.shape)
    out = lax.conv_with_general_padding(nchw, oihw, (1, 1), ((0, 0), (0, 0)), (1, 1), (12, 12))
    print("rhs (atrous) dilation 12:", out.shape)
    out = lax.conv_with_general_padding(nchw, oihw, (1, 1), ((2, 2), (2, 2)), (2, 2), (1, 1))
    print("lhs (transposed) dilation 2:", out.shape)
    # The same convolution in TensorFlow's NHWC/HWIO layout.
    dn = lax.conv_dimension_numbers(img.shape, kernel.shape, ("NHWC", "HWIO", "NHWC"))
    print("dimension numbers:", dn)
    out = lax.conv_general_dilated(img, kernel, (1, 1), "SAME", (1, 1), (1, 1), dn)
    ref = lax.conv(nchw, oihw, (1, 1), "SAME")
    np.testing.assert_allclose(np.asarray(out), np.asarray(jnp.transpose(ref, [0, 2, 3, 1])),
                               rtol=1e-5, atol=1e-5)
    print("NHWC result:", out.shape, "edges found:", int((jnp.abs(out) > 0.5).sum()))
    # 1-d and 3-d convolutions.
    x1 = jnp.arange(1, 11, dtype=jnp.float32).reshape(1, 10, 1)
    k1 = jnp.array([1.0, 0.0, -1.0]).reshape(3, 1, 1)
    d1 = lax.conv_general_dilated(x1, k1, (1,), "VALID",
                                  dimension_numbers=("NWC", "WIO", "NWC"))
    np.testing.assert_allclose(np.asarray(d1).ravel(), np.full(8, -2.0))
    print("1-d derivative:", np.asarray(d1).ravel())
    x3 = jnp.ones((1, 6, 6, 6, 1))
    k3 = jnp.ones((3, 3, 3, 1, 1))
    d3 = lax.conv_general_dilated(x3, k3, (1, 1, 1), "SAME",
                                  dimension_numbers=("NHWDC", "HWDIO", "NHWDC"))
    assert float(d3[0, 3, 3, 3, 0]) == 27.0 and float(d3[0, 0, 0, 0, 0]) == 8.0
    print("3-d box filter:", d3.shape, float(d3.sum()))


def main() -> None:
    smooth_1d()
    smooth_2d()
    general_convolutions()


if __name__ == "__main__":
    main()
