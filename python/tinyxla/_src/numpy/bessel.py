"""i0, the modified Bessel function of the first kind of order zero.

Mirrors ``jax.numpy.i0`` (``exp(|x|) * bessel_i0e(|x|)``) with XLA's evaluation of
i0e: Cephes' Chebyshev series on [0, 8] and on (8, inf), the float32 tables (the short
tails of the float64 ones) for float32 and narrower (computed in float32), the full ones
for float64.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.autodiff import jvp
from tinyxla._src.custom_derivatives import custom_jvp
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import promote_args_inexact

ArrayLike = Any

# Chebyshev coefficients of exp(-x) I0(x) on [0, 8] and of exp(-x) sqrt(x) I0(x) on
# (8, inf) (Cephes i0.c).
_I0E_A = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)
# Cephes' float32 series are the last terms of these.
_F32_TERMS_A, _F32_TERMS_B = 18, 7


def _chebyshev(x: Any, coeffs: Sequence[float]) -> Any:
    """Clenshaw's recurrence for sum c_i T_i(x/2) (Cephes' ``chbevl``)."""
    b0 = lax.full_like(x, coeffs[0])
    b1 = lax.full_like(x, 0)
    b2 = b1
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = lax.add(lax.sub(lax.mul(x, b1), b2), lax.full_like(x, c))
    return lax.mul(lax.full_like(x, 0.5), lax.sub(b0, b2))


def _i0e(z: Any) -> Any:
    """exp(-z) I0(z) for z >= 0."""
    if z.dtype == np.float64:
        a, b = _I0E_A, _I0E_B
    else:
        a, b = _I0E_A[-_F32_TERMS_A:], _I0E_B[-_F32_TERMS_B:]
    small = _chebyshev(lax.sub(lax.mul(lax.full_like(z, 0.5), z), lax.full_like(z, 2)), a)
    # The large-z branch is evaluated at z >= 8 only, so it never divides by zero.
    zl = lax.max(z, lax.full_like(z, 8))
    large = lax.div(_chebyshev(lax.sub(lax.div(lax.full_like(z, 32), zl), lax.full_like(z, 2)), b),
                    lax.sqrt(zl))
    return lax.select(lax.le(z, lax.full_like(z, 8)), small, large)


def i0(x: ArrayLike) -> Any:
    """Mirrors ``jax.numpy.i0``: real floating inputs only (complex raises ValueError)."""
    x_arr, = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x_arr.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x_arr.dtype}")
    return _i0(x_arr)


def _i0_impl(x: Any) -> Any:
    z = lax.abs(x)
    # i0e is computed in float32 for the narrower floats, as XLA does; exp and the
    # product in x's dtype.
    e = _i0e(z if z.dtype == np.float64 else lax.convert_element_type(z, np.float32))
    return lax.mul(lax.exp(z), lax._convert_element_type(e, z.dtype, z.weak_type))


@custom_jvp
def _i0(x: Any) -> Any:
    return _i0_impl(x)


@_i0.defjvp
def _i0_jvp(primals: Any, tangents: Any) -> tuple[Any, Any]:
    # As JAX: the derivative at 0 is exactly 0 (|x| has none there).
    x, = primals
    out, t_out = jvp(_i0_impl, primals, tangents)
    return out, lax.select(lax.eq(x, lax.full_like(x, 0)), lax.full_like(t_out, 0), t_out)
