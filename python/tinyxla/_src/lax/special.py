"""The special-function primitives: ``igamma``, ``igammac``, ``igamma_grad_a``,
``random_gamma_grad``, ``polygamma``, ``zeta``, ``bessel_i0e``, ``bessel_i1e`` and
``regularized_incomplete_beta`` (``lgamma``, ``digamma`` and ``erf_inv`` are C++ unary
ops in ``lax.py``).

Mirrors ``jax._src.lax.special``. As in JAX, each primitive is defined by a composition
of other lax ops: its eager impl runs that composition compiled (once per shape and
dtype) and its lowering inlines it, so it fuses with its neighbours under ``jit``. JAX
iterates its series and continued fractions in ``while_loop``s until they converge; here
(there is no ``while_loop`` yet) they run a fixed number of steps, chosen so that they
converge over the arguments where the series converge in that many terms: for
``igamma`` ``a`` up to about 300 (``x`` near ``a``; anywhere else further), for
``regularized_incomplete_beta`` ``a + b`` up to a few thousand. float16 and bfloat16
are computed in float32, as in JAX.
"""
from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.lowering import executable_for, register_lowering
from tinyxla._src.interpreters.partial_eval import trace_to_jaxpr
from tinyxla._src.lax.conversion import _const, convert_element_type
from tinyxla._src.lax.eager import _operand
from tinyxla._src.lax.elementwise import (
    _brcast_to, _naryop_abstract_eval, abs, bitwise_and, bitwise_not, bitwise_or, digamma,
    eq, exp, floor, ge, gt, le, lgamma, log, log1p, lt, ne, select, sign, sqrt)
from tinyxla._src.lax.elementwise import erf_inv, erf_inv_p, digamma_p, lgamma_p  # noqa: F401
from tinyxla._src.lax.shape_ops import full_like
from tinyxla._src.lax.type_rules import _FLOAT, _dtype


# ----------------------------------------------------------------------------------------
# Primitives defined by a composition of lax ops (JAX's standard_naryop + lower_fun).

def _composite(name: str, nargs: int, compute: Callable[..., Any]) -> Primitive:
    """An elementwise primitive over floating operands of one dtype (0-d operands and
    size-1 axes broadcast, as for lax's binary ops) whose value is ``compute`` of its
    broadcast operands, upcast to float32 when narrower."""
    prim = Primitive(name)
    abstract_eval = _naryop_abstract_eval(name, (_FLOAT,) * nargs)
    prim.def_abstract_eval(abstract_eval)

    def composition(*xs: Any) -> list[Any]:
        out = abstract_eval(*(ShapedArray(_shape_of(x), _dtype(x), False) for x in xs))
        xs = [_brcast_to(x, out.shape) for x in xs]
        dtype = out.dtype
        if dtype.itemsize < 4:
            xs = [convert_element_type(x, np.float32) for x in xs]
            return [convert_element_type(compute(*xs), dtype)]
        return [compute(*xs)]

    @functools.lru_cache(maxsize=None)
    def jaxpr(avals: tuple[ShapedArray, ...]) -> Any:
        abstract_eval(*avals)  # JAX's dtype and shape errors
        return trace_to_jaxpr(composition, avals)

    def impl(*args: Any) -> Array:
        arrays = [a if type(a) is Array else _operand(prim, i, a) for i, a in enumerate(args)]
        closed = jaxpr(tuple(a.aval for a in arrays))
        return executable_for(closed, name)(arrays)[0]

    def jvp_through_composition(primals: Any, tangents: Any) -> tuple[Any, Any]:
        """The derivative of the composition itself: for the primitives whose derivative
        JAX does not define (zeta in x, igamma_grad_a, random_gamma_grad); rules set after
        ``_composite`` replace it. It runs op by op (compiling the derivative of an
        unrolled series takes longer than running it once)."""
        outs, out_tangents = ad.jvp_flat(composition, primals,
                                         [ad.instantiate_zeros(t) for t in tangents])
        return outs[0], out_tangents[0]

    prim.def_impl(impl)
    ad.primitive_jvps[prim] = jvp_through_composition
    register_lowering(prim, lambda ctx, *xs: lowering.inline_jaxpr(
        ctx.builder, jaxpr(tuple(ctx.avals_in)), xs)[0])
    batching.defbroadcasting(prim)
    return prim


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _eps(x: Any) -> float:
    return float(np.finfo(_dtype(x)).eps)


def _is_f64(x: Any) -> bool:
    return _dtype(x) == np.float64


def _nan_where(pred: Any, x: Any) -> Any:
    return select(pred, full_like(x, np.nan), x)


def _isnan(x: Any) -> Any:
    return ne(x, x)


def _any(*preds: Any) -> Any:
    return functools.reduce(bitwise_or, preds)


# ----------------------------------------------------------------------------------------
# The regularized incomplete gamma functions (JAX's igamma_impl and friends).

_VALUE, _DERIVATIVE, _SAMPLE_DERIVATIVE = "value", "derivative", "sample_derivative"


def _igamma_steps(x: Any) -> int:
    return 200 if _is_f64(x) else 100


def _igamma_series(ax: Any, x: Any, a: Any, mode: str) -> Any:
    """P(a, x) by its power series (converges fast where x < a + 1), or its derivative
    in ``a`` (``_DERIVATIVE``) or the sample derivative dx/da of Gamma(a) samples."""
    r, c, ans = a, full_like(a, 1), full_like(a, 1)
    dc_da = dans_da = full_like(a, 0)
    for _ in range(_igamma_steps(x)):
        r = r + 1.
        if mode != _VALUE:
            dc_da = dc_da * (x / r) - (c * x) / (r * r)
            dans_da = dans_da + dc_da
        c = c * (x / r)
        ans = ans + c
    if mode == _VALUE:
        return (ans * ax) / a
    dlogax_da = log(x) - digamma(a + 1.)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da) / a
    return -(dans_da + ans * dlogax_da) * x / a


def _igammac_continued_fraction(ax: Any, x: Any, a: Any, mode: str) -> Any:
    """Q(a, x) by Legendre's continued fraction (converges fast where x > a + 1), or the
    derivatives of ``_igamma_series``' modes (with Q's sign)."""
    eps = _eps(x)
    y = 1. - a
    z = x + y + 1.
    c = full_like(x, 0)
    pkm2, qkm2 = full_like(x, 1), x
    pkm1, qkm1 = x + 1., z * x
    ans = pkm1 / qkm1
    dpkm2_da = dqkm2_da = dpkm1_da = full_like(x, 0)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    derivative = mode != _VALUE
    for _ in range(_igamma_steps(x)):
        c = c + 1.
        y = y + 1.
        z = z + 2.
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        qk_is_nonzero = ne(qk, _const(qk, 0))
        ans = select(qk_is_nonzero, pk / qk, ans)
        if derivative:
            dpk_da = dpkm1_da * z - pkm1 - dpkm2_da * yc + pkm2 * c
            dqk_da = dqkm1_da * z - qkm1 - dqkm2_da * yc + qkm2 * c
            dans_da = select(qk_is_nonzero, (dpk_da - ans * dqk_da) / qk, dans_da)
            dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = dpkm1_da, dqkm1_da, dpk_da, dqk_da
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        rescale = gt(abs(pk), _const(pk, 1 / eps))
        pkm2, pkm1, qkm2, qkm1 = (select(rescale, v * eps, v) for v in (pkm2, pkm1, qkm2, qkm1))
        if derivative:
            dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da = (
                select(rescale, v * eps, v) for v in (dpkm2_da, dqkm2_da, dpkm1_da, dqkm1_da))
    if mode == _VALUE:
        return ans * ax
    dlogax_da = log(x) - digamma(a)
    if mode == _DERIVATIVE:
        return ax * (ans * dlogax_da + dans_da)
    return -(dans_da + ans * dlogax_da) * x


def _log_ax(a: Any, x: Any) -> tuple[Any, Any]:
    """``x^a e^-x / Γ(a)`` and whether it underflows (then the result is its limit)."""
    log_ax = a * log(x) - x - lgamma(a)
    underflow = lt(log_ax, _const(log_ax, -np.log(np.finfo(_dtype(a)).max)))
    return exp(log_ax), underflow


def _igamma(a: Any, x: Any) -> Any:
    x_is_infinity = eq(x, _const(x, np.inf))
    a_is_zero, x_is_zero = eq(a, _const(a, 0)), eq(x, _const(x, 0))
    domain_error = _any(lt(x, _const(x, 0)), lt(a, _const(a, 0)),
                        bitwise_and(a_is_zero, x_is_zero), _isnan(a), _isnan(x))
    use_igammac = bitwise_and(ge(x, _const(x, 1)), gt(x, a))
    ax, underflow = _log_ax(a, x)
    # Where the other branch applies its inputs are replaced by ones it handles, so no
    # NaN or overflow of an unused branch reaches the derivative.
    out = select(use_igammac, 1. - _igammac_continued_fraction(ax, x, a, _VALUE),
                 _igamma_series(ax, x, a, _VALUE))
    out = select(underflow, select(gt(x, a), full_like(a, 1), full_like(a, 0)), out)
    out = select(x_is_zero, full_like(a, 0), out)
    out = select(x_is_infinity, full_like(a, 1), out)
    return _nan_where(domain_error, out)


def _igammac(a: Any, x: Any) -> Any:
    a_is_zero, x_is_zero = eq(a, _const(a, 0)), eq(x, _const(x, 0))
    x_is_infinity = eq(x, _const(x, np.inf))
    domain_error = _any(lt(x, _const(x, 0)), lt(a, _const(a, 0)),
                        bitwise_and(a_is_zero, x_is_zero), _isnan(a), _isnan(x))
    use_igamma = bitwise_or(lt(x, _const(x, 1)), lt(x, a))
    ax, underflow = _log_ax(a, x)
    out = select(use_igamma, 1. - _igamma_series(ax, x, a, _VALUE),
                 _igammac_continued_fraction(ax, x, a, _VALUE))
    out = select(underflow, select(gt(x, a), full_like(a, 0), full_like(a, 1)), out)
    out = select(x_is_zero, full_like(a, 1), out)
    out = select(bitwise_or(x_is_infinity, a_is_zero), full_like(a, 0), out)
    return _nan_where(domain_error, out)


def _igamma_derivative(mode: str) -> Callable[[Any, Any], Any]:
    def compute(a: Any, x: Any) -> Any:
        x_is_zero = eq(x, _const(x, 0))
        domain_error = bitwise_or(lt(x, _const(x, 0)), le(a, _const(a, 0)))
        use_igammac = bitwise_and(gt(x, _const(x, 1)), gt(x, a))
        ax, underflow = _log_ax(a, x)
        out = select(use_igammac, -_igammac_continued_fraction(ax, x, a, mode),
                     _igamma_series(ax, x, a, mode))
        out = select(bitwise_or(x_is_zero, underflow), full_like(out, 0), out)
        return _nan_where(_any(domain_error, _isnan(a), _isnan(x)), out)
    return compute


igamma_p = _composite("igamma", 2, _igamma)
igammac_p = _composite("igammac", 2, _igammac)
igamma_grad_a_p = _composite("igamma_grad_a", 2, _igamma_derivative(_DERIVATIVE))
random_gamma_grad_p = _composite("random_gamma_grad", 2, _igamma_derivative(_SAMPLE_DERIVATIVE))


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (``jax.lax.igamma``)."""
    return igamma_p.bind(a, x)


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) (``jax.lax.igammac``)."""
    return igammac_p.bind(a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da (``jax.lax.igamma_grad_a``)."""
    return igamma_grad_a_p.bind(a, x)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative of a Gamma(a, 1) sample ``x`` in ``a`` at fixed P(a, x): -(dP/da) /
    (dP/dx) (``jax.lax.random_gamma_grad``; JAX's is a composition, not a primitive)."""
    return random_gamma_grad_p.bind(a, x)


def _igamma_gradx(g: Any, a: Any, x: Any) -> Any:
    return g * exp(-x + (a - 1.) * log(x) - lgamma(a))


ad.defjvp(igamma_p, lambda g, a, x: g * igamma_grad_a(a, x), _igamma_gradx)
ad.defjvp(igammac_p, lambda g, a, x: -(g * igamma_grad_a(a, x)),
          lambda g, a, x: -_igamma_gradx(g, a, x))


# ----------------------------------------------------------------------------------------
# The regularized incomplete beta function I_x(a, b) (JAX's
# regularized_incomplete_beta_impl): the continued fraction DLMF 8.17.22, evaluated by the
# modified Lentz method, on the side of x where it converges fast.

def _betainc_steps(x: Any) -> int:
    return 300 if _is_f64(x) else 200


def _betainc_numerator(n: int, a: Any, b: Any, x: Any) -> Any:
    """The n-th partial numerator d_n of DLMF 8.17.23 (d_1 = 1)."""
    if n == 1:
        return full_like(x, 1)
    m = (n - 1) // 2
    if n % 2 == 0:
        if m == 0:  # avoids inaccuracy for a near 0 under flush-to-zero, as in JAX
            return -(a + b) * x / (a + 1.)
        return -(a + m) * (a + b + m) * x / ((a + 2. * m) * (a + 2. * m + 1.))
    return m * (b - m) * x / ((a + 2. * m - 1.) * (a + 2. * m))


def _betainc(a: Any, b: Any, x: Any) -> Any:
    a_is_zero = bitwise_or(eq(a, _const(a, 0)), eq(b, _const(b, np.inf)))
    b_is_zero = bitwise_or(eq(b, _const(b, 0)), eq(a, _const(a, np.inf)))
    x_is_zero, x_is_one = eq(x, _const(x, 0)), eq(x, _const(x, 1))
    result_is_zero = bitwise_or(bitwise_and(b_is_zero, bitwise_not(x_is_one)),
                                bitwise_and(a_is_zero, x_is_zero))
    result_is_one = bitwise_or(bitwise_and(a_is_zero, bitwise_not(x_is_zero)),
                               bitwise_and(b_is_zero, x_is_one))
    result_is_nan = _any(lt(a, _const(a, 0)), lt(b, _const(b, 0)), lt(x, _const(x, 0)),
                         gt(x, _const(x, 1)), bitwise_and(a_is_zero, b_is_zero),
                         _isnan(a), _isnan(b), _isnan(x))
    # The fraction converges fast for x < (a + 1) / (a + b + 2); elsewhere
    # I_x(a, b) = 1 - I_{1-x}(b, a) (DLMF 8.17.4).
    converges_rapidly = lt(x, (a + 1.) / (a + b + 2.))
    a, b = select(converges_rapidly, a, b), select(converges_rapidly, b, a)
    x = select(converges_rapidly, x, 1. - x)

    tiny = _eps(x) / 2
    small = full_like(x, tiny)
    h = c = small
    d = full_like(x, 0)
    for n in range(1, _betainc_steps(x) + 1):
        num = _betainc_numerator(n, a, b, x)
        c = 1. + num / c
        c = select(lt(abs(c), small), small, c)
        d = 1. + num * d
        d = 1. / select(lt(abs(d), small), small, d)
        h = h * (c * d)

    very_small = float(np.finfo(_dtype(a)).tiny * 2)
    lbeta_small_a = lgamma(b) - lgamma(a + b)
    lbeta = lgamma(a) + lbeta_small_a
    factor = select(lt(a, _const(a, very_small)), exp(log1p(-x) * b - lbeta_small_a),
                    exp(log(x) * a + log1p(-x) * b - lbeta) / a)
    out = h * factor
    out = select(converges_rapidly, out, 1. - out)
    out = select(result_is_zero, full_like(out, 0), out)
    out = select(result_is_one, full_like(out, 1), out)
    return _nan_where(result_is_nan, out)


regularized_incomplete_beta_p = _composite("regularized_incomplete_beta", 3, _betainc)


def _betainc_grad_not_implemented(g: Any, a: Any, b: Any, x: Any) -> Any:
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_gradx(g: Any, a: Any, b: Any, x: Any) -> Any:
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    return g * exp((b - 1.) * log1p(-x) + (a - 1.) * log(x) - lbeta)


ad.defjvp(regularized_incomplete_beta_p, _betainc_grad_not_implemented,
          _betainc_grad_not_implemented, _betainc_gradx)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (``jax.lax.betainc``)."""
    return regularized_incomplete_beta_p.bind(a, b, x)


# ----------------------------------------------------------------------------------------
# The Hurwitz zeta function and polygamma (XLA's chlo.zeta / chlo.polygamma): the sum of
# the first N terms plus the Euler-Maclaurin tail with M Bernoulli terms.

def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2) by the recurrence sum_k C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        acc = Fraction(0)
        binom = 1
        for k in range(m):
            acc += binom * b[k]
            binom = binom * (m + 1 - k) // (k + 1)
        b.append(-acc / (m + 1))
    return b


_BERNOULLI = _bernoulli_numbers(64)
# B_2j / (2j)!, j = 1, 2, ...: the Euler-Maclaurin coefficients.
_EM_COEFFS = [float(_BERNOULLI[2 * j] / np.prod([Fraction(i) for i in range(1, 2 * j + 1)]))
              for j in range(1, 20)]


def _zeta(x: Any, q: Any) -> Any:
    n_terms = 16 if _is_f64(x) else 8
    total = full_like(q, 0)
    for k in range(n_terms):
        total = total + (q + float(k)) ** -x
    w = q + float(n_terms)
    w_pow = w ** -x
    total = total + w * w_pow / (x - 1.) + 0.5 * w_pow
    # sum_j B_2j/(2j)! x (x+1) ... (x+2j-2) w^(-x-2j+1)
    rising = x
    term_pow = w_pow / w
    inv_w2 = 1. / (w * w)
    for j, coeff in enumerate(_EM_COEFFS[:n_terms]):
        if j:
            rising = rising * (x + float(2 * j - 1)) * (x + float(2 * j))
            term_pow = term_pow * inv_w2
        total = total + coeff * rising * term_pow
    x_is_one = eq(x, _const(x, 1))
    q_nonpositive = le(q, _const(q, 0))
    q_is_int = eq(q, floor(q))
    x_is_int = eq(x, floor(x))
    out = select(x_is_one, full_like(x, np.inf), total)
    out = select(bitwise_and(q_nonpositive, q_is_int), full_like(x, np.inf), out)
    domain_error = _any(lt(x, _const(x, 1)),
                        bitwise_and(q_nonpositive, bitwise_and(bitwise_not(q_is_int),
                                                               bitwise_not(x_is_int))))
    return _nan_where(domain_error, out)


zeta_p = _composite("zeta", 2, _zeta)


def _polygamma(m: Any, x: Any) -> Any:
    # psi^(m)(x) = (-1)^(m+1) m! zeta(m+1, x) for m >= 1; digamma for m = 0.
    m_plus_1 = m + 1.
    sign_ = select(eq(m - 2. * floor(m / 2.), _const(m, 0)), full_like(m, -1), full_like(m, 1))
    out = sign_ * exp(lgamma(m_plus_1)) * _zeta(m_plus_1, x)
    out = select(eq(m, _const(m, 0)), digamma(x), out)
    return _nan_where(bitwise_or(ne(m, floor(m)), lt(m, _const(m, 0))), out)


polygamma_p = _composite("polygamma", 2, _polygamma)


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_n (n + q)^-x (``jax.lax.zeta``)."""
    return zeta_p.bind(x, q)


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of digamma (``jax.lax.polygamma``)."""
    return polygamma_p.bind(m, x)


def _polygamma_gradm(g: Any, m: Any, x: Any) -> Any:
    raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp(polygamma_p, _polygamma_gradm, lambda g, m, x: g * polygamma(m + 1., x))
# zeta_p and igamma_grad_a_p differentiate through their compositions (JAX has no rule
# for them; jax.scipy.special.zeta differentiates through a series of its own).


# ----------------------------------------------------------------------------------------
# Exponentially scaled modified Bessel functions of orders 0 and 1: the power series
# below a threshold, Hankel's asymptotic expansion above it (JAX uses Cephes' Chebyshev
# fits to the same functions).

def _bessel_ie(nu: int, x: Any) -> Any:
    f64 = _is_f64(x)
    split, n_series, n_asymptotic = (30., 48, 16) if f64 else (15., 28, 10)
    ax = abs(x)
    # Power series sum_k (x/2)^(2k+nu) / (k! (k+nu)!), at |x| <= split.
    xs = select(le(ax, _const(ax, split)), ax, full_like(ax, split))
    half_sq = (xs * xs) * 0.25
    term = (xs * 0.5) if nu else full_like(xs, 1)
    total = term
    for k in range(1, n_series):
        term = term * half_sq / float(k * (k + nu))
        total = total + term
    series = total * exp(-xs)
    # e^-x I_nu(x) ~ (2 pi x)^-1/2 sum_k (-1)^k a_k(nu) / x^k, at |x| > split.
    xl = select(le(ax, _const(ax, split)), full_like(ax, split), ax)  # NaN stays here
    inv = 1. / xl
    term = full_like(xl, 1)
    total = term
    for k in range(1, n_asymptotic):
        term = term * inv * (-(4. * nu * nu - (2. * k - 1.) ** 2) / (8. * k))
        total = total + term
    asymptotic = total / sqrt(xl * (2 * np.pi))
    out = select(le(ax, _const(ax, split)), series, asymptotic)
    return sign(x) * out if nu else out


def _bessel_i0e(x: Any) -> Any:
    return _bessel_ie(0, x)


def _bessel_i1e(x: Any) -> Any:
    return _bessel_ie(1, x)


bessel_i0e_p = _composite("bessel_i0e", 1, _bessel_i0e)
bessel_i1e_p = _composite("bessel_i1e", 1, _bessel_i1e)


def bessel_i0e(x: Any) -> Any:
    """``e^-|x| I0(x)`` (``jax.lax.bessel_i0e``)."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Any) -> Any:
    """``e^-|x| I1(x)`` (``jax.lax.bessel_i1e``)."""
    return bessel_i1e_p.bind(x)


def _bessel_i1e_jvp(g: Any, y: Any, x: Any) -> Any:
    eps = _eps(x)
    x_is_not_tiny = gt(abs(x), _const(x, eps))
    safe_x = select(x_is_not_tiny, x, full_like(x, eps))
    dy_dx = bessel_i0e(safe_x) - y * (sign(safe_x) + 1. / safe_x)
    return g * select(x_is_not_tiny, dy_dx, full_like(x, 0.5))


ad.defjvp2(bessel_i0e_p, lambda g, y, x: g * (bessel_i1e(x) - sign(x) * y))
ad.defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
