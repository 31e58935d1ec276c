"""The threefry2x32 PRNG and its key arrays, mirroring ``jax._src.random.threefry2x32`` and
``jax._src.random.prng``.

The hash is written in lax uint32 ops (add, xor, shifts), so it runs eagerly and under
``jit``/``vmap``/``grad`` with no primitive of its own; it is bit-exact with JAX in both
settings of ``jax_threefry_partitionable`` (JAX's default is ``True`` since jax 0.5).

Typed keys (``jax.random.key``) are ``PRNGKeyArray`` objects holding the ``uint32[..., 2]``
key data. Unlike JAX, ``key<fry>`` is not a dtype the array runtime knows: a key array is a
pytree whose only leaf is its key data, so ``jit``, ``vmap`` and ``grad`` see uint32 arrays,
and ``jnp`` functions do not accept key arrays (only indexing, iteration, ``reshape`` and
comparisons do).
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.config import config
from tinyxla._src.lax import lax
from tinyxla._src.tree_util import register_pytree_node

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
               32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}

_U32 = np.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


class PRNGImpl:
    """A PRNG implementation (mirrors ``jax._src.random.prng.PRNGImpl``); only threefry2x32."""
    key_shape = (2,)
    name = 'threefry2x32'
    tag = 'fry'

    def __repr__(self) -> str:
        return "PRNGImpl(threefry2x32)"

    __str__ = __repr__


threefry_prng_impl = PRNGImpl()


class KeyTy:
    """The dtype of typed key arrays, printed ``key<fry>`` (mirrors
    ``jax._src.random.prng.KeyTy``)."""
    _impl = threefry_prng_impl
    name = 'key<fry>'
    type = dtypes.prng_key
    itemsize = 8

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        return type(other) is KeyTy

    def __hash__(self) -> int:
        return hash(KeyTy)


key_dtype_fry = KeyTy()


# ----------------------------------------------------------------------------- the hash

def _rotate_left(x: Any, d: int) -> Any:
    return lax.bitwise_or(lax.shift_left(x, _U32(d)), lax.shift_right_logical(x, _U32(32 - d)))


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds on broadcast-compatible uint32 arrays (JAX's
    ``threefry2x32_p``, unrolled as in its non-CPU lowering)."""
    x1, x2 = lax.asarray(x1), lax.asarray(x2)
    shape = lax._broadcast_shapes(x1, x2, k1, k2)
    x1, x2 = lax._brcast_to(x1, shape), lax._brcast_to(x2, shape)
    # The key schedule is computed at the keys' shape (scalars, usually) and broadcast where
    # it is added, so that the big arrays see one add per injection.
    ks = [k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _U32(0x1BD11BDA))]
    x = [lax.add(x1, lax._brcast_to(ks[0], shape)), lax.add(x2, lax._brcast_to(ks[1], shape))]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = lax.add(x[0], x[1])
            x[1] = lax.bitwise_xor(_rotate_left(x[1], r), x[0])
        x[0] = lax.add(x[0], lax._brcast_to(ks[(i + 1) % 3], shape))
        x[1] = lax.add(x[1], lax._brcast_to(lax.add(ks[(i + 2) % 3], _U32(i + 1)), shape))
    return x[0], x[1]


def threefry_2x32(key: Any, count: Any) -> Any:
    """Hashes a uint32 array of counts with a uint32[2] key (JAX's ``threefry_2x32``): the
    flattened counts, padded to an even length, are hashed first half against second half."""
    k1, k2 = _key_halves(key)
    shape = tuple(count.shape)
    flat = lax.reshape(count, (math.prod(shape),))
    n = flat.shape[0]
    if n % 2:
        flat = lax.concatenate([flat, lax.full((1,), 0, np.uint32)], 0)
    half = flat.shape[0] // 2
    y1, y2 = threefry2x32(k1, k2, lax.slice(flat, (0,), (half,)),
                          lax.slice(flat, (half,), (2 * half,)))
    out = lax.concatenate([y1, y2], 0)
    if n % 2:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, shape)


def _key_halves(key: Any) -> tuple[Any, Any]:
    k1 = lax.reshape(lax.slice(key, (0,), (1,)), ())
    k2 = lax.reshape(lax.slice(key, (1,), (2,)), ())
    return k1, k2


def _iota_2x32_shape(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """(hi, lo) words of the row-major uint64 iota of ``shape`` (JAX's ``iota_2x32_shape``).
    The high words are zero: no array has 2**32 elements here."""
    zeros = lax.full(shape, 0, np.uint32)
    if not shape:
        return zeros, zeros
    return zeros, lax.reshape(lax.iota(np.uint32, math.prod(shape)), shape)


# ----------------------------------------------------------------------------- key data functions

def seed_data(seed: Any) -> Any:
    """The uint32[2] key data for an integer seed (JAX's ``threefry_seed``):
    ``[seed >> 32 (logical), seed & 0xFFFFFFFF]``."""
    if not dtypes.issubdtype(seed.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if seed.dtype.itemsize == 8:
        hi = lax.convert_element_type(lax.shift_right_logical(seed, seed.dtype.type(32)), np.uint32)
    else:
        hi = lax.full((), 0, np.uint32)  # a logical shift by the full width gives 0 in XLA
    lo = lax.convert_element_type(seed, np.uint32)  # a conversion to uint32 keeps the low word
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def split_data(key: Any, shape: tuple[int, ...], partitionable: bool) -> Any:
    """``shape + (2,)`` new key data from one key (JAX's ``threefry_split``)."""
    if partitionable:
        k1, k2 = _key_halves(key)
        hi, lo = _iota_2x32_shape(shape)
        y1, y2 = threefry2x32(k1, k2, hi, lo)
        return lax.concatenate([lax.expand_dims(y1, (len(shape),)),
                                lax.expand_dims(y2, (len(shape),))], len(shape))
    counts = lax.iota(np.uint32, math.prod(shape) * 2)
    return lax.reshape(threefry_2x32(key, counts), (*shape, 2))


def split_words(key: Any, n: int, partitionable: bool) -> tuple[Any, Any]:
    """``split_data(key, (n,))`` as its two words, two uint32[n] arrays."""
    if partitionable:
        k1, k2 = _key_halves(key)
        return threefry2x32(k1, k2, lax.full((n,), 0, np.uint32), lax.iota(np.uint32, n))
    words = lax.reshape(threefry_2x32(key, lax.iota(np.uint32, 2 * n)), (n, 2))
    return (lax.reshape(lax.slice(words, (0, 0), (n, 1)), (n,)),
            lax.reshape(lax.slice(words, (0, 1), (n, 2)), (n,)))


def split_lanes(k1: Any, k2: Any, num: int, partitionable: bool) -> list[tuple[Any, Any]]:
    """``split(key, num)`` of many keys held as their two words (arrays of one shape): the
    ``num`` new keys, each as its two words."""
    if partitionable:
        return [threefry2x32(k1, k2, _U32(0), _U32(i)) for i in range(num)]
    # threefry_2x32 of iota(2 num) hashes count j against count num + j.
    pairs = [threefry2x32(k1, k2, _U32(j), _U32(num + j)) for j in range(num)]
    words = [y1 for y1, _ in pairs] + [y2 for _, y2 in pairs]
    return [(words[2 * i], words[2 * i + 1]) for i in range(num)]


def lane_bits(k1: Any, k2: Any, bit_width: int, partitionable: bool) -> Any:
    """``random_bits_data(key, bit_width, ())`` of many keys held as their two words."""
    position = lax.full_like(k1, 0)
    if bit_width == 64:
        return random_bits_at(k1, k2, position, 1, 64, partitionable)
    # Narrower words are the low bits of the 32-bit one, in both settings.
    bits = random_bits_at(k1, k2, position, 1, 32, partitionable)
    return bits if bit_width == 32 else lax.convert_element_type(bits, UINT_DTYPES[bit_width])


def fold_in_data(key: Any, data: Any) -> Any:
    """New key data from a key and a uint32 scalar (JAX's ``threefry_fold_in``)."""
    return threefry_2x32(key, seed_data(data))


def random_bits_data(key: Any, bit_width: int, shape: tuple[int, ...], partitionable: bool) -> Any:
    """Uniform unsigned bits of the given width (JAX's ``threefry_random_bits``)."""
    dtype = UINT_DTYPES[bit_width]
    if partitionable:
        k1, k2 = _key_halves(key)
        hi, lo = _iota_2x32_shape(shape)
        y1, y2 = threefry2x32(k1, k2, hi, lo)
        if bit_width == 64:
            hi = lax.shift_left(lax.convert_element_type(y1, dtype), dtype.type(32))
            return lax.bitwise_or(hi, lax.convert_element_type(y2, dtype))
        bits = lax.bitwise_xor(y1, y2)
        return bits if bit_width == 32 else lax.convert_element_type(bits, dtype)
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    bits = threefry_2x32(key, lax.iota(np.uint32, max_count))
    if bit_width == 64:
        half = max_count // 2
        hi = lax.convert_element_type(lax.slice(bits, (0,), (half,)), dtype)
        lo = lax.convert_element_type(lax.slice(bits, (half,), (max_count,)), dtype)
        bits = lax.bitwise_or(lax.shift_left(hi, dtype.type(32)), lo)
    elif bit_width in (8, 16):
        # The little-endian view of the words as narrower integers.
        per_word = 32 // bit_width
        shifts = lax.mul(_U32(bit_width), lax.broadcasted_iota(np.uint32, (per_word, 1), 0))
        shifted = lax.shift_right_logical(lax.broadcast(bits, (1,)),
                                          lax._brcast_to(shifts, (per_word, max_count)))
        parts = lax.bitwise_and(_U32(np.iinfo(dtype).max), shifted)
        bits = lax.reshape(parts, (max_count * per_word,), (1, 0))
        bits = lax.slice(lax.convert_element_type(bits, dtype), (0,), (size,))
    return lax.reshape(bits, shape)


def _count_word_at(k1: Any, k2: Any, position: Any, count: int) -> Any:
    """``threefry_2x32(key, iota(count))[position]``: the one pair of the hash (first half
    against second half of the padded counts) that holds that word."""
    half = (count + 1) // 2
    first = lax.lt(position, _U32(half))
    x1 = lax.select(first, position, lax.sub(position, _U32(half)))
    x2 = lax.add(x1, _U32(half))
    if count % 2:  # the padding count is 0
        x2 = lax.select(lax.lt(x2, _U32(count)), x2, lax.full_like(x2, 0))
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    return lax.select(first, y1, y2)


def random_bits_at(k1: Any, k2: Any, positions: Any, size: int, bit_width: int,
                   partitionable: bool) -> Any:
    """``random_bits_data(key, bit_width, (size,))[positions]`` for 32- or 64-bit words,
    hashing only the counters those positions need (a loop that draws for a few pending
    lanes of a big shape). ``k1``, ``k2`` (the key's words) broadcast against the uint32
    ``positions``."""
    dtype = UINT_DTYPES[bit_width]
    if partitionable:
        y1, y2 = threefry2x32(k1, k2, lax.full_like(positions, 0), positions)
        if bit_width == 32:
            return lax.bitwise_xor(y1, y2)
        hi, lo = y1, y2
    elif bit_width == 32:
        return _count_word_at(k1, k2, positions, size)
    else:
        hi = _count_word_at(k1, k2, positions, 2 * size)
        lo = _count_word_at(k1, k2, lax.add(positions, _U32(size)), 2 * size)
    hi = lax.shift_left(lax.convert_element_type(hi, dtype), dtype.type(32))
    return lax.bitwise_or(hi, lax.convert_element_type(lo, dtype))


# ----------------------------------------------------------------------------- typed key arrays

class PRNGKeyArray:
    """An array of typed PRNG keys, dtype ``key<fry>`` (mirrors
    ``jax._src.random.prng.PRNGKeyArray``).

    ``_base_array`` holds the ``uint32[*shape, 2]`` key data (an Array or a tracer).
    """
    __slots__ = ('_base_array',)
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, base_array: Any):
        _check_prng_key_data(base_array)
        self._base_array = base_array

    @classmethod
    def _from_data(cls, base_array: Any) -> PRNGKeyArray:
        out = object.__new__(cls)
        out._base_array = base_array
        return out

    @property
    def dtype(self) -> KeyTy:
        return key_dtype_fry

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._base_array.shape[:-1])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def T(self) -> PRNGKeyArray:
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError('len() of unsized object')
        return self.shape[0]

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if not self.shape:
            raise TypeError('iteration over a 0-d key array')
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> PRNGKeyArray:
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            raise NotImplementedError("tinyxla key arrays take no Ellipsis index")
        if len(idx) > self.ndim:
            raise IndexError(f"Too many indices: {self.ndim}-dimensional array indexed with "
                             f"{len(idx)} regular indices.")
        return PRNGKeyArray._from_data(self._base_array[idx])

    def reshape(self, *shape: Any, order: str = 'C') -> PRNGKeyArray:
        new = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        new = tuple(new)
        if -1 in new:
            known = math.prod(d for d in new if d != -1)
            new = tuple(self.size // max(known, 1) if d == -1 else d for d in new)
        return PRNGKeyArray._from_data(self._base_array.reshape((*new, 2), order=order))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape((self.size,))

    flatten = ravel

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        perm = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        perm = tuple(perm) if perm else tuple(reversed(range(self.ndim)))
        return PRNGKeyArray._from_data(lax.transpose(self._base_array, (*perm, self.ndim)))

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        axes = tuple(i for i, d in enumerate(self.shape) if d == 1) if axis is None else \
            tuple(a % self.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
        return PRNGKeyArray._from_data(lax.squeeze(self._base_array, axes))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return lax.reduce_and(lax.eq(self._base_array, other._base_array), (self.ndim,))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return lax.reduce_or(lax.ne(self._base_array, other._base_array), (self.ndim,))

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array."
                        " Use jax.random.key_data(arr) if you wish to extract the underlying"
                        " integer array.")

    def __repr__(self) -> str:
        return f'Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}'

    def block_until_ready(self) -> PRNGKeyArray:
        self._base_array.block_until_ready()
        return self

    def copy(self) -> PRNGKeyArray:
        return PRNGKeyArray._from_data(self._base_array.copy())


register_pytree_node(PRNGKeyArray, lambda k: ((k._base_array,), None),
                     lambda _, children: PRNGKeyArray._from_data(children[0]))


def _check_prng_key_data(key_data: Any) -> None:
    impl = threefry_prng_impl
    if not all(hasattr(key_data, attr) for attr in ['ndim', 'shape', 'dtype']):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data "
                        f"to have ndim, shape, and dtype attributes. Got {key_data}")
    if key_data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected "
                        f"key_data.ndim >= 1; got ndim={key_data.ndim}")
    if tuple(key_data.shape[-1:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {impl.key_shape}; got shape={tuple(key_data.shape)} for {impl=}")
    if key_data.dtype != np.uint32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                        f"got dtype={key_data.dtype}")


def is_key_array(x: Any) -> bool:
    return isinstance(x, PRNGKeyArray)


def partitionable() -> bool:
    return bool(config.jax_threefry_partitionable)


def shape_tuple(num: int | Sequence[int]) -> tuple[int, ...]:
    return tuple(num) if isinstance(num, Sequence) else (num,)

