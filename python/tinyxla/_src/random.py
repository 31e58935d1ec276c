"""``tinyxla.random``: mirrors ``jax.random`` (``jax/_src/random/core.py``) with the default
threefry2x32 PRNG. Bit-exact with JAX 0.10 (both settings of ``jax_threefry_partitionable``,
x32 and x64) for keys, ``split``, ``fold_in``, ``bits``, ``uniform``, ``randint``,
``bernoulli``, ``permutation``, ``choice``, ``categorical``, ``rademacher``, ``geometric``
and float32 ``normal``.

Each sampler's body runs through ``jit`` (cached per shape, dtype and
``jax_threefry_partitionable``), as JAX's do, so an eager call is one compiled dispatch.

Where it differs from JAX: typed keys are ``PRNGKeyArray`` pytrees rather than arrays of an
extended dtype (see ``prng.py``). Float32 ``normal`` is bit-exact because tinyxla's float32
``erf_inv`` kernel is XLA:CPU's (cpu/vmath_kernels.inc); float64 ``normal`` uses tinyxla's
own double ``erf_inv``.
Samplers built on ``log``, ``log1p``, ``tan`` or ``erf`` match to the accuracy of those
functions. The samplers that loop or build on
gamma are in ``random_distributions``.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src import prng
from tinyxla._src.api import jit
from tinyxla._src.array import Array
from tinyxla._src.core import Tracer
from tinyxla._src.numpy.promotion import broadcast_shapes
from tinyxla._src.lax import cumulative, lax, slicing, sorting
from tinyxla._src.prng import PRNGKeyArray, UINT_DTYPES
from tinyxla import numpy as jnp

Shape = Sequence[int]


# ----------------------------------------------------------------------------- key checking

def _arraylike(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Array, Tracer)) or np.isscalar(x)


def _check_prng_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """The uint32 key data of ``key`` and whether it was a raw (legacy) key
    (JAX's ``_check_prng_key``)."""
    if isinstance(key, PRNGKeyArray):
        data, wrapped, shape = key._base_array, False, key.shape
    elif _arraylike(key):
        if isinstance(key, np.ndarray) or np.isscalar(key):
            key = jnp.asarray(key)
        prng._check_prng_key_data(key)
        data, wrapped, shape = key, True, tuple(key.shape[:-1])
    else:
        raise TypeError(f'unexpected PRNG key type {type(key)}')
    if not allow_batched and shape:
        raw_shape = tuple(np.shape(data)) if wrapped else shape
        raise ValueError(f"{name} accepts a single key, but was given a key array of"
                         f" shape {raw_shape} != (). Use jax.vmap for batching.")
    return data, wrapped


def _return_keys(wrapped: bool, data: Any) -> Any:
    return data if wrapped else PRNGKeyArray._from_data(data)


def _canonical_shape(shape: Any) -> tuple[int, ...]:
    return lax.canonicalize_shape(shape)


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if param_shapes:
        shape_ = broadcast_shapes(shape, *param_shapes)
        if shape != shape_:
            msg = ("{} parameter shapes must be broadcast-compatible with shape "
                   "argument, and the result of broadcasting the shapes must equal "
                   "the shape argument, but got result {} for shape argument {}.")
            raise ValueError(msg.format(name, shape_, shape))


# ----------------------------------------------------------------------------- keys

def _seed_array(seed: Any) -> Any:
    # JAX converts Python ints through np.int64 first, then canonicalizes (int32 without x64).
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = np.int64(seed)
    if isinstance(seed, np.generic):
        return jnp.asarray(seed.astype(dtypes.canonicalize_dtype(seed.dtype)))
    return jnp.asarray(seed)


def _key(ctor_name: str, seed: Any, impl: Any) -> Any:
    known = ('threefry2x32', prng.threefry_prng_impl, prng.key_dtype_fry)
    if impl is not None and impl not in known:
        raise ValueError(f'unrecognized PRNG implementation "{impl}". '
                         'Did you mean one of: "threefry2x32"?')
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of "
                        f"shape {np.shape(seed)} != (). Use jax.vmap for batching")
    return _seed_jit(_seed_array(seed))


_seed_jit = jit(prng.seed_data)


def key(seed: int | Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed PRNG key (``key<fry>``) from an integer seed (mirrors ``jax.random.key``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return PRNGKeyArray._from_data(_key('key', seed, impl))


def PRNGKey(seed: int | Any, *, impl: Any = None) -> Any:
    """A legacy raw key, ``uint32[2]``, from an integer seed (mirrors ``jax.random.PRNGKey``)."""
    return _key('PRNGKey', seed, impl)


def key_data(keys: Any) -> Any:
    """The uint32 data under a key array (mirrors ``jax.random.key_data``)."""
    data, _ = _check_prng_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed key array over uint32 key data of shape ``(..., 2)`` (mirrors
    ``jax.random.wrap_key_data``)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to"
                             " jax.random.wrap_key_data")
    if isinstance(key_bits_array, np.ndarray):
        key_bits_array = jnp.asarray(key_bits_array)
    return PRNGKeyArray(key_bits_array)


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation (mirrors ``jax.random.key_impl``)."""
    _check_prng_key("key_impl", keys, allow_batched=True)
    return prng.threefry_prng_impl.name


_split_jit = jit(prng.split_data, static_argnums=(1, 2))
_fold_in_jit = jit(prng.fold_in_data)


def split(key: Any, num: int | tuple[int, ...] = 2) -> Any:
    """Splits a key into ``num`` (an int or a shape) new keys (mirrors ``jax.random.split``)."""
    data, wrapped = _check_prng_key("split", key)
    return _return_keys(wrapped, _split_jit(data, prng.shape_tuple(num), prng.partitionable()))


def _split(data: Any, num: int = 2) -> Any:
    return prng.split_data(data, (num,), prng.partitionable())


def fold_in(key: Any, data: Any) -> Any:
    """A new key from a key and a 32-bit integer (mirrors ``jax.random.fold_in``)."""
    kdata, wrapped = _check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    return _return_keys(wrapped, _fold_in_jit(kdata, _as_uint32(data)))


def _as_uint32(data: Any) -> Any:
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        return jnp.asarray(np.array(int(data) & 0xFFFFFFFF, np.uint32))
    return lax.convert_element_type(jnp.asarray(data), np.uint32)


# ----------------------------------------------------------------------------- samplers

def _random_bits(data: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    return prng.random_bits_data(data, bit_width, shape, prng.partitionable())


def bits(key: Any, shape: Shape = (), dtype: Any = None) -> Any:
    """Uniform random unsigned integers (mirrors ``jax.random.bits``)."""
    data, _ = _check_prng_key("bits", key)
    dtype = (dtypes.default_uint_dtype() if dtype is None
             else dtypes.check_user_dtype_supported(dtype))
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError("dtype argument to `bits` must be an unsigned int dtype, "
                         f"got {dtype}")
    return _bits_jit(data, dtype.itemsize * 8, _canonical_shape(shape), prng.partitionable())


_bits_jit = jit(prng.random_bits_data, static_argnums=(1, 2, 3))


def _float_dtype(name: str, dtype: Any, kind: type = np.floating) -> np.dtype:
    dtype = dtypes.check_user_dtype_supported(float if dtype is None else dtype, name)
    if not dtypes.issubdtype(dtype, kind):
        what = "float" if kind is np.floating else "float or complex"
        raise ValueError(f"dtype argument to `{name}` must be a {what} dtype, got {dtype}")
    return dtype


def uniform(key: Any, shape: Shape = (), dtype: Any = None, minval: Any = 0.,
            maxval: Any = 1.) -> Any:
    """Uniform floats in ``[minval, maxval)`` (mirrors ``jax.random.uniform``)."""
    data, _ = _check_prng_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    return _uniform_jit(data, minval, maxval, _canonical_shape(shape), dtype, prng.partitionable())


def _uniform(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype,
             partitionable: bool) -> Any:
    _check_shape("uniform", shape)
    for bound in (minval, maxval) if all(d >= 0 for d in shape) else ():
        try:
            np.broadcast_shapes(np.shape(bound), shape)
        except ValueError:  # JAX fails in the multiply that scales the bits
            raise TypeError(f"mul got incompatible shapes for broadcasting: {shape}, "
                            f"{np.shape(bound)}.") from None
    minval = jnp.broadcast_to(lax.convert_element_type(minval, dtype), shape)
    maxval = jnp.broadcast_to(lax.convert_element_type(maxval, dtype), shape)
    bits = prng.random_bits_data(data, uniform_bit_width(dtype), shape, partitionable)
    return uniform_from_bits(bits, minval, maxval, dtype)


def uniform_bit_width(dtype: np.dtype) -> int:
    """The width of the random words ``uniform`` draws for ``dtype``."""
    finfo = dtypes.finfo(dtype)
    if finfo.bits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    return 8 if finfo.nmant < 8 else finfo.bits


def uniform_from_bits(bits: Any, minval: Any, maxval: Any, dtype: np.dtype) -> Any:
    """JAX's ``uniform`` in [minval, maxval) from the random words it draws."""
    nbits = dtypes.finfo(dtype).bits
    rng_bits = np.dtype(bits.dtype).itemsize * 8
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, UINT_DTYPES[nbits])
    floats = unit_floats(bits, rng_bits, dtype)
    return lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))


def unit_floats(bits: Any, rng_bits: int, dtype: np.dtype) -> Any:
    """Floats in [0, 1) from random words of ``dtype``'s width, ``rng_bits`` of them random
    (JAX's ``uniform`` with bounds 0 and 1, which leave these values as they are)."""
    uint_dtype = UINT_DTYPES[dtypes.finfo(dtype).bits]
    # Random mantissa bits under the exponent of 1.0 give a float in [1, 2).
    float_bits = lax.bitwise_or(
        lax.shift_right_logical(bits, uint_dtype.type(rng_bits - dtypes.finfo(dtype).nmant)),
        np.array(1.0, dtype).view(uint_dtype))
    return lax.sub(lax.bitcast_convert_type(float_bits, dtype), dtype.type(1.))


_uniform_jit = jit(_uniform, static_argnums=(3, 4, 5))


def _convert_and_clip_integer(val: Any, dtype: np.dtype) -> Any:
    """``val`` converted to the integer ``dtype``, clipped to its range instead of wrapping."""
    lo = max(dtypes.iinfo(dtype).min, dtypes.iinfo(val.dtype).min)
    hi = min(dtypes.iinfo(dtype).max, dtypes.iinfo(val.dtype).max)
    clipped = jnp.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype))
    return lax.convert_element_type(clipped, dtype)


def randint(key: Any, shape: Shape, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in ``[minval, maxval)`` (mirrors ``jax.random.randint``)."""
    data, _ = _check_prng_key("randint", key)
    dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "randint")
    shape = _canonical_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sample_dtype = dtype
    if info.bits < 32:
        # Sample in 32 bits to avoid biased results.
        sample_dtype = np.dtype('int32')
        minval = jnp.clip(jnp.asarray(minval).astype('int32'), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype('int32'), int(info.min), int(info.max) + 1)
    out = _randint_jit(data, minval, maxval, shape, sample_dtype, prng.partitionable())
    return out if out.dtype == dtype else out.astype(dtype)


def _randint(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...], dtype: np.dtype,
             partitionable: bool) -> Any:
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    minval = jnp.asarray(minval)
    maxval = jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    # randint(key, shape, 0, 256, 'uint8') needs a span one past the dtype's maximum.
    maxval_out_of_range = lax.gt(
        maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype))
    minval = jnp.broadcast_to(_convert_and_clip_integer(minval, dtype), shape)
    maxval = jnp.broadcast_to(_convert_and_clip_integer(maxval, dtype), shape)
    maxval_out_of_range = jnp.broadcast_to(maxval_out_of_range, shape)
    nbits = dtypes.iinfo(dtype).bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    keys = prng.split_data(data, (2,), partitionable)
    higher_bits = prng.random_bits_data(keys[0], nbits, shape, partitionable)
    lower_bits = prng.random_bits_data(keys[1], nbits, shape, partitionable)
    unsigned_dtype = UINT_DTYPES[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned_dtype)
    span = lax.select(lax.le(maxval, minval), lax.full_like(span, 1), span)
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.gt(maxval, minval)),
                      lax.add(span, unsigned_dtype.type(1)), span)
    # (hi * 2**nbits + lo) % span without overflow: 2**nbits % span as (2**(nbits/2) % span)**2.
    multiplier = lax.rem(lax.full_like(span, 2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                            lax.rem(lower_bits, span))
    random_offset = lax.rem(random_offset, span)
    return lax.add(minval, lax.convert_element_type(random_offset, dtype))


_randint_jit = jit(_randint, static_argnums=(3, 4, 5))


def normal(key: Any, shape: Shape = (), dtype: Any = None) -> Any:
    """Standard normal samples (mirrors ``jax.random.normal``)."""
    data, _ = _check_prng_key("normal", key)
    dtype = _float_dtype("normal", dtype, np.inexact)
    return _normal_jit(data, _canonical_shape(shape), dtype, prng.partitionable())


def _normal_real(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    _check_shape("normal", shape)
    u = _uniform(data, _normal_lo(dtype), np.array(1., dtype), shape, dtype, partitionable)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal_lo(dtype: np.dtype) -> np.ndarray:
    """The lower bound of the uniform a normal is drawn from: erf_inv(-1) is -inf."""
    return np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)


def normal_from_bits(bits: Any, dtype: np.dtype) -> Any:
    """JAX's real ``normal`` from the random words its uniform draws."""
    u = uniform_from_bits(bits, lax.full(bits.shape, _normal_lo(dtype), dtype),
                          lax.full(bits.shape, 1., dtype), dtype)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def _normal(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = np.array(0, dtype).real.dtype
        keys = prng.split_data(data, (2,), partitionable)
        re = _normal_real(keys[0], shape, real_dtype, partitionable)
        im = _normal_real(keys[1], shape, real_dtype, partitionable)
        return lax.div(lax.complex(re, im), np.array(np.sqrt(2), dtype))
    return _normal_real(data, shape, dtype, partitionable)


_normal_jit = jit(_normal, static_argnums=(1, 2, 3))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Shape | None = None,
                     dtype: Any = None) -> Any:
    """Normal samples truncated to ``(lower, upper)`` (mirrors ``jax.random.truncated_normal``)."""
    data, _ = _check_prng_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    if shape is not None:
        shape = _canonical_shape(shape)
    return _truncated_normal_jit(data, lower, upper, shape, dtype, prng.partitionable())


def _truncated_normal(data: Any, lower: Any, upper: Any, shape: tuple[int, ...] | None,
                      dtype: np.dtype, partitionable: bool) -> Any:
    if shape is None:
        shape = broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = _uniform(data, a, b, shape, dtype, partitionable)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # Clamp into the open interval: rounding (or u == a) must not leave it.
    lower, upper = lax.stop_gradient(lower), lax.stop_gradient(upper)
    lo = jnp.broadcast_to(lax.nextafter(lower, lax.full_like(lower, np.inf)), shape)
    hi = jnp.broadcast_to(lax.nextafter(upper, lax.full_like(upper, -np.inf)), shape)
    return jnp.clip(out, lo, hi)


_truncated_normal_jit = jit(_truncated_normal, static_argnums=(3, 4, 5))


def bernoulli(key: Any, p: Any = 0.5, shape: Shape | None = None, mode: str = 'low') -> Any:
    """Boolean samples that are True with probability ``p`` (mirrors ``jax.random.bernoulli``)."""
    if shape is not None:
        shape = _canonical_shape(shape)
    if mode not in ['high', 'low']:
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    data, _ = _check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    return _bernoulli_jit(data, p, shape, mode, prng.partitionable())


def _bernoulli(data: Any, p: Any, shape: tuple[int, ...] | None, mode: str,
               partitionable: bool) -> Any:
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        _check_shape("bernoulli", shape, np.shape(p))
    dtype = p.dtype
    p = jnp.broadcast_to(p, shape)
    if mode == 'high':
        u = _uniform(data, 0., 1., (2, *shape), dtype, partitionable)
        u1, u2 = u[0], u[1]
        # The resolution of uniform samples is 2 ** -n_mantissa.
        u2 = lax.mul(u2, dtype.type(2 ** -dtypes.finfo(dtype).nmant))
        return lax.lt(u2, lax.sub(p, u1))
    return lax.lt(_uniform(data, 0., 1., shape, dtype, partitionable), p)


_bernoulli_jit = jit(_bernoulli, static_argnums=(2, 3, 4))


def _one_param_sampler(name: str, body: Any) -> Any:
    """The public wrapper of a sampler with only ``(key, shape, dtype)`` arguments."""
    body_jit = jit(body, static_argnums=(1, 2, 3))

    def sampler(key: Any, shape: Shape = (), dtype: Any = None) -> Any:
        data, _ = _check_prng_key(name, key)
        dtype = _float_dtype(name, dtype)
        return body_jit(data, _canonical_shape(shape), dtype, prng.partitionable())
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = f"{name.capitalize()} samples (mirrors ``jax.random.{name}``)."
    return sampler


def _exponential(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    u = _uniform(data, 0., 1., shape, dtype, partitionable)
    # log1p(-u) puts the domain of the log at (0, 1] instead of [0, 1).
    return lax.neg(lax.log1p(lax.neg(u)))


def _laplace(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    u = _uniform(data, -1. + dtypes.finfo(dtype).epsneg, 1., shape, dtype, partitionable)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    x = _uniform(data, dtypes.finfo(dtype).tiny, 1., shape, dtype, partitionable)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


exponential = _one_param_sampler("exponential", _exponential)
laplace = _one_param_sampler("laplace", _laplace)
logistic = _one_param_sampler("logistic", _logistic)


def gumbel(key: Any, shape: Shape = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Gumbel samples (mirrors ``jax.random.gumbel``)."""
    data, _ = _check_prng_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return _gumbel_jit(data, _canonical_shape(shape), dtype, mode, prng.partitionable())


def _gumbel(data: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str,
            partitionable: bool) -> Any:
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        bits = prng.random_bits_data(data, 32, (2, *shape), partitionable)
        neg = lax.bitwise_not(bits)
        lo_bits = neg[1]
        # 1 - bits as a 64-bit fixed-point fraction.
        carry = lax.convert_element_type(lax.eq(lo_bits, np.uint32(0xFFFFFFFF)), np.uint32)
        neg = lax.add(neg, jnp.stack([carry, jnp.ones_like(lo_bits)]))
        flip_mask = lax.lt(bits[0], np.uint32(1 << 31))
        x = _safe_int_to_float(jnp.where(flip_mask, bits, neg))
        # log1p for (0, 0.5), log for [0.5, 1).
        return jnp.where(flip_mask, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
    if mode in ("high", "highest"):
        u = _uniform(data, 0., 1., (2, *shape), dtype, partitionable)
        high, low = u[0], u[1]
        # The condition guards against rounding up to 1.
        x = jnp.where(high >= 0.5, high, high + 2 ** -(info.nmant) * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    u = _uniform(data, info.tiny, 1., shape, dtype, partitionable)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


_gumbel_jit = jit(_gumbel, static_argnums=(1, 2, 3, 4))


def _safe_int_to_float(bits: Any) -> Any:
    """uint32[2, ...] read as a 64-bit fixed-point fraction, as float32 in (0, 1) with the
    leading zeros turned into exponent (JAX's ``_safe_int_to_float``)."""
    u32 = np.uint32
    finfo = dtypes.finfo(np.float32)
    hi, lo = bits[0], bits[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(hiclz == 32, lax.shift_left(lo, loclz),
                  lax.shift_right_logical(lo, u32(finfo.bits) - hiclz)))
    mantissa = lax.shift_right_logical(mantissa, u32(finfo.bits - finfo.nmant - 1))
    mantissa = lax.bitwise_and(mantissa, u32((1 << finfo.nmant) - 1))
    exp = lax.shift_left(u32(-finfo.minexp) - jnp.where(hiclz == 32, 32 + loclz, hiclz),
                         u32(finfo.nmant))
    exp = lax.bitwise_and(exp, u32((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1))))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), np.float32)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Shape | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Samples of category indices from unnormalized log-probabilities (mirrors
    ``jax.random.categorical``)."""
    _check_prng_key("categorical", key)
    if not _arraylike(logits):
        raise TypeError(f"categorical requires ndarray or scalar arguments, got {type(logits)} "
                        "at position 0.")
    logits_arr = jnp.asarray(logits)
    if axis >= 0:
        axis -= logits_arr.ndim
    batch_shape = tuple(np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonical_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if not replace:
        logits_arr = logits_arr + gumbel(key, logits_arr.shape, logits_arr.dtype, mode=mode)
        k = int(np.prod(shape_prefix))
        if k > logits_arr.shape[axis]:
            raise ValueError(
                f"Number of samples without replacement ({k}) cannot exceed number of "
                f"categories ({logits_arr.shape[axis]}).")
        # lax.top_k along axis: the k best of a stable descending sort.
        order = _stable_argsort(jnp.moveaxis(logits_arr, axis, -1), descending=True)
        indices = lax.slice(order, (0,) * order.ndim, (*order.shape[:-1], k))
        dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
        return lax.reshape(indices, shape, dimensions)
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % logits_arr.ndim, logits_arr.shape[axis])
    g = gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode)
    return jnp.argmax(g + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))), axis=axis)


def _stable_argsort(keys: Any, descending: bool = False) -> Any:
    """The int32 permutation that stably sorts ``keys`` along their last axis: ascending as
    XLA's stable sort orders, or descending as ``lax.top_k`` does (ties keep the lower
    position first)."""
    n = keys.shape[-1]
    if descending:
        return sorting.top_k(keys, n)[1]
    pos = lax.broadcasted_iota(np.int32, keys.shape, keys.ndim - 1)
    return sorting.sort((keys, pos), dimension=keys.ndim - 1, is_stable=True, num_keys=1)[1]


def _take_first_axis(x: Any, ind: Any) -> Any:
    """``x[ind]`` for an int vector ``ind``: one gather of whole slices along axis 0."""
    rest = tuple(x.shape[1:])
    dnums = slicing.GatherDimensionNumbers(offset_dims=tuple(range(1, 1 + len(rest))),
                                           collapsed_slice_dims=(0,), start_index_map=(0,))
    return slicing.gather(x, lax.reshape(ind, (ind.shape[0], 1)), dnums, (1, *rest))


def _take(x: Any, ind: Any, axis: int) -> Any:
    """``jnp.take(x, ind, axis)`` for an int vector ``ind``."""
    return jnp.moveaxis(_take_first_axis(jnp.moveaxis(x, axis, 0), ind), 0, axis)


def _shuffle(data: Any, x: Any, partitionable: bool) -> Any:
    """``x`` permuted along axis 0 (JAX's ``_shuffle``): stable sorts by fresh random 32-bit
    keys, repeated enough rounds that key collisions leave no measurable bias."""
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.shape[0])) / np.log(uint32max)))
    for _ in range(num_rounds):
        keys = prng.split_data(data, (2,), partitionable)
        data, subkey = keys[0], keys[1]
        sort_keys = prng.random_bits_data(subkey, 32, (x.shape[0],), partitionable)
        x = _take_first_axis(x, _stable_argsort(sort_keys))
    return x


_shuffle_jit = jit(_shuffle, static_argnums=(2,))


def _shuffle_independent(data: Any, x: Any, axis: int, partitionable: bool) -> Any:
    """``x`` with each 1-d slice along ``axis`` permuted independently (JAX's ``_shuffle``
    with an axis): sort keys are drawn at ``x``'s shape."""
    num_rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    nd = x.ndim
    batch = tuple(range(nd - 1))
    dnums = slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(nd - 1,),
                                           start_index_map=(nd - 1,), operand_batching_dims=batch,
                                           start_indices_batching_dims=batch)
    x = jnp.moveaxis(x, axis, -1)
    for _ in range(num_rounds):
        keys = prng.split_data(data, (2,), partitionable)
        data, subkey = keys[0], keys[1]
        shape = list(x.shape[:-1])
        shape.insert(axis % nd, x.shape[-1])  # the shape before the axis moved last
        shape = tuple(shape)
        sort_keys = jnp.moveaxis(prng.random_bits_data(subkey, 32, shape, partitionable), axis, -1)
        order = _stable_argsort(sort_keys)
        x = slicing.gather(x, lax.expand_dims(order, (nd,)), dnums, (1,) * nd)
    return jnp.moveaxis(x, -1, axis)


_shuffle_independent_jit = jit(_shuffle_independent, static_argnums=(2, 3))


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis`` (mirrors
    ``jax.random.permutation``)."""
    data, _ = _check_prng_key("permutation", key)
    if not _arraylike(x):
        raise TypeError(f"permutation requires ndarray or scalar arguments, got {type(x)} "
                        "at position 0.")
    axis = lax._canonicalize_axis(axis, np.ndim(x) or 1)
    if not np.ndim(x):
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(x)
        return _shuffle_jit(data, jnp.arange(r), prng.partitionable())
    x = jnp.asarray(x)
    if independent and x.ndim > 1:
        return _shuffle_independent_jit(data, x, axis, prng.partitionable())
    if x.ndim == 1:
        return _shuffle_jit(data, x, prng.partitionable())
    ind = _shuffle_jit(data, jnp.arange(x.shape[axis]), prng.partitionable())
    return _take(x, ind, axis)


def _choice_p(data: Any, p: Any, shape: tuple[int, ...], partitionable: bool) -> Any:
    p_cuml = cumulative.cumsum(p)
    total = lax.reshape(lax.slice(p_cuml, (p.shape[0] - 1,), (p.shape[0],)), ())
    u = _uniform(data, 0., 1., shape, p.dtype, partitionable)
    r = lax.mul(total, lax.sub(p.dtype.type(1), u))
    return lax.convert_element_type(jnp.searchsorted(p_cuml, r), dtypes.default_int_dtype())


_choice_p_jit = jit(_choice_p, static_argnums=(2, 3))


def choice(key: Any, a: Any, shape: Shape = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """A random sample of ``a`` (or of ``arange(a)``) (mirrors ``jax.random.choice``)."""
    _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, "
                        f"got {shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = lax._canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = int(np.prod(shape))
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than "
            f"population (size {n_inputs}) when 'replace=False'")
    if p is not None:
        p_arr = jnp.asarray(p)
        if not dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            ind = _choice_p_jit(_check_prng_key("choice", key)[0], p_arr, tuple(shape),
                                prng.partitionable())
        else:
            # The Gumbel top-k trick: the n_draws largest of gumbel noise + log p.
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.slice(_stable_argsort(g, descending=True), (0,), (n_draws,))
            ind = ind.astype(dtypes.default_int_dtype())
        if arr.ndim == 0:
            return ind.reshape(tuple(shape))
        result = _take(arr, ind.reshape(-1), axis)
    elif replace:
        ind = randint(key, shape, 0, n_inputs)
        if arr.ndim == 0:
            return ind
        result = _take(arr, ind.reshape(-1), axis)
    else:
        perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
        ax = axis if arr.ndim else 0
        limit = tuple(n_draws if d == ax else perm.shape[d] for d in range(perm.ndim))
        result = lax.slice(perm, (0,) * perm.ndim, limit)
    return result.reshape(tuple(shape) if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


# ----------------------------------------------------------------------------- transformed samplers

def _check_broadcast_shapes(name: str, shape: Any, *args: Any) -> tuple[int, ...]:
    arg_shapes = [tuple(np.shape(a)) for a in args]
    if shape is None:
        return broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = _canonical_shape(shape)
    _check_shape(name, shape, *arg_shapes)
    return shape


def _param_sampler(name: str, body: Any) -> Any:
    """Runs a float sampler ``body(data, *params, shape, dtype, partitionable)`` through jit;
    the result shape defaults to the broadcast of the parameters' shapes."""
    nargs = body.__code__.co_argcount
    body_jit = jit(body, static_argnums=(nargs - 3, nargs - 2, nargs - 1))

    def run(key: Any, params: tuple[Any, ...], shape: Shape | None, dtype: Any) -> Any:
        data, _ = _check_prng_key(name, key)
        dtype = _float_dtype(name, dtype)
        shape = _check_broadcast_shapes(name, shape, *params)
        return body_jit(data, *params, shape, dtype, prng.partitionable())
    return run


def _cauchy(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    u = _uniform(data, dtypes.finfo(dtype).eps, 1., shape, dtype, partitionable)
    return lax.tan(lax.mul(dtype.type(np.pi), lax.sub(u, dtype.type(0.5))))


def _maxwell(data: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    norm_rvs = _normal(data, (*shape, 3), dtype, partitionable)
    return lax.sqrt(lax.reduce_sum(lax.mul(norm_rvs, norm_rvs), (len(shape),)))


cauchy = _one_param_sampler("cauchy", _cauchy)
maxwell = _one_param_sampler("maxwell", _maxwell)


def _lognormal(data: Any, sigma: Any, shape: tuple[int, ...], dtype: np.dtype,
               partitionable: bool) -> Any:
    sigma = jnp.broadcast_to(lax.convert_element_type(sigma, dtype), shape)
    return lax.exp(lax.mul(_normal(data, shape, dtype, partitionable), sigma))


def _pareto(data: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype, partitionable: bool) -> Any:
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    return lax.exp(lax.div(_exponential(data, shape, dtype, partitionable), b))


def _rayleigh(data: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype,
              partitionable: bool) -> Any:
    u = _uniform(data, 0., 1., shape, dtype, partitionable)
    scale = jnp.broadcast_to(lax.convert_element_type(scale, dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), dtype.type(-2))))


def _triangular(data: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...],
                dtype: np.dtype, partitionable: bool) -> Any:
    left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                         for v in (left, mode, right))
    fc = (mode - left) / (right - left)
    u = _uniform(data, 0., 1., shape, dtype, partitionable)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


_lognormal_run = _param_sampler("lognormal", _lognormal)
_pareto_run = _param_sampler("pareto", _pareto)
_rayleigh_run = _param_sampler("rayleigh", _rayleigh)
_triangular_run = _param_sampler("triangular", _triangular)


def lognormal(key: Any, sigma: Any = np.float32(1), shape: Shape | None = None,
              dtype: Any = None) -> Any:
    """Log-normal samples (mirrors ``jax.random.lognormal``)."""
    return _lognormal_run(key, (sigma,), shape, dtype)


def pareto(key: Any, b: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Pareto samples (mirrors ``jax.random.pareto``)."""
    return _pareto_run(key, (b,), shape, dtype)


def rayleigh(key: Any, scale: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Rayleigh samples (mirrors ``jax.random.rayleigh``)."""
    return _rayleigh_run(key, (scale,), shape, dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Shape | None = None,
               dtype: Any = None) -> Any:
    """Triangular samples (mirrors ``jax.random.triangular``)."""
    return _triangular_run(key, (left, mode, right), shape, dtype)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Shape = (),
                dtype: Any = None) -> Any:
    """Weibull samples (mirrors ``jax.random.weibull_min``)."""
    data, _ = _check_prng_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    return _weibull_min_jit(data, scale, concentration, _canonical_shape(shape), dtype,
                            prng.partitionable())


def _weibull_min(data: Any, scale: Any, concentration: Any, shape: tuple[int, ...],
                 dtype: np.dtype, partitionable: bool) -> Any:
    u = _uniform(data, 0., 1., shape, dtype, partitionable)
    # The inverse of Weibull's CDF.
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


_weibull_min_jit = jit(_weibull_min, static_argnums=(3, 4, 5))


def rademacher(key: Any, shape: Shape = (), dtype: Any = None) -> Any:
    """Uniform samples of -1 and 1 (mirrors ``jax.random.rademacher``)."""
    data, _ = _check_prng_key("rademacher", key)
    dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "rademacher")
    b = _bernoulli_jit(data, lax.convert_element_type(0.5, dtypes.default_float_dtype()),
                       _canonical_shape(shape), 'low', prng.partitionable()).astype(dtype)
    return (2 * b - 1).astype(dtype)


def geometric(key: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Geometric samples: trials until the first success (mirrors ``jax.random.geometric``)."""
    data, _ = _check_prng_key("geometric", key)
    dtype = dtypes.check_user_dtype_supported(int if dtype is None else dtype, "geometric")
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _check_broadcast_shapes("geometric", shape, p)
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(dtypes.default_float_dtype())
    return _geometric_jit(data, p, shape, dtype, prng.partitionable())


def _geometric(data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype,
               partitionable: bool) -> Any:
    u = _uniform(data, 0., 1., shape, p.dtype, partitionable)
    # u == 0 maps to 1, as JAX does, to keep log(u) finite.
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(lax.neg(p)), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


_geometric_jit = jit(_geometric, static_argnums=(2, 3, 4))
