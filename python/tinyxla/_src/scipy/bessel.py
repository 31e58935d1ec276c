"""``jax.scipy.special``'s Bessel functions: the modified ones of the first kind of orders 0
and 1, plain and exponentially scaled (over ``lax.bessel_i0e`` / ``lax.bessel_i1e``), and
``bessel_jn``, J_0 .. J_v."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp
from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy.promotion import promote_args_inexact, promote_dtypes_inexact
from tinyxla._src.scipy.gamma_functions import _concrete_int


def i0e(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.i0e``: ``e^-|x| I0(x)``."""
    x, = promote_args_inexact("i0e", x)
    return lax_special.bessel_i0e(x)


def i0(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.i0``: ``I0(x) = e^|x| i0e(x)``."""
    x, = promote_args_inexact("i0", x)
    return lax.exp(lax.abs(x)) * lax_special.bessel_i0e(x)


def i1e(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.i1e``: ``e^-|x| I1(x)``."""
    x, = promote_args_inexact("i1e", x)
    return lax_special.bessel_i1e(x)


def i1(x: Any) -> Any:
    """Mirrors ``jax.scipy.special.i1``: ``I1(x) = e^|x| i1e(x)``."""
    x, = promote_args_inexact("i1", x)
    return lax.exp(lax.abs(x)) * lax_special.bessel_i1e(x)


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """Mirrors ``jax.scipy.special.bessel_jn``: J_0(z) .. J_v(z), stacked on a new leading
    axis, by Miller's backward recurrence from order ``n_iter`` normalized by
    J_0 + 2 sum_k J_2k = 1 (accurate for |z| well below ``n_iter``). Differs from JAX in
    rescaling the recurrence, so float32 does not overflow to NaN for small |z| (JAX
    gives NaN at z = 0 and 1), and at z = 0 it gives [1, 0, ...] as scipy."""
    z = jnp.asarray(z)
    z, = promote_dtypes_inexact(z)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("complex input not supported.")
    v = _concrete_int(v, "Argument v of bessel_jn.")
    n_iter = _concrete_int(n_iter, "Argument n_iter of bessel_jn.")
    at_zero = z == 0
    safe_z = jnp.where(at_zero, 1., z)
    big = 1e10
    f0, f1 = jnp.zeros_like(z), jnp.full_like(z, 1e-16)
    bs = jnp.zeros_like(z)
    kept: list[Any] = []  # f_k for k <= v, in descending k
    for k in range(n_iter, -1, -1):
        f = 2. * (k + 1.) * f1 / safe_z - f0
        if k % 2 == 0:
            bs = bs + 2. * f
        if k <= v:
            kept.append(f)
        f0, f1 = f1, f
        # Keep the unnormalized values in range; the ratio below is unchanged.
        scale = jnp.where(jnp.abs(f1) > big, 1. / big, 1.)
        f0, f1, bs = f0 * scale, f1 * scale, bs * scale
        kept = [x * scale for x in kept]
    j_vals = jnp.stack(kept[::-1]) / (bs - kept[-1])
    first = (jnp.arange(v + 1) == 0).reshape((v + 1,) + (1,) * z.ndim)
    return jnp.where(at_zero, jnp.where(first, 1., 0.).astype(j_vals.dtype), j_vals)
