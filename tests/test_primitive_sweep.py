"""The primitive sweep: every registered lax primitive, over every dtype it accepts, a set of
layouts (scalar, empty, odd lengths, strided and transposed views, broadcasts) and edge
values (±0, ±inf, NaN, denormals, integer extremes, complex with zero and non-zero parts),
gives the same answer eagerly, under jit on the base tier and under jit on the upper tier
(``TINYXLA_CODEGEN=1``): bit for bit, or within rounding for sums and products; and the
answer of numpy (with JAX's denormal rule, see below) where numpy has the op.

A new primitive is covered by registering it: its inputs come from its abstract signature
(tests/primitive_domains.py), and one with parameters the defaults cannot supply fails
here until it gets an entry in ``primitive_domains.SPECS``. The C++ op kinds and the
elementwise op codes that no Python primitive produces are reached through test-only
primitives, and ``test_every_cpp_op_is_reached`` checks the graphs covered them all.

Denormals (as XLA:CPU, which runs its kernels with FTZ and DAZ set): float32, float64 and
bfloat16 arithmetic and comparisons read denormal operands as zero and flush denormal
results; operations that only move bits (copies, abs, neg, select, bf16 <-> f32 widening
and narrowing) keep them. float16 denormals are normal numbers in float32 and are kept.
"""
from __future__ import annotations

import inspect
import os
import re
import shutil
import warnings
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.lax.linalg  # noqa: F401  (registers its primitives)
import tinyxla.nn  # noqa: F401
import tinyxla.numpy as jnp
import tinyxla.random  # noqa: F401
import tinyxla.scipy.linalg  # noqa: F401  (registers eigh_tridiagonal)
import tinyxla.scipy.special  # noqa: F401
from tinyxla import _core, lax
from tinyxla._src import core
from tinyxla._src.interpreters import lowering

import primitive_domains as dom
from primitive_domains import ALL_DTYPES, Case, Spec

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and not os.environ.get("CC"),
                                reason="no C compiler for the upper tier")


# ---- test-only primitives for the C++ elementwise codes no lax primitive produces ----

def _cpp_op_primitive(kind: str, code_name: str) -> core.Primitive:
    """A primitive running the C++ op ``code_name`` directly, eagerly and lowered."""
    from tinyxla._src.array import _CODE, _DTYPES, _wrap
    table = _core.UNARY_OPS if kind == "unary" else _core.BINARY_OPS
    code = table.index(code_name)
    prim = core.Primitive(f"cpp_{kind}_{code_name}")
    to_bool = code_name in ("isnan", "isinf", "signbit")

    def out_dtype(dt: np.dtype) -> np.dtype:
        if to_bool:
            return np.dtype(bool)
        return dt

    def check(*avals):
        dt = avals[0].dtype
        accepted = (dom.is_float(dt) if code_name not in ("floor_div", "floor_mod")
                    else dt != np.bool_ and dt.kind != "c")
        if not accepted:
            raise TypeError(f"{prim.name} does not accept {dt}")
        return core.ShapedArray(avals[0].shape, out_dtype(dt))

    def impl(*args):
        h = (_core.unary(code, args[0]._h) if kind == "unary"
             else _core.binary(code, args[0]._h, args[1]._h))
        dt = out_dtype(args[0].dtype)
        return _wrap(h, False, _DTYPES[_CODE[dt]])

    # The signatures the sweep reads as unary and binary elementwise.
    if kind == "unary":
        def abstract_eval(x, **params):
            return check(x)
    else:
        def abstract_eval(*avals, **params):
            return check(*avals)
    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    if kind == "unary":
        lowering.register_lowering(prim, lambda ctx, x: ctx.builder.unary(code, x))
    else:
        lowering.register_lowering(prim, lambda ctx, x, y: ctx.builder.binary(code, x, y))
    return prim


_CPP_ONLY_UNARY = ("exp2", "log2", "log10", "isnan", "isinf", "signbit", "reciprocal")
_CPP_ONLY_BINARY = ("floor_div", "floor_mod", "logaddexp", "copysign", "hypot")
_CPP_ONLY = [_cpp_op_primitive("unary", n) for n in _CPP_ONLY_UNARY if n in _core.UNARY_OPS] + \
            [_cpp_op_primitive("binary", n) for n in _CPP_ONLY_BINARY if n in _core.BINARY_OPS]


def _wrapped_gather_primitive() -> core.Primitive:
    """``x[i]`` for rows of a matrix by a gather with ``wrap_negative`` set, which no lax
    primitive makes (the simplifier sets it in place of jnp's index normalisation): negative
    rows count from the end, then out-of-range ones clamp."""
    from tinyxla._src.array import _CODE, _DTYPES, _wrap
    prim = core.Primitive("cpp_gather_wrap_negative")

    def attrs(slice_sizes):
        return dict(offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
                    slice_sizes=list(slice_sizes), mode="clip", wrap_negative=1)

    def abstract_eval(x, i, *, slice_sizes):
        if np.dtype(i.dtype).kind != "i" or len(x.shape) != 2 or i.shape[-1:] != (1,):
            raise TypeError(f"{prim.name} takes a matrix and signed integer rows")
        return core.ShapedArray(tuple(i.shape[:-1]) + tuple(slice_sizes[1:]), x.dtype)

    def impl(x, i, *, slice_sizes):
        h = _core.make_op("gather", attrs(slice_sizes))(x._h, i._h)
        return _wrap(h, False, _DTYPES[_CODE[x.dtype]])

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    lowering.register_lowering(prim, lambda ctx, x, i, *, slice_sizes: ctx.builder.op(
        "gather", attrs(slice_sizes), [x, i]))
    return prim


_WRAPPED_GATHER = _wrapped_gather_primitive()


def _wrapped_scatter_primitive() -> core.Primitive:
    """``x.at[i].add(u)`` for rows of a matrix by a scatter with ``wrap_negative`` set, which
    no lax primitive makes (the simplifier sets it in place of jnp's index normalisation):
    negative rows count from the end, then out-of-range ones drop."""
    from tinyxla._src.array import _CODE, _DTYPES, _wrap
    prim = core.Primitive("cpp_scatter_wrap_negative")
    attrs = dict(op="add", update_window_dims=[1], inserted_window_dims=[0],
                 scatter_dims_to_operand_dims=[0], mode="fill_or_drop", wrap_negative=1)

    def abstract_eval(x, i, u):
        if np.dtype(i.dtype).kind != "i" or len(x.shape) != 2 or i.shape[-1:] != (1,):
            raise TypeError(f"{prim.name} takes a matrix and signed integer rows")
        return core.ShapedArray(x.shape, x.dtype)

    def impl(x, i, u):
        h = _core.make_op("scatter", attrs)(x._h, i._h, u._h)
        return _wrap(h, False, _DTYPES[_CODE[x.dtype]])

    prim.def_impl(impl)
    prim.def_abstract_eval(abstract_eval)
    lowering.register_lowering(prim, lambda ctx, x, i, u: ctx.builder.op(
        "scatter", attrs, [x, i, u]))
    return prim


_WRAPPED_SCATTER = _wrapped_scatter_primitive()


# ---- the registry and each primitive's cases ----

def _registry() -> dict[str, core.Primitive]:
    prims = {p.name: p for p in lowering._lowerings}
    prims.update({p.name: p for p in lowering._inlined})
    return dict(sorted(prims.items()))


def _default_spec(prim: core.Primitive) -> Spec | None:
    """Elementwise unary ``(x, **params)`` or binary ``(*avals, **params)`` primitives."""
    if prim.abstract_eval is None:
        return None
    params = list(inspect.signature(prim.abstract_eval).parameters.values())
    kinds = [p.kind for p in params]
    if kinds == [inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_KEYWORD]:
        arity = 1
    elif kinds == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        arity = 2
    else:
        return None
    return Spec(lambda dt: dom.elementwise_cases(prim.name, dt, arity, {}))


def _spec(prim: core.Primitive) -> Spec | None:
    return dom.SPECS.get(prim.name) or _default_spec(prim)


def _accepts(prim: core.Primitive, case: Case) -> bool:
    avals = [core.ShapedArray(np.shape(a), np.asarray(a).dtype) for a in case.args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prim.abstract_eval(*avals, **case.params)
    except TypeError:
        return False
    return True


def _cases(prim: core.Primitive, spec: Spec) -> list[tuple[np.dtype, Case]]:
    out = []
    for dt in ALL_DTYPES:
        cases = spec.cases(dt)
        probe = spec.probe(dt) if spec.probe else (cases[0] if cases else None)
        if probe is not None and _accepts(prim, probe):
            out += [(dt, c) for c in cases]
    return out


# ---- running a case on the three paths ----

def _outputs(prim: core.Primitive, out: Any) -> list[np.ndarray]:
    outs = out if prim.multiple_results else [out]
    return [np.asarray(o) for o in outs]


def _fn(prim: core.Primitive, case: Case):
    def f(*args):
        return prim.bind(*dom.apply_layout(case.layout, args), **case.params)
    return f


def _run_eager(prim, case):
    args = [jnp.asarray(a) for a in case.args]
    return _outputs(prim, _fn(prim, case)(*args))


_graph_ops: set[str] = set()  # op names seen in the optimised graphs


def _compile(fn, args, mode: str):
    os.environ["TINYXLA_CODEGEN"] = mode
    try:
        compiled = jax.jit(fn).lower(*args).compile()
    finally:
        del os.environ["TINYXLA_CODEGEN"]
    _graph_ops.update(re.findall(r"= ([\w-]+)\(", compiled.as_text()))
    return compiled


def _run_jit(prim, case, mode: str):
    args = [jnp.asarray(a) for a in case.args]
    compiled = _compile(_fn(prim, case), args, mode)
    compiled.wait_codegen()
    return _outputs(prim, compiled(*args))


def _attempt(run, *args):
    """The outputs, or the exception's class name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(*args)
    except Exception as e:  # noqa: BLE001  (any error must be the same on every path)
        return type(e).__name__ + ": " + str(e).splitlines()[0][:120]


def _run_upper_batch(batch: Sequence[tuple[core.Primitive, Case]]) -> list[Any]:
    """The upper tier's outputs of many cases compiled as one module (one compiler run)."""
    arg_lists = [[jnp.asarray(a) for a in c.args] for _, c in batch]
    fns = [_fn(p, c) for p, c in batch]

    def f(*flat):
        outs, k = [], 0
        for fn, args in zip(fns, arg_lists):
            outs.append(fn(*flat[k:k + len(args)]))
            k += len(args)
        return outs

    flat_args = [a for args in arg_lists for a in args]
    compiled = _compile(f, flat_args, "1")
    compiled.wait_codegen()
    results = compiled(*flat_args)
    return [_outputs(p, r) for (p, _), r in zip(batch, results)]


def _jit_reference(prim: core.Primitive, case: Case, eager: Any) -> Any:
    """What jit must give: the eager answer, but for a float division by a broadcast, the
    product with the broadcast reciprocal, as XLA's simplifier computes it and JAX's jit
    gives (tests/test_xla_float_rewrites.py). Eagerly an explicitly broadcast divisor is an
    operand like any other, and divides, as in JAX."""
    if (prim.name != "div" or case.layout != "broadcast" or isinstance(eager, str) or
            np.dtype(case.args[1].dtype) not in _REWRITTEN_FLOATS):
        return eager
    a, b = (jnp.asarray(x) for x in case.args)
    recip = lax.div(jnp.ones_like(b), b)
    return _outputs(prim, lax.mul(a, lax.broadcast_in_dim(recip, a.shape, (1,))))


# As the C++ has_xla_float_rewrites: not bfloat16, which XLA:CPU computes through float32.
_REWRITTEN_FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]


# ---- comparisons ----

def _bits_equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a.split(":")[0] == b.split(":")[0]
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and
        dom.canonical_nans(x).tobytes() == dom.canonical_nans(y).tobytes() for x, y in zip(a, b))


_RTOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-12,
         "complex64": 2e-5, "complex128": 1e-12}


def _close(a: np.ndarray, b: np.ndarray, rtol: float | None = None) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind not in "fcV" and a.dtype != dom.BF16:
        return a.tobytes() == b.tobytes()
    x, y = a.astype(np.complex128), b.astype(np.complex128)
    rtol = _RTOL[a.dtype.name] if rtol is None else rtol
    tiny = ml_dtypes.finfo(np.float32 if a.dtype.itemsize <= 8 and a.dtype.kind == "c" or
                    a.dtype.name in ("float32", "bfloat16", "float16") else np.float64).smallest_normal
    ok = np.ones(x.shape, bool)
    with np.errstate(all="ignore"):
        for p, q in ((x.real, y.real), (x.imag, y.imag)):
            same = (p == q) | (np.isnan(p) & np.isnan(q)) | ((np.abs(p) < tiny) & (np.abs(q) < tiny))
            ok &= same | (np.abs(p - q) <= rtol * np.maximum(np.abs(p), np.abs(q)) + rtol * 1e-2)
    return bool(ok.all())


def _same(kind: str, a: Any, b: Any) -> bool:
    if kind == "exact" or isinstance(a, str) or isinstance(b, str):
        return _bits_equal(a, b)
    return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))


# ---- the sweep itself: run once, checked per primitive ----

_BATCH = 96  # cases per upper-tier module


class _Sweep:
    def __init__(self):
        self.results: dict[str, list[tuple[np.dtype, Case, dict[str, Any]]]] = {}
        self.errors: dict[str, str] = {}
        self.prims = prims = _registry()
        pending = []
        for name, prim in prims.items():
            spec = _spec(prim)
            if spec is None or spec.kind == "excluded":
                continue
            try:
                cases = _cases(prim, spec)
            except Exception as e:  # noqa: BLE001  (a broken spec fails its primitive's test)
                self.errors[name] = f"making its cases raised {type(e).__name__}: {e}"
                continue
            rows = []
            for dt, case in cases:
                r = {"eager": _attempt(_run_eager, prim, case),
                     "base": _attempt(_run_jit, prim, case, "0")}
                rows.append((dt, case, r))
                if not isinstance(r["base"], str):
                    pending.append((prim, case, r))
                else:
                    r["upper"] = _attempt(_run_jit, prim, case, "1")
            self.results[name] = rows
        for i in range(0, len(pending), _BATCH):
            batch = pending[i:i + _BATCH]
            try:
                outs = _run_upper_batch([(p, c) for p, c, _ in batch])
            except Exception:  # noqa: BLE001  (then case by case, to name the culprit)
                outs = [_attempt(_run_jit, p, c, "1") for p, c, _ in batch]
            for (_, _, r), o in zip(batch, outs):
                r["upper"] = o


_sweep: _Sweep | None = None


@pytest.fixture(scope="module")
def sweep():
    global _sweep
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        if _sweep is None:
            _sweep = _Sweep()
        yield _sweep
    finally:
        jax.config.update("jax_enable_x64", prev)


def _describe(dt: np.dtype, case: Case) -> str:
    shapes = ",".join(str(np.shape(a)) for a in case.args)
    params = {k: v for k, v in case.params.items() if v is not None}
    return f"{dt.name} {case.layout} {shapes} {params}"


def _first_difference(a: Any, b: Any, case: Case) -> str:
    if isinstance(a, str) or isinstance(b, str):
        return f"{a!r} vs {b!r}"
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        flat_x, flat_y = dom.canonical_nans(x).reshape(-1), dom.canonical_nans(y).reshape(-1)
        diff = [i for i in range(flat_x.size) if flat_x[i:i + 1].tobytes() != flat_y[i:i + 1].tobytes()]
        if diff:
            i = diff[0]
            return f"{len(diff)} elements differ; first [{i}]: {flat_x[i]!r} vs {flat_y[i]!r}{_inputs_at(case, x.shape, i)}"
    return "different number of outputs"


def _inputs_at(case: Case, shape: tuple[int, ...], i: int) -> str:
    """The operands of flat element ``i`` when the case maps them one to one."""
    if case.layout != "flat" or any(np.shape(a) != shape for a in case.args):
        return ""
    return " at input " + ", ".join(repr(np.asarray(a).reshape(-1)[i]) for a in case.args)


def _names():
    return list(_registry())


@pytest.mark.parametrize("name", _names())
def test_primitive(name, sweep):
    prim = sweep.prims[name]
    spec = _spec(prim)
    assert spec is not None, (
        f"{name}: no input domain; give it an entry in tests/primitive_domains.SPECS")
    if spec.kind == "excluded":
        assert spec.reason
        return
    assert name not in sweep.errors, sweep.errors.get(name)
    rows = sweep.results[name]
    assert rows, f"{name}: accepts none of the swept dtypes (check its SPECS entry)"
    problems = []
    for dt, case, r in rows:
        want = _jit_reference(prim, case, r["eager"])
        for other in ("base", "upper"):
            if not _same(spec.kind, want, r[other]):
                problems.append(f"eager != {other} for {_describe(dt, case)}: "
                                f"{_first_difference(want, r[other], case)}")
        ref = reference(name, case)
        if ref is not None and not isinstance(r["eager"], str):
            if not all(_close(x, y, rtol) for x, (y, rtol) in zip(r["eager"], ref)):
                problems.append(f"eager != numpy for {_describe(dt, case)}: "
                                f"{_reference_difference(r['eager'], ref, case)}")
    assert not problems, f"{name}: {len(problems)} disagreements\n" + "\n".join(problems[:12])


def test_every_cpp_op_is_reached(sweep):
    """Every C++ op kind and elementwise code appears in a graph the sweep ran."""
    # unary, binary, reduce, reduce_window, select_and_*_add, scatter and cumulative print as
    # their op codes; an iota has no inputs, so the graph folds it to a constant (its kernel
    # runs on the eager path).
    selects = ("select_and_gather_add", "select_and_scatter_add")
    # mpi_collective runs only between MPI processes (tests/test_distributed.py).
    kinds = set(_core.OP_KINDS) - {"parameter", "constant", "unary", "binary", "reduce",
                                   "scatter", "cumulative", "iota", "reduce_window", *selects,
                                   "mpi_collective"}
    names = (kinds | set(_core.UNARY_OPS) | set(_core.BINARY_OPS) |
             {"reduce_" + r.rstrip("_") for r in _core.REDUCE_OPS} |
             {"reduce_window_" + r for r in ("sum", "max", "min")} |
             {f"{s}_{r}" for s in selects for r in ("max", "min")})
    seen = {n.rstrip("_") for n in _graph_ops}
    missing = sorted(n for n in names if n.rstrip("_") not in seen)
    assert not missing, f"C++ ops no swept graph reached: {missing}"


# ---- numpy references ----

def _np_layout(layout: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    if layout == "strided":
        return [a[::2] for a in args]
    if layout == "transposed":
        return [a.T for a in args]
    if layout == "broadcast":
        return [args[0]] + [np.broadcast_to(a, args[0].shape) for a in args[1:]]
    return list(args)


def _daz(a: np.ndarray) -> np.ndarray:
    """Denormal operands read as zero (float32, float64, bfloat16 and complex parts)."""
    if a.dtype.kind == "c":
        out = np.empty_like(a)
        out.real, out.imag = _daz(a.real.copy()), _daz(a.imag.copy())
        return out
    if a.dtype == dom.BF16:
        return _daz(a.astype(np.float32)).astype(dom.BF16)
    if a.dtype.kind != "f" or a.dtype == np.float16:
        return a
    tiny = ml_dtypes.finfo(a.dtype).smallest_normal
    return np.where(np.abs(a) < tiny, np.copysign(np.zeros_like(a), a), a)


def _wide(a: np.ndarray) -> np.ndarray:
    """Low-precision floats are computed in float32, as the kernels do."""
    return a.astype(np.float32) if a.dtype in (np.float16, dom.BF16) else a


_EXACT = 0.0
_UNARY_REF = {
    "neg": (np.negative, _EXACT), "abs": (np.abs, None), "floor": (np.floor, _EXACT),
    "ceil": (np.ceil, _EXACT), "sqrt": (np.sqrt, None), "exp": (np.exp, None),
    "log": (np.log, None), "sin": (np.sin, None), "cos": (np.cos, None),
    "tanh": (np.tanh, None), "is_finite": (np.isfinite, _EXACT), "real": (np.real, _EXACT),
    "imag": (np.imag, _EXACT), "square": (np.square, None), "not": (np.invert, _EXACT),
    "copy": (np.copy, _EXACT), "stop_gradient": (np.copy, _EXACT),
}
_FLOAT_UNARY_REF = {  # real floats only: complex special values follow Annex G
    "exp2": np.exp2, "log1p": np.log1p, "expm1": np.expm1, "tan": np.tan, "asin": np.arcsin,
    "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "cbrt": np.cbrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "logistic": lambda x: 1 / (1 + np.exp(-x)),
    "sign": np.sign, "cpp_unary_exp2": np.exp2, "cpp_unary_log2": np.log2,
    "cpp_unary_log10": np.log10, "cpp_unary_isnan": np.isnan, "cpp_unary_isinf": np.isinf,
    "cpp_unary_signbit": np.signbit, "cpp_unary_reciprocal": lambda x: 1 / x,
}
_FLOAT_BINARY_REF = {
    "div": np.divide, "rem": np.fmod, "atan2": np.arctan2, "pow": np.power,
    "cpp_binary_copysign": np.copysign, "cpp_binary_hypot": np.hypot,
    "cpp_binary_logaddexp": np.logaddexp, "cpp_binary_floor_div": np.floor_divide,
    "cpp_binary_floor_mod": np.mod,
}


def _int_div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """lax.div of integers (XLA): truncating; x / 0 is -1 (all ones), MIN / -1 is MIN."""
    safe = np.where(y == 0, 1, y)
    q = np.abs(x.astype(object)) // np.abs(safe.astype(object))
    q = np.where((x < 0) != (safe < 0), -q, q)
    q = np.where(y == 0, -1, q)
    return _wrap_to(q, x.dtype)


def _wrap_to(v: Any, dt: np.dtype) -> np.ndarray:
    """Python integers wrapped modulo 2^bits into ``dt``."""
    bits = 8 * dt.itemsize
    flat = np.array([int(a) % (1 << bits) for a in np.asarray(v, dtype=object).reshape(-1)],
                    dtype=np.uint64)
    return flat.astype(np.dtype(f"u{dt.itemsize}")).view(dt).reshape(np.shape(v))


def _int_rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """lax.rem of integers: the sign of x; x % 0 is x."""
    q = _int_div(x, np.where(y == 0, 1, y)).astype(object)
    r = x.astype(object) - q * np.where(y == 0, 1, y).astype(object)
    return _wrap_to(np.where(y == 0, x.astype(object), r), x.dtype)


def _shift(kind: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """XLA's shifts: a count outside [0, bits) gives 0, or the sign for arithmetic; an
    arithmetic shift reads the bits as signed, unsigned types included."""
    bits = 8 * x.dtype.itemsize
    signed = [int(v) for v in x.reshape(-1).view(np.dtype(f"i{x.dtype.itemsize}"))]
    out = []
    for s, n in zip(signed, (int(v) for v in y.reshape(-1))):
        a = s % (1 << bits)
        if not 0 <= n < bits:
            out.append(-1 if kind == "shift_right_arithmetic" and s < 0 else 0)
        elif kind == "shift_left":
            out.append(a << n)
        elif kind == "shift_right_logical":
            out.append(a >> n)
        else:
            out.append(s >> n)
    return _wrap_to(np.array(out, dtype=object).reshape(x.shape), x.dtype)


_INT_BINARY_REF = {
    "div": _int_div, "rem": _int_rem,
    **{k: (lambda k: lambda x, y: _shift(k, x, y))(k)
       for k in ("shift_left", "shift_right_logical", "shift_right_arithmetic")},
}
_INT_UNARY_REF = {
    "population_count": lambda x: _wrap_to(np.array(
        [bin(int(a) % (1 << 8 * x.dtype.itemsize)).count("1") for a in x.reshape(-1)],
        dtype=object).reshape(x.shape), x.dtype),
    "clz": lambda x: _wrap_to(np.array(
        [8 * x.dtype.itemsize - (int(a) % (1 << 8 * x.dtype.itemsize)).bit_length()
         for a in x.reshape(-1)], dtype=object).reshape(x.shape), x.dtype),
}

_BINARY_REF = {
    "add": (np.add, None), "sub": (np.subtract, None), "mul": (np.multiply, None),
    "eq": (np.equal, _EXACT), "ne": (np.not_equal, _EXACT), "lt": (np.less, _EXACT),
    "le": (np.less_equal, _EXACT), "gt": (np.greater, _EXACT), "ge": (np.greater_equal, _EXACT),
    "and": (np.bitwise_and, _EXACT), "or": (np.bitwise_or, _EXACT),
    "xor": (np.bitwise_xor, _EXACT), "max": (np.maximum, _EXACT),
    "min": (np.minimum, _EXACT),
}


def reference(name: str, case: Case) -> list[tuple[np.ndarray, float | None]] | None:
    """numpy's answer with JAX's rules, and its tolerance (None: the dtype's rounding)."""
    args = _np_layout(case.layout, case.args)
    if name in _UNARY_REF or name in _BINARY_REF:
        fn, tol = _UNARY_REF.get(name) or _BINARY_REF[name]
        dt = args[0].dtype
        if dt.kind in "iu" and name in ("abs", "neg", "square", "add", "sub", "mul"):
            return None  # wrapping: covered by the cross-path check
        if dt.kind == "c" and name in ("max", "min", "lt", "le", "gt", "ge", "sqrt", "exp",
                                       "log", "sin", "cos", "tanh", "square", "mul"):
            return None  # complex special values: Annex G, not numpy's
        with np.errstate(all="ignore"):
            out = np.asarray(fn(*[_wide(_daz(a)) for a in args]))
            if out.dtype != np.bool_ and out.dtype.kind in "fc" and dt.kind in "fcV":
                real_result = name in ("real", "imag", "abs") and dt.kind == "c"
                out = _daz(out.astype(ml_dtypes.finfo(dt).dtype if real_result else dt))
        return [(out, tol)]
    dt0 = args[0].dtype if args else None
    table = (_FLOAT_UNARY_REF if len(args) == 1 else _FLOAT_BINARY_REF) if dom.is_float(dt0) \
        else (_INT_UNARY_REF if len(args) == 1 else _INT_BINARY_REF) if dom.is_int(dt0) else {}
    if name in table:
        with np.errstate(all="ignore"):
            if dom.is_float(dt0):
                out = np.asarray(table[name](*[_wide(_daz(a)) for a in args]))
                out = out if out.dtype == np.bool_ else _daz(out.astype(dt0))
            else:
                out = table[name](*args)
        return [(out, None if dom.is_float(dt0) else _EXACT)]
    if name == "cpp_gather_wrap_negative":
        x, i = args
        n = x.shape[0]
        rows = np.clip(np.where(i[:, 0] < 0, i[:, 0].astype(np.int64) + n, i[:, 0]), 0, n - 1)
        return [(x[rows], _EXACT)]
    if name == "cpp_scatter_wrap_negative":
        x, i, u = args
        n = x.shape[0]
        rows = np.where(i[:, 0] < 0, i[:, 0].astype(np.int64) + n, i[:, 0])
        out = x.copy()
        for r, row in zip(rows, u):  # in index order, as the scatter adds duplicates
            if 0 <= r < n:
                out[r] = out[r] + row
        return [(out, None if dom.is_float(x.dtype) else _EXACT)]
    if name == "convert_element_type":
        to = case.params["new_dtype"]
        (x,) = args
        if x.dtype.kind == "c" and to.kind != "c":
            x = np.real(x)
        if x.dtype.kind in "fV" and to.kind in "iu":
            return None  # saturation and NaN: pinned in test_element_semantics.py
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if to == np.bool_:
                out = _daz(x) != 0 if x.dtype != dom.BF16 else x.astype(np.float32) != 0
            else:
                out = _daz(x).astype(to)
        return [(out, _EXACT)]
    if name in ("transpose", "rev", "reshape", "slice", "concatenate", "broadcast_in_dim"):
        x = args[0]
        p = case.params
        if name == "transpose":
            out = x.transpose(p["permutation"])
        elif name == "rev":
            out = np.flip(x, p["dimensions"])
        elif name == "reshape":
            out = x.reshape(p["new_sizes"])
        elif name == "slice":
            out = x[tuple(slice(s, e, st) for s, e, st in
                          zip(p["start_indices"], p["limit_indices"], p["strides"]))]
        elif name == "concatenate":
            out = np.concatenate(args, p["dimension"])
        else:
            out = np.broadcast_to(x, p["shape"])
        return [(out, _EXACT)]
    if name in ("reduce_max", "reduce_min", "reduce_and", "reduce_or") and args[0].size:
        x = args[0]
        if x.dtype.kind == "c":
            return None
        fn = {"reduce_max": np.max, "reduce_min": np.min, "reduce_and": np.bitwise_and.reduce,
              "reduce_or": np.bitwise_or.reduce}[name]
        with np.errstate(all="ignore"):
            out = fn(_wide(_daz(x)), axis=case.params["axes"]).astype(x.dtype)
        return [(np.asarray(out), _EXACT if name != "reduce_max" or x.dtype.kind != "f" else _EXACT)]
    return None


def _reference_difference(got: Sequence[np.ndarray], ref, case: Case) -> str:
    for x, (y, _) in zip(got, ref):
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{x.dtype}{x.shape} vs numpy {y.dtype}{y.shape}"
        fx, fy = x.reshape(-1), y.reshape(-1)
        for i in range(fx.size):
            if not _close(fx[i:i + 1], fy[i:i + 1], _RTOL.get(x.dtype.name, 0.0)):
                return f"[{i}]: {fx[i]!r} vs numpy {fy[i]!r}{_inputs_at(case, x.shape, i)}"
    return "?"
