"""``jax.nn.dot_product_attention``: scaled dot-product attention with bias, boolean
masks, causal and local-window masks, padding by sequence lengths and grouped-query
heads, computed as JAX's ``'xla'`` implementation does (logits in at least float32,
softmax in float32, masked logits set to a large finite negative)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.nn.functions import softmax
from tinyxla._src.numpy import creation, shape as jnp_shape
from tinyxla._src.scipy.logsumexp import logsumexp


def _ensure_4d(t: Any) -> Any:
    t = creation.asarray(t)
    if t.ndim < 4:
        return jnp_shape.expand_dims(t, tuple(range(4 - t.ndim)))
    return t


def _check_shape_and_dtype(t: Any, shape: Sequence[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for i in range(t.ndim):
        if shape[i] != -1 and t.shape[i] != shape[i]:
            raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _large_negative(dtype: np.dtype) -> Any:
    # Capped at float32's range: the softmax runs in float32 and must see a finite value.
    dtype_max = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
    return creation.asarray(-0.7 * dtype_max, dtype=dtype)


def _grouped(t: Any, num_kv_heads: int, groups: int) -> Any:
    """A (B, N|1, T, S) bias or mask as (B, K|1, G|1, T, S), heads split into groups."""
    b, n, tq, s = t.shape
    if n == 1:
        return lax.reshape(t, (b, 1, 1, tq, s))
    return lax.reshape(t, (b, num_kv_heads, groups, tq, s))


def _masks(t: int, s: int, batch: int, is_causal: bool, q_seqlen: Any, kv_seqlen: Any,
           local_window_size: tuple[int, int] | None) -> Any:
    """The positions that may attend, broadcastable to the (B, K, G, T, S) logits, or None."""
    q_pos = lax.broadcasted_iota(np.int32, (t, s), 0)
    k_pos = lax.broadcasted_iota(np.int32, (t, s), 1)
    combined = None

    def both(a, b):
        return b if a is None else lax.bitwise_and(a, b)

    if is_causal:
        combined = both(combined, lax.ge(q_pos, k_pos))
    if local_window_size is not None:
        left, right = local_window_size
        combined = both(combined, lax.le(q_pos, lax.add(k_pos, np.int32(left))))
        combined = both(combined, lax.ge(q_pos, lax.sub(k_pos, np.int32(right))))
    if combined is not None:
        combined = lax.reshape(combined, (1, 1, 1, t, s))
    if q_seqlen is not None or kv_seqlen is not None:
        pad = None
        if q_seqlen is not None:
            pad = lax.lt(lax.broadcasted_iota(np.int32, (batch, t, s), 1),
                         lax.broadcast_in_dim(q_seqlen, (batch, t, s), (0,)))
        if kv_seqlen is not None:
            pad = both(pad, lax.lt(lax.broadcasted_iota(np.int32, (batch, t, s), 2),
                                   lax.broadcast_in_dim(kv_seqlen, (batch, t, s), (0,))))
        pad = lax.reshape(pad, (batch, 1, 1, t, s))
        combined = pad if combined is None else lax.bitwise_and(
            lax.broadcast_in_dim(combined, (batch, 1, 1, t, s), (0, 1, 2, 3, 4)), pad)
    return combined


def _attention(query: Any, key: Any, value: Any, bias: Any, mask: Any, is_causal: bool,
               scale: float, q_seqlen: Any, kv_seqlen: Any,
               local_window_size: tuple[int, int] | None, return_residual: bool) -> Any:
    b, t, n, h = query.shape
    _, s, k, _ = key.shape
    g = n // k
    query = lax.reshape(query, (b, t, k, g, h))
    logits_dtype = dtypes.promote_types(query.dtype, np.float32)
    # 'BTKGH,BSKH->BKGTS': batch (B, K), contract H; the result is (B, K, T, G, S).
    logits = lax.dot_general(query, key, (((4,), (3,)), ((0, 2), (0, 2))),
                             preferred_element_type=logits_dtype)
    logits = lax.transpose(logits, (0, 1, 3, 2, 4))
    logits = lax.mul(logits, creation.asarray(scale, dtype=logits.dtype))
    if bias is not None:
        logits = lax.convert_element_type(
            logits + jnp_shape.broadcast_to(_grouped(bias, k, g), logits.shape), logits.dtype)
    allowed = _masks(t, s, b, is_causal, q_seqlen, kv_seqlen, local_window_size)
    if mask is not None:
        user = _grouped(mask, k, g)
        allowed = user if allowed is None else lax.bitwise_and(
            jnp_shape.broadcast_to(user, logits.shape),
            jnp_shape.broadcast_to(allowed, logits.shape))
    if allowed is not None:
        logits = lax.select(jnp_shape.broadcast_to(allowed, logits.shape), logits,
                            lax.full_like(logits, _large_negative(logits.dtype)))
    logits = lax.convert_element_type(logits, np.float32)
    probs = lax.convert_element_type(softmax(logits, axis=-1), key.dtype)
    # 'BKGTS,BSKH->BKGTH', then to (B, T, K, G, H).
    encoded = lax.dot_general(probs, value, (((4,), (1,)), ((0, 1), (0, 2))))
    encoded = lax.reshape(lax.transpose(encoded, (0, 3, 1, 2, 4)), (b, t, n, h))
    if q_seqlen is not None:
        valid = lax.lt(lax.broadcasted_iota(np.int32, (b, t, 1, 1), 1),
                       lax.broadcast_in_dim(q_seqlen, (b, t, 1, 1), (0,)))
        encoded = lax.mul(encoded, lax.convert_element_type(valid, encoded.dtype))
    if not return_residual:
        return encoded
    lse = lax.convert_element_type(logsumexp(logits, axis=-1), key.dtype)  # (B, K, G, T)
    lse = lax.reshape(lax.transpose(lse, (0, 3, 1, 2)), (b, t, n))
    return encoded, lax.stop_gradient(lse)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None,
                          mask: Any = None, *, scale: float | None = None,
                          is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """Scaled dot-product attention (``jax.nn.dot_product_attention``).

    ``query`` is (B, T, N, H) and ``key``/``value`` (B, S, K, H), or the same without the
    batch axis; N must be a multiple of K (grouped-query attention). ``bias`` and the
    boolean ``mask`` broadcast to (B, N, T, S); ``scale`` defaults to ``1/sqrt(H)``;
    ``is_causal``, ``local_window_size`` (left, right) and the int32 sequence lengths
    mask positions out. Only the ``'xla'`` implementation exists (``'cudnn'`` raises).
    With ``return_residual`` the softmax's logsumexp (B, T, N) comes back too.
    """
    output_shape = creation.asarray(query).shape
    residual_shape = output_shape[:-1]
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = _ensure_4d(bias) if bias is not None else None
    mask = _ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = creation.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = creation.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, k, h = key_arr.shape
    _check_shape_and_dtype(value_arr, [b, s, k, h], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [b, -1, -1, h], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(query_seq_lengths, [b], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(key_value_seq_lengths, [b], np.dtype("int32"),
                           "key_value_seq_lengths")
    if query_arr.shape[-2] % k != 0:
        raise ValueError("The number of query heads must be a multiple of key/value heads, "
                         f"but got {query_arr.shape[-2]} vs {k}")
    scale_val = (1.0 / np.sqrt(h)) if scale is None else scale
    if implementation == "cudnn":
        raise NotImplementedError("dot_product_attention: the 'cudnn' implementation needs a "
                                  "CUDA device; tinyxla has the 'xla' one")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention(query_arr, key_arr, value_arr, bias, mask, is_causal, scale_val,
                     query_seq_lengths, key_value_seq_lengths, local_window_size,
                     return_residual)
    if return_residual:
        out, residual = out
        return lax.reshape(out, output_shape), lax.reshape(residual, residual_shape)
    return lax.reshape(out, output_shape)
