"""Batched matrix expressions in lax (so that they trace under every transform), shared by
the ``lax.linalg`` primitives' rules: products, (conjugate) transposes, identities,
triangles and diagonals of ``[..., m, n]`` operands, and the dtype relations of the
decompositions."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.array import _CODE, _DTYPES
from tinyxla._src.lax.lax import (
    broadcasted_iota, conj, convert_element_type, dot_general, eq, ge, le, mul, reduce_sum,
    select, sub, transpose, full_like)


def canonical_dtype(dtype: Any) -> np.dtype:
    """The dtype object Arrays carry for ``dtype``."""
    return _DTYPES[_CODE[np.dtype(dtype)]]


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """float32 and complex64 (and the half types) -> complex64; the 64-bit ones ->
    complex128."""
    wide = np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128))
    return canonical_dtype(np.complex128 if wide else np.complex64)


def real_dtype(dtype: np.dtype) -> np.dtype:
    return canonical_dtype(np.finfo(np.dtype(dtype)).dtype)


def is_complex(x: Any) -> bool:
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def check_rank(name: str, x: Any) -> None:
    if len(x.shape) < 2:
        raise TypeError(f"Input 0 to {name} must have rank at least 2, but got "
                        f"shape={tuple(x.shape)}")


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` over the leading batch dims (equal in both)."""
    nd = len(a.shape)
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def mT(x: Any) -> Any:
    nd = len(x.shape)
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def H(x: Any) -> Any:
    """The conjugate transpose of the last two dims."""
    x = mT(x)
    return conj(x) if is_complex(x) else x


def _index_grids(shape: tuple[int, ...]) -> tuple[Any, Any]:
    nd = len(shape)
    return (broadcasted_iota(np.int32, shape, nd - 2), broadcasted_iota(np.int32, shape, nd - 1))


def eye_like(x: Any) -> Any:
    """Ones where row == column of x's trailing [m, n], broadcast over its batch dims."""
    rows, cols = _index_grids(tuple(x.shape))
    return convert_element_type(eq(rows, cols), x.dtype)


def diagonal(x: Any) -> Any:
    """The diagonal of each trailing [n, n] matrix (linear in x)."""
    return reduce_sum(mul(x, eye_like(x)), (len(x.shape) - 1,))


def _column_minus_row(x: Any) -> Any:
    rows, cols = _index_grids(tuple(x.shape))
    return sub(cols, rows)


def tril(x: Any, k: int = 0) -> Any:
    """x with the entries above its k-th diagonal zeroed."""
    offset = _column_minus_row(x)
    return select(le(offset, full_like(offset, k)), x, full_like(x, 0))


def triu(x: Any, k: int = 0) -> Any:
    """x with the entries below its k-th diagonal zeroed."""
    offset = _column_minus_row(x)
    return select(ge(offset, full_like(offset, k)), x, full_like(x, 0))


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2``, as ``jax._src.lax.linalg.symmetrize``."""
    return (x + H(x)) / 2


def const_like(x: Any, value: float) -> Any:
    return convert_element_type(np.asarray(value, np.float32), x.dtype)
