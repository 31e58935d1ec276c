"""tinyxla.numpy against JAX's pinned behaviour: result dtypes, weak types, values and errors.

The tables in data/numpy_tables.json were taken from jax.numpy 0.10.2 by
data/make_numpy_tables.py; JAX itself is not needed here. Three kinds of checks:
- every unary and binary function on every operand kind (strong arrays of each dtype,
  weak arrays, Python scalars): the result dtype and weak type, or the error;
- the expressions of data/numpy_exprs.txt (and _x64.txt with x64 on): the full outcome
  (dtype, weak type, shape, values within JAX's tolerances, error class and message,
  warnings).
"""
from __future__ import annotations

import json
import math
import pathlib
import re
import warnings

import numpy as np
import pytest

import tinyxla
import tinyxla.numpy as jnp

DATA = pathlib.Path(__file__).parent / "data"
TABLES = json.loads((DATA / "numpy_tables.json").read_text())

# Relative tolerances by result dtype (JAX's test_util defaults; transcendentals on f32
# a little looser, as JAX's own tests use).
_RTOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 2e-6, "complex64": 2e-6,
         "float64": 1e-12, "complex128": 1e-12}


def _operands(x64: bool) -> dict:
    strong = ["bool", "int8", "int32", "uint8", "uint32", "float16", "bfloat16", "float32",
              "complex64"]
    if x64:
        strong += ["int64", "uint64", "float64", "complex128"]
    ops = {d: jnp.ones((2,), d) for d in strong}
    ops.update({"weak:int32": jnp.full((2,), 1), "weak:float32": jnp.full((2,), 1.0),
                "weak:complex64": jnp.full((2,), 1j)})
    ops.update({"py:bool": True, "py:int": 1, "py:float": 1.0, "py:complex": 1j})
    return ops


def _dtype_cell(out) -> str:
    return np.dtype(out.dtype).name + ("*" if getattr(out, "weak_type", False) else "")


def _cell(fn, args) -> str:
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with JAX's recorded error
        return f"!{type(e).__name__}: {e}"
    if isinstance(out, (tuple, list)):
        return ",".join(_dtype_cell(o) for o in out)
    if isinstance(out, (bool, np.bool_)):
        return "pybool"
    return _dtype_cell(out)


def _table_cases(mode: str, section: str):
    for fn_name, cells in TABLES[mode][section].items():
        for key, want in cells.items():
            if want != "?":  # JAX crashed on this input
                yield pytest.param(fn_name, key, want, id=f"{fn_name}-{key}")


def _check_cells(mode: str, fn_name: str, key: str, want: str) -> None:
    ops = _operands(mode == "x64")
    args = tuple(ops[k] for k in key.split("|"))
    assert _cell(getattr(jnp, fn_name), args) == want


@pytest.mark.parametrize("fn_name,key,want", list(_table_cases("x32", "unary")))
def test_unary_dtype(fn_name, key, want):
    _check_cells("x32", fn_name, key, want)


@pytest.mark.parametrize("fn_name,key,want", list(_table_cases("x32", "binary")))
def test_binary_dtype(fn_name, key, want):
    _check_cells("x32", fn_name, key, want)


@pytest.mark.parametrize("fn_name,key,want", list(_table_cases("x64", "unary")))
def test_unary_dtype_x64(x64, fn_name, key, want):
    _check_cells("x64", fn_name, key, want)


@pytest.mark.parametrize("fn_name,key,want", list(_table_cases("x64", "binary")))
def test_binary_dtype_x64(x64, fn_name, key, want):
    _check_cells("x64", fn_name, key, want)


# ---------------------------------------------------------------------------------------
# Expressions


def _jsonable(v):
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, complex):
        return [_jsonable(v.real), _jsonable(v.imag)]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def _value(out):
    if isinstance(out, (tuple, list)):
        return {"tuple": [_value(o) for o in out]}
    if not hasattr(out, "dtype"):
        return {"python": _jsonable(out)}
    arr = np.asarray(out)
    if arr.dtype.name == "bfloat16":
        arr = arr.astype(np.float32)
    return {"dtype": np.dtype(out.dtype).name, "weak": bool(getattr(out, "weak_type", False)),
            "shape": list(arr.shape), "value": _jsonable(arr.tolist())}


def _outcome(expr: str) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = eval(expr, {"jnp": jnp, "np": np})  # noqa: S307 - trusted test data
        except Exception as e:  # noqa: BLE001 - compared with JAX's recorded error
            res = {"error": [type(e).__name__, str(e)]}
        else:
            res = _value(out)
    if caught:
        res["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return res


def _decode(v):
    """JSON values back to numbers: [re, im] pairs stay pairs; "nan"/"inf" become floats."""
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, str):
        return float(v)
    return v


def _assert_values_close(got, want, dtype: str) -> None:
    g = np.asarray(_decode(got), dtype=float)
    w = np.asarray(_decode(want), dtype=float)
    assert g.shape == w.shape
    rtol = _RTOL.get(dtype, 0)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")  # object addresses in reprs differ per run


def _assert_outcome(got: dict, want: dict) -> None:
    assert got.get("warnings", []) == want.get("warnings", [])
    if "error" in want or "error" in got:
        assert [_ADDRESS.sub(" at 0x?", e) for e in got.get("error", [])] == \
            [_ADDRESS.sub(" at 0x?", e) for e in want.get("error", [])]
    elif "tuple" in want:
        assert len(got["tuple"]) == len(want["tuple"])
        for g, w in zip(got["tuple"], want["tuple"]):
            _assert_outcome(g, w)
    elif "python" in want:
        assert got == want
    else:
        assert (got["dtype"], got["weak"], got["shape"]) == \
            (want["dtype"], want["weak"], want["shape"])
        _assert_values_close(got["value"], want["value"], want["dtype"])


@pytest.mark.parametrize("expr", list(TABLES["x32"]["exprs"]))
def test_expression(expr):
    _assert_outcome(_outcome(expr), TABLES["x32"]["exprs"][expr])


@pytest.mark.parametrize("expr", list(TABLES["x64"]["exprs"]))
def test_expression_x64(x64, expr):
    _assert_outcome(_outcome(expr), TABLES["x64"]["exprs"][expr])


def _array_outcome(want: dict) -> bool:
    if "tuple" in want:
        return all(_array_outcome(w) for w in want["tuple"])
    return "dtype" in want and "error" not in want


# Expressions that need a concrete array value (a shape, a size, a slice step): under jit
# the array is a traced constant, and JAX raises its concretization errors for these too.
_NEEDS_CONCRETE = {"jnp.ones(jnp.array(3))", "jnp.arange(jnp.asarray(3))",
                   "jnp.where(jnp.ones(3))", "jnp.arange(10)[slice(None, None, jnp.asarray(2))]"}


def _jit_cases(mode: str):
    return [e for e, w in TABLES[mode]["exprs"].items()
            if _array_outcome(w) and e not in _NEEDS_CONCRETE]


def _jit_outcome(expr: str) -> dict:
    """The expression traced under jit (its arrays become constants of the staged graph,
    its operations equations) and run compiled."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = _value(tinyxla.jit(lambda: eval(expr, {"jnp": jnp, "np": np}))())  # noqa: S307
    if caught:
        res["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught]
    return res


@pytest.mark.parametrize("expr", _jit_cases("x32"))
def test_expression_jit(expr):
    _assert_outcome(_jit_outcome(expr), TABLES["x32"]["exprs"][expr])


@pytest.mark.parametrize("expr", _jit_cases("x64"))
def test_expression_jit_x64(x64, expr):
    _assert_outcome(_jit_outcome(expr), TABLES["x64"]["exprs"][expr])
