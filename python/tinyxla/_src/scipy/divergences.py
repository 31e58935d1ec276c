"""``jax.scipy.special``'s elementwise divergences: ``rel_entr`` and ``kl_div``."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy import selection
from tinyxla._src.numpy.promotion import promote_args_inexact
from tinyxla._src.scipy.special import _xlogx, xlogy


def rel_entr(p: Any, q: Any) -> Any:
    """Mirrors ``jax.scipy.special.rel_entr``: ``p log(p / q)`` for p, q > 0, 0 at p = 0
    and q >= 0, inf elsewhere."""
    p, q = promote_args_inexact("rel_entr", p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    both_gt_zero = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p = selection.where(both_gt_zero, p, lax.full_like(p, 1))
    safe_q = selection.where(both_gt_zero, q, lax.full_like(q, 1))
    log_val = _xlogx(safe_p) - xlogy(safe_p, safe_q)
    return selection.where(both_gt_zero, log_val, selection.where(
        one_zero, lax.full_like(log_val, 0), lax.full_like(log_val, np.inf)))


def kl_div(p: Any, q: Any) -> Any:
    """Mirrors ``jax.scipy.special.kl_div``: ``rel_entr(p, q) - p + q``."""
    p, q = promote_args_inexact("kl_div", p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q
