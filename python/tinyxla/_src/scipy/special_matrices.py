"""``jax.scipy.linalg``'s structured matrix constructors ``block_diag`` and ``toeplitz``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src.api import jit
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import check_arraylike, promote_dtypes
from tinyxla._src.numpy.vectorize import vectorize


@jit
def block_diag(*arrs: Any) -> Any:
    """Mirrors ``jax.scipy.linalg.block_diag``: the arrays (at most 2-d) on the diagonal
    of one matrix, zeros elsewhere."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*arrs))
    bad = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
    if bad:
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                         f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
    blocks = [jnp.atleast_2d(a) for a in arrs]
    total_cols = sum(a.shape[1] for a in blocks)
    padded, col = [], 0
    for a in blocks:
        cols = a.shape[1]
        padded.append(lax.pad(a, jnp.zeros((), a.dtype),
                              ((0, 0, 0), (col, total_cols - cols - col, 0))))
        col += cols
    return jnp.concatenate(padded, axis=0)


def _toeplitz(c: Any, r: Any) -> Any:
    m, n = c.shape[0], r.shape[0]
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=jnp.promote_types(c.dtype, r.dtype))
    # Entry (i, j) is elems[m - 1 - i + j] of c reversed followed by r[1:].
    elems = jnp.concatenate((c[::-1], r[1:]))
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return elems[idx]


def toeplitz(c: Any, r: Any = None) -> Any:
    """Mirrors ``jax.scipy.linalg.toeplitz``: first column ``c`` and first row ``r``
    (default ``conj(c)``), batched over leading dims of both."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return vectorize(_toeplitz, signature="(m),(n)->(m,n)")(
        jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))
