"""``jax.image.resize`` and ``scale_and_translate``: separable resampling of any array.

Mirrors ``jax._src.image.scale``: each resized dimension gets a weight matrix [input,
output] from the method's kernel (triangle, Keys cubic, OpenCV cubic, Lanczos 3/5, or pixel
area overlap), evaluated at the half-pixel-centred sample locations, widened by the inverse
scale when antialiasing a downsample and normalised per output pixel; the image is then
contracted with each matrix in turn. ``nearest`` gathers the sampled indices instead.
"""
from __future__ import annotations

import enum
import math
from typing import Any, Callable, Sequence

import numpy as np

import tinyxla.numpy as jnp
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.lax.dot import Precision
from tinyxla._src.lax.type_rules import _canonicalize_axis, canonicalize_shape
from tinyxla._src.numpy.promotion import promote_dtypes_inexact


def _fill_lanczos_kernel(radius: float, x: Any) -> Any:
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0., out)


def _fill_keys_cubic_kernel(x: Any) -> Any:
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return jnp.where(x >= 2., 0., out)


def _fill_opencv_cubic_kernel(x: Any) -> Any:
    """PyTorch's bicubic without antialiasing: the cubic with A = -0.75 (OpenCV's)."""
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _fill_triangle_kernel(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


_area_kernel = object()  # a marker: weights are pixel overlaps, not a kernel of distance


def compute_weight_mat(input_size: int, output_size: int, scale: Any, translation: Any,
                       kernel: Any, antialias: bool, edge_padding: bool,
                       radius: int | None) -> Any:
    """The [input_size, output_size] resampling weights of one dimension."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1. / scale
    # Downsampling low-pass filters (a wider kernel); upsampling only interpolates.
    kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
    sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale -
                translation * inv_scale - 0.5)
    if edge_padding:
        k = math.ceil(radius * max(1.0 / float(scale), 1.0)) if antialias else radius
    else:
        k = 0
    expanded = jnp.arange(-k, input_size + k, dtype=dtype)
    if kernel is _area_kernel:
        left_out = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right_out = left_out + inv_scale
        left_in = jnp.arange(input_size, dtype=dtype)
        right_in = left_in + 1.0
        weights = jnp.maximum(0.0, jnp.minimum(right_out[None, :], right_in[:, None]) -
                              jnp.maximum(left_out[None, :], left_in[:, None]))
    else:
        weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
    eps = 1000. * float(np.finfo(np.float32).eps)
    if edge_padding:
        # Weights of indices off the image move onto the edge pixels.
        clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
        outputs = lax.broadcast_in_dim(jnp.arange(output_size), (expanded.shape[0], output_size),
                                       (1,))
        mat = jnp.zeros((input_size, output_size), dtype=dtype)
        mat = mat.at[clamped[:, None], outputs].add(weights)
        total = jnp.sum(mat, axis=0, keepdims=True)
        return jnp.where(jnp.abs(total) > eps, jnp.divide(mat, jnp.where(total != 0, total, 1)),
                         0)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > eps,
                        jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)
    # Samples entirely outside the input get no weight.
    inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x: Any, output_shape: Sequence[int], spatial_dims: Sequence[int],
                         scale: Any, translation: Any, kernel: Any, antialias: bool,
                         precision: Any, edge_padding: bool = False,
                         radius: int | None = None) -> Any:
    for i, d in enumerate(spatial_dims):
        d = _canonicalize_axis(d, x.ndim)
        w = compute_weight_mat(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                               antialias, edge_padding, radius).astype(x.dtype)
        y = lax.dot_general(x, w, (((d,), (0,)), ((), ())), precision=precision)
        x = jnp.moveaxis(y, -1, d)
    return x


class ResizeMethod(enum.Enum):
    """Image resize method (``jax.image.ResizeMethod``)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
                 "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
                 "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return names[s]


_kernels: dict[ResizeMethod, tuple[int, Any]] = {
    ResizeMethod.LINEAR: (1, _fill_triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _fill_lanczos_kernel(3., x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _fill_lanczos_kernel(5., x)),
    ResizeMethod.CUBIC: (2, _fill_keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _fill_opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _area_kernel),
}


def _kernel_of(method: ResizeMethod, antialias: bool) -> tuple[int, Any, bool]:
    """(radius, kernel, edge padding) of a method; PyTorch's cubic with antialiasing is
    Keys' cubic, without it OpenCV's with the edges repeated."""
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _kernels[method]
    return radius, kernel, method == ResizeMethod.CUBIC_PYTORCH


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """Mirrors ``jax.image.scale_and_translate``: resamples ``image`` to ``shape`` with an
    input location ``x`` of dimension ``spatial_dims[i]`` mapped to ``x * scale[i] +
    translation[i]`` (half-centred pixels; samples outside the input are zero)."""
    shape = canonicalize_shape(shape)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x;  "
                         f"{shape} vs {image.shape}")
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    image, = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    return _scale_and_translate(image, shape, spatial_dims, scale, translation, kernel,
                                antialias, precision, edge_padding=edge_padding,
                                radius=radius)


def _resize_nearest(x: Any, output_shape: Sequence[int]) -> Any:
    for d, (m, n) in enumerate(zip(x.shape, output_shape)):
        if m == n:
            continue
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        index: list[Any] = [slice(None)] * x.ndim
        index[d] = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
        x = x[tuple(index)]
    return x


def _resize(image: Any, shape: tuple[int, ...], method: str | ResizeMethod, antialias: bool,
            precision: Any) -> Any:
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x;  "
                         f"{shape} vs {image.shape}")
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image, = promote_dtypes_inexact(image)
    spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    radius, kernel, edge_padding = _kernel_of(method, antialias)
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                                kernel, antialias, precision, edge_padding=edge_padding,
                                radius=radius)


_resize_jit: Callable[..., Any] = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = Precision.HIGHEST) -> Any:
    """Mirrors ``jax.image.resize``: ``image`` resampled to ``shape`` (every dimension,
    batch and channels included: leave theirs unchanged) by 'nearest', 'linear', 'cubic',
    'cubic-pytorch', 'lanczos3', 'lanczos5' or 'area'."""
    return _resize_jit(image, canonicalize_shape(shape), method, antialias, precision)
