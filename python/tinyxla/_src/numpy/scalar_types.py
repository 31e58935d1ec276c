"""The jnp scalar types (``jnp.float32`` & co.): dtypes that construct 0-d or n-d Arrays.

Mirrors ``jax._src.numpy.scalar_types``: ``jnp.float32(3)`` returns
``Array(3., dtype=float32)`` (JAX has no scalar objects), while ``jnp.float32`` also works
wherever a dtype is expected: ``np.dtype(jnp.float32)``, ``x.astype(jnp.float32)``,
``jnp.float32 == np.float32``, ``isinstance(np.float32(1), jnp.float32)``.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.numpy.creation import asarray


class _ScalarMeta(type):
    """The metaclass of the scalar types; the class's ``dtype`` is what it stands for."""

    dtype: np.dtype

    @property
    def __numpy_dtype__(cls) -> np.dtype:
        # numpy >= 2.4 reads this in np.dtype(); older numpy uses the .dtype attribute.
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)


def _make_scalar_type(np_scalar_type: type) -> _ScalarMeta:
    name = np_scalar_type.__name__
    meta = _ScalarMeta(name, (object,), {"dtype": np.dtype(np_scalar_type)})
    meta.__module__ = "tinyxla.numpy"
    meta.__doc__ = (f"A JAX scalar constructor of type {name}.\n\nWhile NumPy defines scalar "
                    "types for each data type, JAX represents scalars as zero-dimensional "
                    "arrays.")
    return meta


bool_ = _make_scalar_type(np.bool_)
uint8 = _make_scalar_type(np.uint8)
uint16 = _make_scalar_type(np.uint16)
uint32 = _make_scalar_type(np.uint32)
uint64 = _make_scalar_type(np.uint64)
int8 = _make_scalar_type(np.int8)
int16 = _make_scalar_type(np.int16)
int32 = _make_scalar_type(np.int32)
int64 = _make_scalar_type(np.int64)
bfloat16 = _make_scalar_type(dtypes.bfloat16.type)
float16 = _make_scalar_type(np.float16)
float32 = single = _make_scalar_type(np.float32)
float64 = double = _make_scalar_type(np.float64)
complex64 = csingle = _make_scalar_type(np.complex64)
complex128 = cdouble = _make_scalar_type(np.complex128)

# The narrow ml_dtypes types JAX exposes. Arrays cannot hold them yet (the runtime has no
# such buffers): they serve as dtypes (np.dtype, finfo, iinfo, issubdtype).
float8_e3m4 = _make_scalar_type(ml_dtypes.float8_e3m4)
float8_e4m3 = _make_scalar_type(ml_dtypes.float8_e4m3)
float8_e4m3b11fnuz = _make_scalar_type(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _make_scalar_type(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz = _make_scalar_type(ml_dtypes.float8_e4m3fnuz)
float8_e5m2 = _make_scalar_type(ml_dtypes.float8_e5m2)
float8_e5m2fnuz = _make_scalar_type(ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _make_scalar_type(ml_dtypes.float8_e8m0fnu)
int2 = _make_scalar_type(ml_dtypes.int2)
int4 = _make_scalar_type(ml_dtypes.int4)
uint2 = _make_scalar_type(ml_dtypes.uint2)
uint4 = _make_scalar_type(ml_dtypes.uint4)

int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
