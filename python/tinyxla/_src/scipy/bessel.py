"""``jax.scipy.special``'s modified Bessel functions of the first kind of orders 0 and 1,
plain and exponentially scaled, over ``lax.bessel_i0e`` / ``lax.bessel_i1e``."""
from __future__ import annotations

from typing import Any

from tinyxla._src.lax import lax
from tinyxla._src.lax import special as lax_special
from tinyxla._src.numpy.promotion import promote_args_inexact


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
