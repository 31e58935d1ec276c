"""``jax.scipy.special``'s Box-Cox transformations ``boxcox`` and ``boxcox1p``."""
from __future__ import annotations

from typing import Any, Callable

from tinyxla._src.lax import lax
from tinyxla._src.numpy import selection
from tinyxla._src.numpy.promotion import promote_args_inexact


def _boxcox(name: str, log: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    def f(x: Any, lmbda: Any) -> Any:
        x, lmbda = promote_args_inexact(name, x, lmbda)
        lmbda_is_zero = lmbda == 0
        safe_lmbda = selection.where(lmbda_is_zero, lax.full_like(lmbda, 1), lmbda)
        log_x = log(x)
        return selection.where(lmbda_is_zero, log_x, lax.expm1(safe_lmbda * log_x) / safe_lmbda)
    f.__name__ = f.__qualname__ = name
    return f


boxcox = _boxcox("boxcox", lax.log)
boxcox.__doc__ = ("Mirrors ``jax.scipy.special.boxcox``: ``(x^λ - 1) / λ``, ``log x`` at "
                  "λ = 0 (through ``expm1``).")
boxcox1p = _boxcox("boxcox1p", lax.log1p)
boxcox1p.__doc__ = ("Mirrors ``jax.scipy.special.boxcox1p``: ``((1 + x)^λ - 1) / λ``, "
                    "``log1p x`` at λ = 0.")
