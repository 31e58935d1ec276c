"""DLPack exchange: ``from_dlpack`` and ``Array.__dlpack__`` (``jax.dlpack``,
``jnp.from_dlpack``).

Mirrors ``jax._src.dlpack``. Imports borrow the producer's memory when it is dense and
naturally aligned (zero copy; tinyxla never writes it, and it stays alive while an array
uses it) and copy otherwise. Exports share the array's immutable buffer: a DLPack 1.0
capsule (what numpy >= 2 and torch ask for with ``max_version``) carries the read-only
flag, and the capsule keeps the buffer alive. With x64 off a 64-bit import is converted
to its 32-bit dtype, as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import _core
from tinyxla._src import dtypes
from tinyxla._src import devices as _devices
from tinyxla._src.array import _DTYPES, DLDeviceType, Array, _wrap
from tinyxla._src.lax import lax

DLPACK_VERSION = (1, 0)

SUPPORTED_DTYPES = frozenset({
    dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16,
    dtypes.uint32, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32,
    dtypes.float64, dtypes.complex64, dtypes.complex128, dtypes.bool_dtype})

def is_supported_dtype(dtype: Any) -> bool:
    """Mirrors ``jax.dlpack.is_supported_dtype``: whether DLPack can carry ``dtype``."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def _device_id(device: Any) -> int:
    if device is None:
        return 0
    if hasattr(device, "device_set"):
        ds = device.device_set
        if len(ds) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular "
                             f"device, but a Sharding with {len(ds)} devices was provided.")
        device, = ds
    return device.id


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """Mirrors ``jax.dlpack.from_dlpack`` / ``jnp.from_dlpack``: an Array sharing the
    producer's memory (or a copy: ``copy=True``, strided or misaligned data, or a 64-bit
    dtype with x64 off). A bare capsule is accepted, as older JAX did."""
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        if type(external_array).__name__ == "PyCapsule":
            capsule = external_array
        else:
            raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                            "__dlpack_device__ methods.")
    else:
        dl_device_type, _ = external_array.__dlpack_device__()
        if dl_device_type not in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
            raise TypeError("Array passed to from_dlpack is on unsupported device type "
                            f"(DLDeviceType: {dl_device_type}, array: {external_array}")
        try:
            capsule = external_array.__dlpack__(max_version=DLPACK_VERSION, copy=copy)
        except TypeError:  # a producer older than DLPack 1.0's keywords
            capsule = external_array.__dlpack__()
    dev = _device_id(device)
    _devices.devices()  # the runtime must be up before it holds arrays
    handle = _core.from_dlpack(capsule, copy, dev)
    dtype = _DTYPES[handle.dtype_code]
    out = _wrap(handle, False, dtype)
    canonical = dtypes.canonicalize_dtype(dtype)
    if canonical != dtype:
        out = lax.convert_element_type(out, canonical)
    if device is not None:
        out._committed = True
    return out



def jnp_from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """Mirrors ``jax.numpy.from_dlpack`` (the array API's signature of ``from_dlpack``)."""
    return from_dlpack(x, device=device, copy=copy)
