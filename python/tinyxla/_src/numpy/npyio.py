"""Saving and loading arrays: ``save``/``savez`` are numpy's, ``load`` returns Arrays.

Mirrors ``jax.numpy.save`` (numpy's, which reads an Array through ``__array__``) and
``jax.numpy.load``: a ``.npy`` file comes back as an Array, with bfloat16 restored from the
``V2`` void dtype numpy writes for it; ``.npz`` archives stay numpy's lazy mapping.
"""
from __future__ import annotations

import os
from typing import IO, Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.numpy.creation import asarray

save = np.save
savez = np.savez


def load(file: IO[bytes] | str | os.PathLike[Any], *args: Any, **kwargs: Any) -> Any:
    """Mirrors ``jax.numpy.load``: ``numpy.load``, with ``.npy`` contents as an Array."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(dtypes.bfloat16)
        try:
            out = asarray(out)
        except (TypeError, AssertionError):  # a dtype JAX arrays cannot hold
            pass
    return out
