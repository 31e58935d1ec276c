"""The Python array API metadata: ``__array_api_version__``, ``__array_namespace__`` and
the inspection namespace ``__array_namespace_info__()``.

Mirrors ``jax._src.numpy.array_api_metadata``: the namespace is ``tinyxla.numpy``, the
standard's version is 2024.12, and the dtypes offered are the standard's ones that the
current x64 setting allows. ``default_device()`` is None (arrays are uncommitted until
``device_put``), and ``devices()`` lists None before the devices, as in JAX.
"""
from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np

from tinyxla._src import devices as _devices
from tinyxla._src import dtypes
from tinyxla._src.config import config

__array_api_version__ = "2024.12"

_ARRAY_API_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                     "uint64", "float32", "float64", "complex64", "complex128")
_X64_ONLY = frozenset({"int64", "uint64", "float64", "complex128"})
_KINDS = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric")


def __array_namespace__(self: Any = None, *, api_version: str | None = None) -> ModuleType:
    """The array API namespace of tinyxla arrays: ``tinyxla.numpy`` (what
    ``Array.__array_namespace__`` returns)."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"{api_version=!r} is not available; available versions are: "
                         f"{[__array_api_version__]}")
    # tinyxla.numpy imports this module, so it is looked up, not imported, here.
    return sys.modules["tinyxla.numpy"]


class ArrayNamespaceInfo:
    """The array API inspection namespace (``jax.numpy.__array_namespace_info__()``)."""

    _capabilities = {
        "boolean indexing": False,  # not within transformations
        "data-dependent shapes": False,  # not within transformations
        "max dimensions": 64,
    }

    def capabilities(self) -> dict[str, Any]:
        return self._capabilities

    def default_device(self) -> None:
        # Arrays are uncommitted (device None) until device_put commits them.
        return None

    def devices(self) -> list[Any]:
        return [None, *_devices.devices()]

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype(),
        }

    def _kind(self, kind: str) -> dict[str, np.dtype]:
        members = dtypes._DTYPE_KINDS[kind]
        return {name: np.dtype(name) for name in _ARRAY_API_DTYPES
                if np.dtype(name) in members
                and (config.jax_enable_x64 or name not in _X64_ONLY)}

    def dtypes(self, *, device: Any = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        if kind is None:
            return self._kind("bool") | self._kind("numeric")
        if isinstance(kind, tuple):
            out: dict[str, np.dtype] = {}
            for k in kind:
                out |= self._kind(k)
            return out
        return self._kind(kind)


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """Mirrors ``jax.numpy.__array_namespace_info__``."""
    return ArrayNamespaceInfo()
