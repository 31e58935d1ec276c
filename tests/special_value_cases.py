"""The Array API's special cases of the elementwise functions (standard 2024.12, the
"Special cases" list of each function), as concrete inputs and expected results.

The standard states each case as a condition ("x1_i is greater than 0 and x2_i is +0");
here each condition is given by a few representative values. Results:

- a float: 0, ±inf and NaN must match exactly (the sign of a zero or an infinity counts);
  other values within a few ulps (they are "implementation-dependent approximations");
- ``U(v)``: v with either sign ("sign of the imaginary component is unspecified");
- ``Either(v, w)``: one of two results the standard allows ("libraries may return NaN").

Complex cases are the standard's lists plus their images under the symmetries the
standard requires (``f(conj(z)) == conj(f(z))``, ``f(-z) == -f(z)`` for the odd functions,
``cosh(-z) == cosh(z)``). The functions it defines "as if" through another (asin as
``-1j * asinh(x*1j)``, cos as ``cosh(x*1j)``, log2 as ``log(x)/log(2)``) get that
function's cases mapped through the definition, with multiplication by ±1j taken as the
exact rotation C99 Annex G uses.

One departure from the list: for a positive finite b the standard gives
``sqrt(-inf + bj) = NaN + NaN j`` and ``sqrt(+inf + bj) = +0 + inf j``, a slip (two results
moved up a line) against C99, whose branch cuts the standard says it follows, and against
numpy: both give ``+0 + inf j`` and ``+inf + 0j``. We follow C99 there.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Iterable

inf, nan = math.inf, math.nan
PI = math.pi


@dataclasses.dataclass(frozen=True)
class U:
    """``value`` with either sign."""
    value: float

    def __neg__(self) -> "U":
        return self


@dataclasses.dataclass(frozen=True)
class Either:
    """Any of the allowed results."""
    options: tuple


Expected = Any  # float, U, Either, or a (real, imag) pair of those

# Representative values of the standard's conditions.
POS = (1.5, 3.0)                 # positive finite (3.0 is an odd integer)
NEG = (-1.5, -3.0)
NONZERO = POS + NEG              # nonzero finite
ZEROS = (0.0, -0.0)
FINITE = NONZERO + ZEROS
ANY = FINITE + (inf, -inf, nan)


def _neg(v: Expected) -> Expected:
    if isinstance(v, Either):
        return Either(tuple(_neg(o) for o in v.options))
    return -v


def _cases(xs: Iterable[float] | float, result: Expected | Callable[[float], Expected]):
    xs = xs if isinstance(xs, tuple) else (xs,)
    return [(x, result(x) if callable(result) else result) for x in xs]


def _cases2(x1s, x2s, result):
    x1s = x1s if isinstance(x1s, tuple) else (x1s,)
    x2s = x2s if isinstance(x2s, tuple) else (x2s,)
    return [((a, b), result(a, b) if callable(result) else result) for a in x1s for b in x2s]


# ---- real unary: {name: [(x, expected)]} ----

_ROUNDING = (_cases((inf, -inf, 0.0, -0.0, nan), lambda x: x)
             + _cases((3.0, -7.0, 2.0 ** 60), lambda x: x))

REAL_UNARY: dict[str, list] = {
    "abs": _cases(nan, nan) + _cases(-0.0, 0.0) + _cases(-inf, inf),
    "acos": _cases((nan, 1.5, inf, -1.5, -inf), nan) + _cases(1.0, 0.0),
    "acosh": _cases((nan, 0.5, 0.0, -0.0, -1.5, -inf), nan) + _cases(1.0, 0.0)
    + _cases(inf, inf),
    "asin": _cases((nan, 1.5, inf, -1.5, -inf), nan) + _cases(ZEROS, lambda x: x),
    "asinh": _cases(nan, nan) + _cases(ZEROS + (inf, -inf), lambda x: x),
    "atan": _cases(nan, nan) + _cases(ZEROS, lambda x: x) + _cases(inf, PI / 2)
    + _cases(-inf, -PI / 2),
    "atanh": _cases((nan, -1.5, -inf, 1.5, inf), nan) + _cases(-1.0, -inf)
    + _cases(1.0, inf) + _cases(ZEROS, lambda x: x),
    "ceil": _ROUNDING,
    "cos": _cases((nan, inf, -inf), nan) + _cases(ZEROS, 1.0),
    "cosh": _cases(nan, nan) + _cases(ZEROS, 1.0) + _cases((inf, -inf), inf),
    "exp": _cases(nan, nan) + _cases(ZEROS, 1.0) + _cases(inf, inf) + _cases(-inf, 0.0),
    "expm1": _cases(nan, nan) + _cases(ZEROS + (inf,), lambda x: x) + _cases(-inf, -1.0),
    "floor": _ROUNDING,
    "log": _cases((nan, -1.5, -inf), nan) + _cases(ZEROS, -inf) + _cases(1.0, 0.0)
    + _cases(inf, inf),
    "log1p": _cases((nan, -1.5, -inf), nan) + _cases(-1.0, -inf)
    + _cases(ZEROS + (inf,), lambda x: x),
    "round": _ROUNDING + _cases((2.5, -2.5), lambda x: 2.0 * (x > 0) - 2.0 * (x < 0))
    + _cases(3.5, 4.0) + _cases(0.5, 0.0) + _cases(-0.5, -0.0),
    "sign": _cases(NEG + (-inf,), -1.0) + _cases(ZEROS, U(0.0)) + _cases(POS + (inf,), 1.0)
    + _cases(nan, nan),
    "sin": _cases((nan, inf, -inf), nan) + _cases(ZEROS, lambda x: x),
    "sinh": _cases(nan, nan) + _cases(ZEROS + (inf, -inf), lambda x: x),
    "sqrt": _cases((nan, -1.5, -inf), nan) + _cases(ZEROS + (inf,), lambda x: x),
    "square": _cases(nan, nan) + _cases((inf, -inf), inf) + _cases(ZEROS, 0.0),
    "tan": _cases((nan, inf, -inf), nan) + _cases(ZEROS, lambda x: x),
    "tanh": _cases(nan, nan) + _cases(ZEROS, lambda x: x) + _cases(inf, 1.0)
    + _cases(-inf, -1.0),
    "trunc": _ROUNDING,
}
for _name in ("log2", "log10"):
    REAL_UNARY[_name] = REAL_UNARY["log"]


# ---- real binary: {name: [((x1, x2), expected)]} ----

_IEEE = (0.0, -0.0, 1.5, -3.0, inf, -inf)   # IEEE's own rules decide every pair


def _ieee_pairs(op):
    return [((a, b), op(a, b)) for a in _IEEE for b in _IEEE]


def _add(a, b): return a + b
def _sub(a, b): return a - b
def _mul(a, b): return a * b


_NAN_ARGS = _cases2(nan, ANY, nan) + _cases2(ANY, nan, nan)
_PINF, _NINF = POS + (inf,), NEG + (-inf,)


def _quotient(a, b):
    return a / b


_DIVISION_SIGNS = (
    _cases2((inf, -inf), (inf, -inf), nan) + _cases2(ZEROS, ZEROS, nan)
    + _cases2(0.0, _PINF, 0.0) + _cases2(-0.0, _PINF, -0.0)
    + _cases2(0.0, _NINF, -0.0) + _cases2(-0.0, _NINF, 0.0)
    + _cases2(_PINF, 0.0, inf) + _cases2(_PINF, -0.0, -inf)
    + _cases2(_NINF, 0.0, -inf) + _cases2(_NINF, -0.0, inf)
    + _cases2(POS, inf, 0.0) + _cases2(NEG, -inf, 0.0))
# Python's floor division gives -1 here; the standard allows it.
_OPPOSITE_INF = _cases2(POS, -inf, -0.0) + _cases2(NEG, inf, -0.0)


def _pow_cases():
    odd, not_odd_pos, not_odd_neg = 3.0, (1.5, 2.0, inf), (-1.5, -2.0, -inf)
    big, one, small = (1.5, -3.0, inf, -inf), (1.0, -1.0), (0.5, -0.5, 0.0, -0.0)
    return (_cases2((0.5, 2.0, -1.0, 0.0, inf, -inf, nan), nan, nan)
            + _cases2(ANY, ZEROS, 1.0) + _cases2(nan, NONZERO + (inf, -inf), nan)
            + _cases2(big, inf, inf) + _cases2(big, -inf, 0.0)
            + _cases2(one, (inf, -inf), 1.0) + _cases2(1.0, FINITE + (inf, -inf), 1.0)
            + _cases2(small, inf, 0.0) + _cases2(small, -inf, inf)
            + _cases2(inf, _PINF, inf) + _cases2(inf, _NINF, 0.0)
            + _cases2(-inf, odd, -inf) + _cases2(-inf, not_odd_pos, inf)
            + _cases2(-inf, -odd, -0.0) + _cases2(-inf, not_odd_neg, 0.0)
            + _cases2(0.0, _PINF, 0.0) + _cases2(0.0, _NINF, inf)
            + _cases2(-0.0, odd, -0.0) + _cases2(-0.0, not_odd_pos, 0.0)
            + _cases2(-0.0, -odd, -inf) + _cases2(-0.0, not_odd_neg, inf)
            + _cases2(NEG, (0.5, -2.5), nan))


REAL_BINARY: dict[str, list] = {
    "add": _NAN_ARGS + _ieee_pairs(_add) + _cases2(inf, -inf, nan) + _cases2(-inf, inf, nan)
    + _cases2(NONZERO, ZEROS, lambda a, b: a) + [((1.5, -1.5), 0.0), ((-3.0, 3.0), 0.0)],
    "subtract": _NAN_ARGS + _ieee_pairs(_sub) + _cases2((inf, -inf), (inf, -inf),
                                                      lambda a, b: nan if a == b else a)
    + [((1.5, 1.5), 0.0), ((-3.0, -3.0), 0.0)],
    "multiply": _NAN_ARGS + _ieee_pairs(_mul) + _cases2((inf, -inf), ZEROS, nan)
    + _cases2(ZEROS, (inf, -inf), nan),
    "divide": _NAN_ARGS + _DIVISION_SIGNS + _OPPOSITE_INF + _cases2(inf, POS, inf)
    + _cases2(inf, NEG, -inf) + _cases2(-inf, POS, -inf) + _cases2(-inf, NEG, inf)
    + _cases2(NONZERO, NONZERO, _quotient),
    "floor_divide": _NAN_ARGS + _DIVISION_SIGNS
    + _cases2(inf, POS, Either((inf, nan))) + _cases2(inf, NEG, Either((-inf, nan)))
    + _cases2(-inf, POS, Either((-inf, nan))) + _cases2(-inf, NEG, Either((inf, nan)))
    + [(z, Either((r, -1.0))) for z, r in _OPPOSITE_INF]
    + _cases2(NONZERO, NONZERO, lambda a, b: float(math.floor(a / b))),
    "remainder": _NAN_ARGS + _cases2((inf, -inf), (inf, -inf), nan)
    + _cases2(ZEROS, ZEROS, nan)
    + _cases2(ZEROS, _PINF, 0.0) + _cases2(ZEROS, _NINF, -0.0)
    + _cases2(_PINF + _NINF, ZEROS, nan) + _cases2((inf, -inf), NONZERO, nan)
    + _cases2(POS, inf, lambda a, b: a) + _cases2(POS, -inf, -inf)
    + _cases2(NEG, inf, inf) + _cases2(NEG, -inf, lambda a, b: a)
    + _cases2(NONZERO, NONZERO, lambda a, b: a % b),
    "atan2": _NAN_ARGS
    + _cases2(_PINF, ZEROS, PI / 2) + _cases2(0.0, _PINF + (0.0,), 0.0)
    + _cases2(0.0, (-0.0,) + _NINF, PI) + _cases2(-0.0, _PINF + (0.0,), -0.0)
    + _cases2(-0.0, (-0.0,) + _NINF, -PI) + _cases2(_NINF, ZEROS, -PI / 2)
    + _cases2(POS, inf, 0.0) + _cases2(POS, -inf, PI) + _cases2(NEG, inf, -0.0)
    + _cases2(NEG, -inf, -PI) + _cases2(inf, FINITE, PI / 2) + _cases2(-inf, FINITE, -PI / 2)
    + [((inf, inf), PI / 4), ((inf, -inf), 3 * PI / 4), ((-inf, inf), -PI / 4),
       ((-inf, -inf), -3 * PI / 4)],
    "hypot": _cases2((inf, -inf), ANY, inf) + _cases2(ANY, (inf, -inf), inf)
    + _cases2(ZEROS, FINITE + (nan,), lambda a, b: abs(b))
    + _cases2(FINITE + (nan,), ZEROS, lambda a, b: abs(a))
    + _cases2(FINITE + (nan,), nan, nan) + _cases2(nan, FINITE, nan),
    "logaddexp": _NAN_ARGS + _cases2(inf, ANY[:-1], inf) + _cases2(ANY[:-1], inf, inf),
    "maximum": _NAN_ARGS,
    "minimum": _NAN_ARGS,
    "pow": _pow_cases(),
}


# ---- complex unary: {name: [((a, b), (re, im))]} ----

def _c(a_s, b_s, result):
    """Cases for a in a_s and b in b_s; ``result`` a (re, im) pair or a function of (a, b)."""
    return _cases2(a_s, b_s, result)


def _cis(scale: float, b: float) -> tuple:
    """``scale * cis(b)`` for an infinite or zero scale, as C99 takes it (sign by sign)."""
    return (math.copysign(scale, math.cos(b)), math.copysign(scale, math.sin(b)))


_PF = POS                          # positive finite
_FIN_NZ = NONZERO
_NAN2 = (nan, nan)

_COMPLEX_BASE: dict[str, list] = {
    "acos": _c(ZEROS, 0.0, (PI / 2, -0.0)) + _c(ZEROS, nan, (PI / 2, nan))
    + _c(FINITE, inf, (PI / 2, -inf)) + _c(_FIN_NZ, nan, _NAN2)
    + _c(-inf, _PF, (PI, -inf)) + _c(inf, _PF, (0.0, -inf))
    + _c(-inf, inf, (3 * PI / 4, -inf)) + _c(inf, inf, (PI / 4, -inf))
    + _c((inf, -inf), nan, (nan, U(inf))) + _c(nan, FINITE, _NAN2)
    + _c(nan, inf, (nan, -inf)) + _c(nan, nan, _NAN2),
    "acosh": _c(ZEROS, 0.0, (0.0, PI / 2)) + _c(FINITE, inf, (inf, PI / 2))
    + _c(_FIN_NZ, nan, _NAN2) + _c(0.0, nan, (nan, U(PI / 2)))
    + _c(-inf, _PF, (inf, PI)) + _c(inf, _PF, (inf, 0.0))
    + _c(-inf, inf, (inf, 3 * PI / 4)) + _c(inf, inf, (inf, PI / 4))
    + _c((inf, -inf), nan, (inf, nan)) + _c(nan, FINITE, _NAN2)
    + _c(nan, inf, (inf, nan)) + _c(nan, nan, _NAN2),
    "asinh": _c(0.0, 0.0, (0.0, 0.0)) + _c(_PF, inf, (inf, PI / 2))
    + _c(FINITE, nan, _NAN2) + _c(inf, _PF, (inf, 0.0)) + _c(inf, inf, (inf, PI / 4))
    + _c(nan, 0.0, (nan, 0.0)) + _c(nan, _FIN_NZ, _NAN2) + _c(nan, inf, (U(inf), nan))
    + _c(nan, nan, _NAN2),
    "atanh": _c(0.0, 0.0, (0.0, 0.0)) + _c(0.0, nan, (0.0, nan))
    + _c(1.0, 0.0, (inf, 0.0)) + _c(_PF, inf, (0.0, PI / 2)) + _c(_FIN_NZ, nan, _NAN2)
    + _c(inf, _PF, (0.0, PI / 2)) + _c(inf, inf, (0.0, PI / 2)) + _c(inf, nan, (0.0, nan))
    + _c(nan, FINITE, _NAN2) + _c(nan, inf, (U(0.0), PI / 2)) + _c(nan, nan, _NAN2),
    "cosh": _c(0.0, 0.0, (1.0, 0.0)) + _c(0.0, inf, (nan, U(0.0)))
    + _c(0.0, nan, (nan, U(0.0))) + _c(_FIN_NZ, (inf, nan), _NAN2)
    + _c(inf, 0.0, (inf, 0.0)) + _c(inf, _FIN_NZ, lambda a, b: _cis(inf, b))
    + _c(inf, inf, (U(inf), nan)) + _c(inf, nan, (inf, nan))
    + _c(nan, ZEROS, (nan, U(0.0))) + _c(nan, _FIN_NZ, _NAN2) + _c(nan, nan, _NAN2),
    "exp": _c(ZEROS, 0.0, (1.0, 0.0)) + _c(FINITE, (inf, nan), _NAN2)
    + _c(inf, 0.0, (inf, 0.0)) + _c(-inf, FINITE, lambda a, b: _cis(0.0, b))
    + _c(inf, _FIN_NZ, lambda a, b: _cis(inf, b)) + _c(-inf, (inf, nan), (U(0.0), U(0.0)))
    + _c(inf, (inf, nan), (U(inf), nan)) + _c(nan, 0.0, (nan, 0.0))
    + _c(nan, _FIN_NZ + (inf,), _NAN2) + _c(nan, nan, _NAN2),
    "expm1": _c(ZEROS, 0.0, (U(0.0), 0.0)) + _c(FINITE, (inf, nan), _NAN2)
    + _c(inf, 0.0, (inf, 0.0))
    + _c(-inf, FINITE, lambda a, b: (-1.0, math.copysign(0.0, math.sin(b))))
    + _c(inf, _FIN_NZ, lambda a, b: _cis(inf, b)) + _c(-inf, (inf, nan), (-1.0, U(0.0)))
    + _c(inf, (inf, nan), (U(inf), nan)) + _c(nan, 0.0, (nan, 0.0))
    + _c(nan, _FIN_NZ + (inf,), _NAN2) + _c(nan, nan, _NAN2),
    "log": _c(-0.0, 0.0, (-inf, PI)) + _c(0.0, 0.0, (-inf, 0.0))
    + _c(FINITE, inf, (inf, PI / 2)) + _c(FINITE, nan, _NAN2)
    + _c(-inf, _PF, (inf, PI)) + _c(inf, _PF, (inf, 0.0))
    + _c(-inf, inf, (inf, 3 * PI / 4)) + _c(inf, inf, (inf, PI / 4))
    + _c((inf, -inf), nan, (inf, nan)) + _c(nan, FINITE, _NAN2) + _c(nan, inf, (inf, nan))
    + _c(nan, nan, _NAN2),
    "log1p": _c(-1.0, 0.0, (-inf, 0.0)) + _c(FINITE, inf, (inf, PI / 2))
    + _c(FINITE, nan, _NAN2) + _c(-inf, _PF, (inf, PI)) + _c(inf, _PF, (inf, 0.0))
    + _c(-inf, inf, (inf, 3 * PI / 4)) + _c(inf, inf, (inf, PI / 4))
    + _c((inf, -inf), nan, (inf, nan)) + _c(nan, FINITE, _NAN2) + _c(nan, inf, (inf, nan))
    + _c(nan, nan, _NAN2),
    "sinh": _c(0.0, 0.0, (0.0, 0.0)) + _c(0.0, (inf, nan), (U(0.0), nan))
    + _c(_PF, (inf, nan), _NAN2) + _c(inf, 0.0, (inf, 0.0))
    + _c(inf, _PF, lambda a, b: _cis(inf, b)) + _c(inf, (inf, nan), (U(inf), nan))
    + _c(nan, 0.0, (nan, 0.0)) + _c(nan, _FIN_NZ, _NAN2) + _c(nan, nan, _NAN2),
    "sqrt": _c(ZEROS, 0.0, (0.0, 0.0)) + _c(ANY, inf, (inf, inf))
    + _c(FINITE, nan, _NAN2) + _c(-inf, _PF, (0.0, inf)) + _c(inf, _PF, (inf, 0.0))
    + _c(-inf, nan, (nan, U(inf))) + _c(inf, nan, (inf, nan))
    + _c(nan, FINITE + (nan,), _NAN2),
    "tanh": _c(0.0, 0.0, (0.0, 0.0)) + _c(_FIN_NZ, (inf, nan), _NAN2)
    + _c(0.0, (inf, nan), (0.0, nan)) + _c(inf, _PF + (inf, nan), (1.0, U(0.0)))
    + _c(nan, 0.0, (nan, 0.0)) + _c(nan, _FIN_NZ + (inf,), _NAN2) + _c(nan, nan, _NAN2),
}

# The symmetries the standard requires of each function: "conj" f(conj z) = conj f(z),
# "odd" f(-z) = -f(z), "even" f(-z) = f(z).
_SYMMETRIES = {"acos": ("conj",), "acosh": ("conj",), "asinh": ("conj", "odd"),
               "atanh": ("conj", "odd"), "cosh": ("conj", "even"), "exp": ("conj",),
               "expm1": ("conj",), "log": ("conj",), "log1p": ("conj",),
               "sinh": ("conj", "odd"), "sqrt": ("conj",), "tanh": ("conj", "odd")}


def _key(v: Any) -> Any:
    return ("nan",) if isinstance(v, float) and v != v else (v, math.copysign(1, v)) \
        if isinstance(v, float) else v


def _with_symmetries(name: str, cases: list) -> list:
    out, seen = [], set()

    def put(z, r):
        k = (_key(z[0]), _key(z[1]))
        if k not in seen:
            seen.add(k)
            out.append((z, r))

    for z, r in cases:
        put(z, r)
    for sym in _SYMMETRIES[name]:
        for (a, b), (re, im) in list(out):
            if sym == "conj":
                put((a, -b), (re, _neg(im)))
            elif sym == "odd":
                put((-a, -b), (_neg(re), _neg(im)))
            else:
                put((-a, -b), (re, im))
    return out


def _rotated(cases: list, result_times_minus_i: bool) -> list:
    """Cases of g(x) = [-1j *] f(1j * x) from f's: x = (b, -a) maps to 1j*x = (a, b)."""
    out = []
    for (a, b), (re, im) in cases:
        x = (b, _neg(a))
        out.append((x, (im, _neg(re)) if result_times_minus_i else (re, im)))
    return out


def _scaled(cases: list, scale: float) -> list:
    def s(v):
        if isinstance(v, U):
            return U(v.value * scale)
        return v * scale
    return [(z, (s(re), s(im))) for z, (re, im) in cases]


COMPLEX_UNARY: dict[str, list] = {n: _with_symmetries(n, c) for n, c in _COMPLEX_BASE.items()}
COMPLEX_UNARY["asin"] = _rotated(COMPLEX_UNARY["asinh"], True)
COMPLEX_UNARY["atan"] = _rotated(COMPLEX_UNARY["atanh"], True)
COMPLEX_UNARY["cos"] = _rotated(COMPLEX_UNARY["cosh"], False)
COMPLEX_UNARY["sin"] = _rotated(COMPLEX_UNARY["sinh"], True)
COMPLEX_UNARY["tan"] = _rotated(COMPLEX_UNARY["tanh"], True)
COMPLEX_UNARY["log2"] = _scaled(COMPLEX_UNARY["log"], 1 / math.log(2))
COMPLEX_UNARY["log10"] = _scaled(COMPLEX_UNARY["log"], 1 / math.log(10))
COMPLEX_UNARY["abs"] = (
    _c((inf, -inf), ANY, inf) + _c(ANY, (inf, -inf), inf)
    + _c(ZEROS, FINITE + (nan,), lambda a, b: abs(b))
    + _c(FINITE + (nan,), ZEROS, lambda a, b: abs(a)) + _c(nan, NONZERO + (nan,), nan)
    + _c(NONZERO, nan, nan))
COMPLEX_UNARY["sign"] = (_c(ZEROS, ZEROS, (U(0.0), U(0.0)))
                         + _c(nan, ANY, _NAN2) + _c(ANY, nan, _NAN2))
# Rounding applies to each part on its own.
COMPLEX_UNARY["round"] = [((a, b), (ra, rb)) for a, ra in REAL_UNARY["round"]
                          for b, rb in REAL_UNARY["round"][:6]]


# ---- complex binary: the parts follow the real rules on their own (add, subtract), and
# four NaN parts give NaN + NaN j (multiply, divide) ----

_PARTS = (0.0, -0.0, 1.5, inf, -inf, nan)
COMPLEX_BINARY: dict[str, list] = {
    "add": [(((a, b), (c, d)), (a + c, b + d)) for a in _PARTS for b in _PARTS[:3]
            for c in _PARTS for d in (0.0, -0.0)],
    "subtract": [(((a, b), (c, d)), (a - c, b - d)) for a in _PARTS for b in _PARTS[:3]
                 for c in _PARTS for d in (0.0, -0.0)],
    "multiply": [(((nan, nan), (nan, nan)), _NAN2)],
    "divide": [(((nan, nan), (nan, nan)), _NAN2)],
}
