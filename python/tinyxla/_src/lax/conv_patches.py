"""``lax.conv_general_dilated_patches``: the patches a convolution's windows read, as the
output channels of a convolution with a one-hot kernel (as JAX builds it), so that it has
jit, grad and vmap through ``conv_general_dilated``'s rules."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tinyxla._src.lax.conversion import asarray
from tinyxla._src.lax.convolution import (
    ConvGeneralDilatedDimensionNumbers, conv_dimension_numbers, conv_general_dilated)
from tinyxla._src.lax.dot import Precision


def conv_general_dilated_patches(
        lhs: Any, filter_shape: Sequence[int], window_strides: Sequence[int],
        padding: str | Sequence[tuple[int, int]], lhs_dilation: Sequence[int] | None = None,
        rhs_dilation: Sequence[int] | None = None,
        dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
        precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Extracts the patches of ``conv_general_dilated``'s receptive field
    (``jax.lax.conv_general_dilated_patches``).

    ``filter_shape`` is in the spatial order of ``dimension_numbers[1]``. The output's
    feature dimension holds each flattened patch, ordered ``"c" + rhs spatial dims``:
    size ``prod(filter_shape) * lhs features``.
    """
    lhs = asarray(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1) + filter_shape, dimension_numbers)
    spatial_size = math.prod(filter_shape)
    n_channels = lhs.shape[dn.lhs_spec[1]]
    # Output feature c * spatial_size + s reads channel c at window tap s.
    eye = np.eye(spatial_size, dtype=lhs.dtype)
    rhs = np.broadcast_to(eye, (n_channels, spatial_size, spatial_size))
    rhs = rhs.reshape((n_channels * spatial_size, 1) + filter_shape)
    rhs = np.moveaxis(rhs, (0, 1), (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(
        lhs, np.ascontiguousarray(rhs), window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=n_channels, preferred_element_type=preferred_element_type)
