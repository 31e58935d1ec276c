"""The elementwise functions at ±0, ±inf and NaN, real and complex: the Array API's special
cases (IEEE 754 and C99 Annex G; the table is ``special_value_cases.py``), in float32 and
float64 (complex64 and complex128), eagerly, under jit on the base tier (the fused
interpreter) and under jit on the upper tier (generated C).

Where JAX 0.10.2 departs from the standard we follow the standard; those cases are named
in the commit that made them pass.
"""
from __future__ import annotations

import math
import os
import shutil
from typing import Any

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp

import special_value_cases as sv

REAL = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
MODES = ("eager", "base", "upper")
HAVE_CC = shutil.which("cc") is not None or bool(os.environ.get("CC"))

TABLES = {"real_unary": (sv.REAL_UNARY, REAL), "real_binary": (sv.REAL_BINARY, REAL),
          "complex_unary": (sv.COMPLEX_UNARY, COMPLEX),
          "complex_binary": (sv.COMPLEX_BINARY, COMPLEX)}


def _operand(values: list, dt: str) -> np.ndarray:
    if dt in COMPLEX:
        return np.array([complex(*v) for v in values], dtype=dt)
    return np.array(values, dtype=dt)


def _operands(kind: str, cases: list, dt: str) -> list[np.ndarray]:
    inputs = [z for z, _ in cases]
    if kind.endswith("unary"):
        return [_operand(inputs, dt)]
    return [_operand([z[0] for z in inputs], dt), _operand([z[1] for z in inputs], dt)]


def _jit_all(fns: dict[str, Any], args: dict[str, list], mode: str) -> dict[str, Any]:
    """Every function's result from one jitted program on ``mode``'s tier."""
    names = sorted(fns)

    def f(*flat):
        out, k = [], 0
        for n in names:
            m = len(args[n])
            out.append(fns[n](*flat[k:k + m]))
            k += m
        return out

    flat = [jnp.asarray(a) for n in names for a in args[n]]
    os.environ["TINYXLA_CODEGEN"] = "1" if mode == "upper" else "0"
    try:
        compiled = jax.jit(f).lower(*flat).compile()
    finally:
        del os.environ["TINYXLA_CODEGEN"]
    compiled.wait_codegen()
    if mode == "upper" and np.asarray(flat[0]).dtype.kind == "f":
        # (complex elementwise kernels stay on the base tier: it generates no C for them)
        assert compiled.tier == "upper", compiled.codegen_status
    return dict(zip(names, (np.asarray(r) for r in compiled(*flat))))


_RESULTS: dict[tuple, dict[str, Any]] = {}


def _results(kind: str, dt: str, mode: str) -> dict[str, Any]:
    key = (kind, dt, mode)
    if key not in _RESULTS:
        table, _ = TABLES[kind]
        fns = {n: getattr(jnp, n) for n in table}
        args = {n: _operands(kind, table[n], dt) for n in table}
        old = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", True)
        try:
            if mode == "eager":
                res = {n: np.asarray(fns[n](*[jnp.asarray(a) for a in args[n]]))
                       for n in table}
            else:
                res = _jit_all(fns, args, mode)
        finally:
            jax.config.update("jax_enable_x64", old)
        _RESULTS[key] = res
    return _RESULTS[key]


def _tolerance(dt: np.dtype) -> float:
    return 8 * float(np.finfo(dt).eps)


def matches(got: float, want: Any, dt: np.dtype) -> bool:
    """Whether one real part ``got`` is the table's ``want``."""
    if isinstance(want, sv.Either):
        return any(matches(got, w, dt) for w in want.options)
    if isinstance(want, sv.U):
        return matches(abs(got), abs(want.value), dt)
    got, want = float(got), float(want)
    if math.isnan(want):
        return math.isnan(got)
    if want == 0 or math.isinf(want):
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    want = float(np.asarray(want, dtype=dt))  # rounded to the dtype
    return math.isfinite(got) and abs(got - want) <= _tolerance(dt) * abs(want)


def mismatches(kind: str, cases: list, got: np.ndarray) -> list[str]:
    bad = []
    for (z, want), g in zip(cases, got.tolist()):
        if kind == "complex_unary" and isinstance(want, tuple) or kind == "complex_binary":
            rdt = np.finfo(got.dtype).dtype
            ok = matches(g.real, want[0], rdt) and matches(g.imag, want[1], rdt)
        elif kind == "complex_unary":  # a real result (abs)
            ok = matches(g, want, got.dtype)
        else:
            ok = matches(g, want, got.dtype)
        if not ok:
            bad.append(f"{z} -> {g!r}, want {want}")
    return bad


def _params() -> list:
    return list(_param_iter())


def _param_iter():
    for kind, (table, dts) in TABLES.items():
        for name in sorted(table):
            for dt in dts:
                for mode in MODES:
                    yield pytest.param(kind, name, dt, mode, id=f"{kind}-{name}-{dt}-{mode}")


@pytest.mark.parametrize("kind,name,dt,mode", _params())
def test_special_values(kind: str, name: str, dt: str, mode: str) -> None:
    if mode == "upper" and not HAVE_CC:
        pytest.skip("no C compiler for the upper tier")
    table, _ = TABLES[kind]
    got = _results(kind, dt, mode)[name]
    bad = mismatches(kind, table[name], got)
    assert not bad, f"{len(bad)} of {len(table[name])} cases:\n" + "\n".join(bad[:40])


def _bits(a: np.ndarray) -> np.ndarray:
    """The bits of each real part, every NaN made one NaN (payloads may differ)."""
    parts = a.view(np.finfo(a.dtype).dtype) if a.dtype.kind == "c" else a
    parts = np.where(np.isnan(parts), np.nan, parts).astype(parts.dtype)
    return parts.view(f"u{parts.itemsize}")


def test_tiers_agree_bit_for_bit() -> None:
    """Where the table allows several answers, the three paths still give the same one."""
    for kind, (table, dts) in TABLES.items():
        for dt in dts:
            eager = _results(kind, dt, "eager")
            for mode in ("base",) + (("upper",) if HAVE_CC else ()):
                other = _results(kind, dt, mode)
                for name in table:
                    np.testing.assert_array_equal(_bits(eager[name]), _bits(other[name]),
                                                  err_msg=f"{kind} {name} {dt} {mode}")


@pytest.mark.parametrize("fn", [jnp.remainder, lambda a, b: jnp.divmod(a, b)[1]])
def test_signed_zero_remainder_keeps_jax_gradient(fn) -> None:
    """The zero remainder's sign fix leaves the derivatives JAX 0.10.2 gives (pinned)."""
    pairs = [(2.0, 1.0), (3.0, 1.5), (-3.0, 1.5), (2.5, 1.0), (0.0, 2.0)]
    want = [(1.0, -2.0), (1.0, -2.0), (1.0, 2.0), (1.0, -2.0), (1.0, 0.0)]
    for (a, b), w in zip(pairs, want):
        got = jax.grad(fn, argnums=(0, 1))(a, b)
        assert (float(got[0]), float(got[1])) == w, (a, b)
        assert float(jax.grad(jnp.floor_divide)(a, b)) == 0.0
