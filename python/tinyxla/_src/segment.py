"""Segment reductions (mirrors ``jax.ops.segment_sum``, ``segment_prod``, ``segment_max``,
``segment_min``): ``out[s] = reduce(data[i] for i with segment_ids[i] == s)``, as a
scatter of ``data`` into an array of the reduction's identity, so jit, grad and vmap
follow the scatter primitives' rules."""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.numpy import creation, reductions
from tinyxla._src.numpy.promotion import check_arraylike


def _identity(method: str, dtype: np.dtype) -> Any:
    if method in ("add", "multiply"):
        return 0 if method == "add" else 1
    lowest = method == "max"  # the identity of max is the lowest value
    if dtype == np.bool_:
        return not lowest
    if dtypes.issubdtype(dtype, np.integer):
        info = dtypes.iinfo(dtype)
        return int(info.min if lowest else info.max)
    return -math.inf if lowest else math.inf


def _concrete_num_segments(n: Any) -> int:
    if isinstance(n, core.Tracer):
        raise errors.ConcretizationTypeError(n, "segment_sum() `num_segments` argument.")
    return operator.index(n)


def _segment_update(name: str, method: str, reducer: Callable[..., Any], data: Any,
                    segment_ids: Any, num_segments: int | None, indices_are_sorted: bool,
                    unique_indices: bool, bucket_size: int | None, mode: Any) -> Any:
    check_arraylike(name, data, segment_ids)
    mode = "fill" if mode is None else mode
    data = creation.asarray(data)
    segment_ids = creation.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        num_segments = reductions.max(segment_ids) + 1
    num_segments = _concrete_num_segments(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    # Out-of-range ids (negative ones too) are dropped, never wrapped, as in JAX.
    kwargs = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode, wrap_negative_indices=False)
    identity = _identity(method, dtype)
    if bucket_size is None:
        out = creation.full((num_segments,) + data.shape[1:], identity, dtype)
        return getattr(out.at[segment_ids], method)(data, **kwargs)
    # Each bucket of ``bucket_size`` consecutive elements reduces into its own row, then
    # the rows reduce: shorter chains of sums and products round better.
    num_buckets = -(-segment_ids.size // bucket_size)
    out = creation.full((num_buckets, num_segments) + data.shape[1:], identity, dtype)
    buckets = creation.arange(segment_ids.shape[0]) // bucket_size
    out = getattr(out.at[buckets, segment_ids[None, :]], method)(data, **kwargs)
    return reducer(out, axis=0).astype(dtype)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The sum of ``data`` within each segment (``jax.ops.segment_sum``).

    ``num_segments`` defaults to ``max(segment_ids) + 1`` (which needs concrete ids);
    ids outside ``[0, num_segments)`` are dropped (``mode`` as in ``.at[]``, default
    ``'fill'``); ``bucket_size`` sums buckets of that many elements first."""
    return _segment_update("segment_sum", "add", reductions.sum, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Any:
    """The product of ``data`` within each segment, 1 for an empty one
    (``jax.ops.segment_prod``); differentiable only with ``unique_indices=True``, as in JAX."""
    return _segment_update("segment_prod", "multiply", reductions.prod, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The maximum of ``data`` within each segment, the dtype's lowest value (``-inf``)
    for an empty one (``jax.ops.segment_max``)."""
    return _segment_update("segment_max", "max", reductions.max, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The minimum of ``data`` within each segment, the dtype's highest value (``inf``)
    for an empty one (``jax.ops.segment_min``)."""
    return _segment_update("segment_min", "min", reductions.min, data, segment_ids,
                           num_segments, indices_are_sorted, unique_indices, bucket_size, mode)
