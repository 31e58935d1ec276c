"""Input domains of the lax primitives for the primitive sweep (test_primitive_sweep.py).

The sweep derives a primitive's inputs from its abstract signature: an abstract-eval rule
``(x, **params)`` is an elementwise unary op, ``(*avals, **params)`` a binary one, and the
dtypes it accepts are those its abstract-eval rule does not reject. ``SPECS`` below holds
the primitives that need more (parameters, operands of several dtypes, shapes of their
own); a registered primitive that is neither in it nor fits a default makes the sweep fail.
Everything here is deterministic: values come from fixed pools and seeded generators.
"""
from __future__ import annotations

import dataclasses
import zlib
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

import tinyxla as jax
from tinyxla import lax, make_jaxpr
from tinyxla._src import core
from tinyxla._src.callback import HostFunction
from tinyxla._src.lax import slicing
from tinyxla.tree_util import tree_structure

ALL_DTYPES = tuple(np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128"))
FLOATS = tuple(d for d in ALL_DTYPES if d.kind == "f" or d.name == "bfloat16")
BF16 = np.dtype("bfloat16")


def is_float(dt: np.dtype) -> bool:
    return dt in FLOATS


def is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def seed_of(*parts: Any) -> int:
    return zlib.crc32(repr(parts).encode())


def _real_pool(dt: np.dtype) -> list[float]:
    """±0, ±1, halves, ±inf, NaN, the smallest normal and denormals, the largest finite."""
    fi = ml_dtypes.finfo(dt)
    den = float(fi.smallest_subnormal) * 3
    return [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.5, 3.0, -7.25, 100.0, 1e-3, float("inf"),
            -float("inf"), float("nan"), float(fi.smallest_normal), den, -den, float(fi.max),
            -float(fi.max)]


def edge_values(dt: np.dtype) -> np.ndarray:
    """The edge values of ``dt``: every special value a kernel may treat on its own."""
    if dt == np.bool_:
        return np.array([False, True])
    if is_int(dt):
        info = np.iinfo(dt)
        vals = [info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, 31, 100, info.max - 1,
                info.max, 1 << (info.bits - 2)]
        return np.array(sorted({v for v in vals if info.min <= v <= info.max}), dtype=dt)
    if is_float(dt):
        return np.array(_real_pool(dt), dtype=np.float64).astype(dt)
    part = ml_dtypes.finfo(np.float32 if dt == np.complex64 else np.float64)
    parts = [0.0, -0.0, 1.0, -1.5, float("inf"), -float("inf"), float("nan"), 1e30,
             float(part.smallest_subnormal) * 3]
    pairs = [complex(a, b) for a in parts for b in parts]
    keep = [p for i, p in enumerate(pairs) if i % 3 == 0 or i < 12]
    out = np.empty(len(keep), dt)
    out.real = [p.real for p in keep]
    out.imag = [p.imag for p in keep]
    return out


def random_values(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if is_int(dt):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
    x = rng.standard_normal(n) * 4
    if dt.kind == "c":
        return (x + 1j * rng.standard_normal(n) * 4).astype(dt)
    return x.astype(dt)


def value_columns(dt: np.dtype, arity: int, seed: int) -> list[np.ndarray]:
    """``arity`` columns whose rows are all pairs of edge values (a sample of them for three
    operands) plus random rows; an odd number of rows."""
    pool = edge_values(dt)
    if arity == 1:
        cols = [pool]
    elif arity == 2:
        a, b = np.meshgrid(pool, pool, indexing="ij")
        cols = [a.reshape(-1), b.reshape(-1)]
    else:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(pool), (arity, 3 * len(pool)))
        cols = [pool[i] for i in idx]
    extra = 13 if (len(cols[0]) + 13) % 2 else 14
    return [np.concatenate([c, random_values(dt, extra, seed + k)]) for k, c in enumerate(cols)]


def canonical_nans(x: np.ndarray) -> np.ndarray:
    """x with every NaN (of a real or complex part) replaced by one NaN: results are
    compared bit for bit up to NaN sign and payload, which neither JAX nor C define."""
    if x.dtype.kind == "c":
        out = x.copy()
        out.real, out.imag = canonical_nans(x.real.copy()), canonical_nans(x.imag.copy())
        return out
    if x.dtype.kind != "f" and x.dtype != BF16:
        return x
    return np.where(np.isnan(x), np.array(np.nan, x.dtype), x)


# ---- cases ----

@dataclasses.dataclass
class Case:
    """One call: ``prim.bind(*layout(args), **params)``; ``layout`` names how the operands
    reach the primitive (as given, a strided slice, a transpose or a broadcast), applied
    the same way on every path."""
    args: tuple[np.ndarray, ...]
    params: dict
    layout: str = "flat"
    label: str = ""


LAYOUTS = ("scalar", "empty", "strided", "transposed", "broadcast")


def laid_out(layout: str, cols: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The operands that ``apply_layout`` turns into views over ``cols``' values."""
    if layout == "flat":
        return tuple(cols)
    if layout == "scalar":
        i = len(cols[0]) // 3
        return tuple(c[i].copy().reshape(()) for c in cols)
    if layout == "empty":
        return tuple(c[:0].reshape(2, 0) for c in cols)
    if layout == "strided":  # the values at even positions of a longer array
        return tuple(np.stack([c, c[::-1]], 1).reshape(-1) for c in cols)
    if layout == "transposed":
        n = len(cols[0]) - len(cols[0]) % 3
        return tuple(c[:n].reshape(n // 3, 3) for c in cols)
    if layout == "broadcast":  # the first operand (3, n), the others (n,) broadcast
        n = min(len(cols[0]), 41)
        return (np.stack([cols[0][:n], cols[0][::-1][:n], cols[0][n:2 * n] if len(cols[0]) >= 2 * n
                          else cols[0][:n]]),) + tuple(c[:n] for c in cols[1:])
    raise ValueError(layout)


def apply_layout(layout: str, args: Sequence[Any]) -> list[Any]:
    """The views of ``layout`` over (traced or concrete) operands."""
    if layout == "strided":
        return [lax.slice(a, (0,), (a.shape[0],), (2,)) for a in args]
    if layout == "transposed":
        return [lax.transpose(a, (1, 0)) for a in args]
    if layout == "broadcast":
        shape = tuple(args[0].shape)
        return [args[0]] + [lax.broadcast_in_dim(a, shape, (1,)) for a in args[1:]]
    return list(args)


def elementwise_cases(name: str, dt: np.dtype, arity: int, params: dict,
                      operand_dtypes: Sequence[np.dtype] | None = None) -> list[Case]:
    """The main case (all edge pairs) and two more layouts chosen by name and dtype."""
    dts = list(operand_dtypes or [dt] * arity)
    seed = seed_of(name, dt.name, sorted(params.items(), key=str))
    cols = value_columns(dt, arity, seed)
    cols = [c if d == dt else _values_of(d, len(c), seed + i) for i, (c, d) in enumerate(zip(cols, dts))]
    cases = [Case(laid_out("flat", cols), params)]
    start = seed % len(LAYOUTS)
    for k in (start, (start + 2) % len(LAYOUTS)):
        layout = LAYOUTS[k]
        cases.append(Case(laid_out(layout, cols), params, layout))
    return cases


def _values_of(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    pool = edge_values(dt)
    return np.resize(np.concatenate([pool, random_values(dt, n, seed)]), n)


# ---- the specs of primitives that do not fit a default ----

@dataclasses.dataclass
class Spec:
    """How the sweep calls a primitive: ``cases(dtype)`` lists its calls for a dtype it
    accepts (dtypes whose probe call the abstract-eval rule rejects are skipped); ``kind``
    picks the comparison: 'exact' bit for bit, 'rounding' within rounding errors (sums,
    products, dot), 'excluded' not swept (``reason`` names where it is tested)."""
    cases: Callable[[np.dtype], list[Case]] | None = None
    kind: str = "exact"
    reason: str = ""
    probe: Callable[[np.dtype], Case] | None = None


def _unary(params_of: Callable[[np.dtype], list[dict]]) -> Spec:
    def cases(dt):
        return [c for p in params_of(dt) for c in elementwise_cases("u", dt, 1, p)]
    return Spec(cases)


def _convert_cases(dt: np.dtype) -> list[Case]:
    out = []
    for to in ALL_DTYPES:
        p = dict(new_dtype=to, weak_type=False, sharding=None)
        out += elementwise_cases("convert", dt, 1, p)[: 2 if to.kind == dt.kind else 1]
    return out


def _bitcast_cases(dt: np.dtype) -> list[Case]:
    return [c for to in ALL_DTYPES if to.itemsize == dt.itemsize and to != np.bool_
            for c in elementwise_cases("bitcast", dt, 1, dict(new_dtype=to))[:1]]


def _select_cases(dt: np.dtype) -> list[Case]:
    out = []
    for which, ncases in ((np.dtype(bool), 2), (np.dtype(np.int32), 3)):
        cols = value_columns(dt, ncases, seed_of("select", dt.name, ncases))
        n = len(cols[0])
        w = (np.arange(n) % ncases).astype(which)
        w[::7] = w[::7][::-1]
        for layout in ("flat", LAYOUTS[seed_of(dt.name, ncases) % len(LAYOUTS)]):
            out.append(Case(laid_out(layout, [w] + cols), {}, layout))
    return out


def _reduce_cases(name: str, extra: dict | None = None) -> Callable[[np.dtype], list[Case]]:
    def cases(dt):
        cols = value_columns(dt, 1, seed_of(name, dt.name))[0]
        n = len(cols) - len(cols) % 5
        x = cols[:n].reshape(5, n // 5)
        empty = np.zeros((0, 3), dt)
        out = [Case((x,), dict(axes=a, **(extra or {}))) for a in ((0,), (1,), (0, 1))]
        out.append(Case((empty,), dict(axes=(0,), **(extra or {}))))
        if not extra:
            for c in out:
                c.params["out_sharding"] = None
        return out
    return cases


def _argminmax_cases(dt: np.dtype) -> list[Case]:
    return [Case(c.args, dict(axes=c.params["axes"], index_dtype=np.dtype(np.int32)))
            for c in _reduce_cases("arg")(dt)[:2]]


def _cumulative_cases(dt: np.dtype) -> list[Case]:
    x = _reduce_cases("cum")(dt)[0].args[0]
    return [Case((x,), dict(axis=a, reverse=r)) for a in (0, 1) for r in (False, True)]


def _shape_op(make: Callable[[np.ndarray], tuple[tuple[np.ndarray, ...], dict]]) -> Spec:
    def cases(dt):
        x = value_columns(dt, 1, seed_of("shape", dt.name))[0]
        n = len(x) - len(x) % 3
        grid = x[:n].reshape(3, n // 3)
        args, params = make(grid)
        return [Case(args, params)]
    return Spec(cases)


def _gather_case(x: np.ndarray) -> tuple[tuple[np.ndarray, ...], dict]:
    idx = np.array([[0], [2], [1], [5], [-1]], np.int32)  # out of bounds: clamped
    dn = slicing.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
    return (x, idx), dict(dimension_numbers=dn, slice_sizes=(1, x.shape[1]),
                          unique_indices=False, indices_are_sorted=False,
                          mode=slicing.GatherScatterMode.CLIP, fill_value=None)


def _wrapped_gather_case(x: np.ndarray) -> tuple[tuple[np.ndarray, ...], dict]:
    # Rows from the end, and out of range either side (clamped after the wrap).
    idx = np.array([[0], [2], [-1], [-3], [3], [-4], [-128]], np.int8)
    return (x, idx), dict(slice_sizes=(1, x.shape[1]))


def _wrapped_scatter_case(x: np.ndarray) -> tuple[tuple[np.ndarray, ...], dict]:
    # Rows from the end, duplicates (2 and -1 are one row), and out of range either side
    # (dropped after the wrap).
    idx = np.array([[0], [2], [-1], [-3], [3], [-4], [-128], [2]], np.int8)
    return (x, idx, np.concatenate([x[::-1], x[1:], x])), {}


def _scatter_spec() -> Spec:
    def cases(dt):
        x = value_columns(dt, 1, seed_of("scatter", dt.name))[0]
        n = len(x) - len(x) % 3
        op = x[:n].reshape(3, n // 3)
        upd = np.stack([x[:n // 3][::-1], x[n // 3:2 * (n // 3)]])
        idx = np.array([[2], [0]], np.int32)
        dn = slicing.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                             scatter_dims_to_operand_dims=(0,))
        return [Case((op, idx, upd), dict(dimension_numbers=dn, indices_are_sorted=False,
                                          unique_indices=False,
                                          mode=slicing.GatherScatterMode.FILL_OR_DROP))]
    return Spec(cases)


def _dot_cases(dt: np.dtype) -> list[Case]:
    rng = np.random.default_rng(seed_of("dot", dt.name))
    a = random_values(dt, 5 * 7, int(rng.integers(1 << 30))).reshape(5, 7)
    b = random_values(dt, 7 * 3, int(rng.integers(1 << 30))).reshape(7, 3)
    return [Case((a, b), dict(dimension_numbers=(((1,), (0,)), ((), ())), precision=None,
                              preferred_element_type=None))]


def _sort_cases(dt: np.dtype) -> list[Case]:
    x = value_columns(dt, 1, seed_of("sort", dt.name))[0]
    n = len(x) - len(x) % 3
    grid = x[:n].reshape(3, n // 3)
    return [Case((grid,), dict(dimension=d, is_stable=True, num_keys=1)) for d in (0, 1)]


_LAPACK = tuple(np.dtype(n) for n in ("float32", "float64", "complex64", "complex128"))


def _eigh_cases(dt: np.dtype) -> list[Case]:
    if dt not in _LAPACK:
        return []
    a = random_values(dt, 16, seed_of("eigh", dt.name)).reshape(4, 4)
    a = a + a.T.conj()
    return [Case((a,), dict(lower=True, sort_eigenvalues=True, subset_by_index=None,
                            algorithm=None))]


def _eig_cases(dt: np.dtype) -> list[Case]:
    if dt not in _LAPACK:
        return []
    a = random_values(dt, 16, seed_of("eig", dt.name)).reshape(4, 4)
    return [Case((a,), dict(compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                            enable_eigvec_derivs=False, implementation=None))]


def _cholesky_cases(dt: np.dtype) -> list[Case]:
    if dt not in _LAPACK:
        return []
    a = random_values(dt, 16, seed_of("cholesky", dt.name)).reshape(4, 4)
    with np.errstate(all="ignore"):
        spd = (a @ a.T.conj() + 4 * np.eye(4)).astype(dt)
    # A positive definite matrix, and one that mostly is not (its lower triangle read).
    return [Case((spd,), {}), Case((a,), {})]


def _fft_cases(dt: np.dtype) -> list[Case]:
    if dt not in _LAPACK:
        return []
    seed = seed_of("fft", dt.name)
    if dt.kind == "f":
        x = random_values(dt, 60, seed).reshape(3, 4, 5)
        return [Case((x,), dict(fft_type=lax.FftType.RFFT, fft_lengths=lengths))
                for lengths in ((5,), (4, 5), (3, 4, 5))]
    x = random_values(dt, 60, seed).reshape(3, 4, 5)
    cases = [Case((x,), dict(fft_type=t, fft_lengths=(4, 5)))
             for t in (lax.FftType.FFT, lax.FftType.IFFT)]
    return cases + [Case((x,), dict(fft_type=lax.FftType.IRFFT, fft_lengths=(4, 8)))]


def _column(dt: np.dtype, name: str) -> np.ndarray:
    return value_columns(dt, 1, seed_of(name, dt.name))[0]


def _control_flow_case(name: str, fun: Callable[..., Any], *args: Any) -> Case:
    """A call of the control-flow primitive ``name`` with the params ``fun`` binds it with
    on ``args``, and ``args`` as its operands."""
    eqn = next(e for e in make_jaxpr(fun)(*args).eqns if e.primitive.name == name)
    return Case(tuple(args), dict(eqn.params))


def _conv_cases(dt: np.dtype) -> list[Case]:
    rng = np.random.default_rng(seed_of("conv", dt.name))
    x = random_values(dt, 2 * 4 * 5 * 4, int(rng.integers(1 << 30))).reshape(2, 4, 5, 4)
    w = random_values(dt, 4 * 2 * 3 * 2, int(rng.integers(1 << 30))).reshape(4, 2, 3, 2)
    nchw = lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    nhwc = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    base = dict(window_strides=(1, 2), padding=((1, 1), (0, 1)), lhs_dilation=(1, 1),
                rhs_dilation=(1, 1), dimension_numbers=nchw, feature_group_count=2,
                batch_group_count=1, precision=None, preferred_element_type=None)
    return [Case((x, w), base),
            Case((x, w[:, :, :2, :]), dict(base, lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                            feature_group_count=1, batch_group_count=2,
                                            padding=((0, -1), (2, 0)))),
            Case((x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)),
                 dict(base, dimension_numbers=nhwc)),
            # 1-D with a kernel longer than the input, padded; an empty batch; 3-D.
            Case((x[:, :, 0, :2], w[:, :, 0, :]), dict(base, window_strides=(1,),
                                                   padding=((2, 1),), lhs_dilation=(1,),
                                                   rhs_dilation=(2,), dimension_numbers=(
                                                       lax.ConvDimensionNumbers(
                                                           (0, 1, 2), (0, 1, 2), (0, 1, 2))))),
            Case((x[:0], w), dict(base, window_strides=(1, 1))),
            Case((x.reshape(2, 4, 5, 2, 2), w[..., None]),
                 dict(base, window_strides=(1, 1, 2), padding=((1, 1), (0, 1), (1, 0)),
                      lhs_dilation=(1, 1, 1), rhs_dilation=(1, 1, 1),
                      dimension_numbers=lax.ConvDimensionNumbers(
                          (0, 1, 2, 3, 4), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4))))]


def _window_cases(dt: np.dtype) -> list[Case]:
    x = random_values(dt, 5 * 6 * 3, seed_of("reduce_window", dt.name)).reshape(5, 6, 3)
    base = dict(window_dimensions=(2, 3, 1), window_strides=(1, 2, 1),
                padding=((1, 0), (0, 1), (0, 0)), base_dilation=(1, 1, 1),
                window_dilation=(1, 1, 1))
    return [Case((x,), base),
            Case((x,), dict(base, base_dilation=(2, 1, 1), window_dilation=(1, 2, 1),
                            padding=((0, -1), (1, 1), (0, 0)))),
            Case((x,), dict(base, window_dimensions=(1, 2, 2), window_strides=(1, 1, 1),
                            padding=((0, 0), (0, 0), (1, 1))))]


def _pool_cases(dt: np.dtype) -> list[Case]:
    """Rows long enough for the kernels' blocked paths (interior windows), and edges."""
    x = random_values(dt, 2 * 7 * 6 * 70, seed_of("pooling", dt.name)).reshape(2, 7, 6, 70)
    pool = dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1),
                padding=((0, 0), (0, 1), (0, 0), (0, 0)), base_dilation=(1, 1, 1, 1),
                window_dilation=(1, 1, 1, 1))
    return [Case((x,), pool), Case((x,), dict(pool, window_dimensions=(1, 3, 3, 1),
                                             padding=((0, 0), (1, 1), (1, 1), (0, 0))))]


def _window_select_cases(scatter: bool) -> Callable[[np.dtype], list[Case]]:
    """select_and_{scatter,gather}_add: values shaped as the windows (scatter) or the
    operand (gather), for each reduce_window geometry, by max and by min."""
    def cases(dt: np.dtype) -> list[Case]:
        out = []
        for op in ("max", "min"):
            for c in _window_cases(dt) + _pool_cases(dt):
                (x,) = c.args
                shape = lax.reduce_window_shape_tuple(x.shape, **c.params) if scatter \
                    else x.shape
                v = random_values(dt, int(np.prod(shape)), seed_of("select", dt.name, shape))
                out.append(Case((v.reshape(shape), x), dict(c.params, op=op)))
        return out
    return cases


def _matrix(dt: np.dtype, name: str, m: int, n: int) -> np.ndarray:
    return random_values(dt, m * n, seed_of(name, dt.name, m, n)).reshape(m, n)


def _lapack_cases(make: Callable[[np.dtype], list[Case]]) -> Spec:
    """A linear algebra primitive's cases, for the four LAPACK dtypes only."""
    return Spec(lambda dt: make(dt) if dt in _LAPACK else [], "rounding")


def _lu_cases(dt: np.dtype) -> list[Case]:
    return [Case((_matrix(dt, "lu", 4, 4),), {}), Case((_matrix(dt, "lu", 3, 5),), {})]


def _triangular_solve_cases(dt: np.dtype) -> list[Case]:
    a = _matrix(dt, "triangular_solve", 4, 4) + 8 * np.eye(4, dtype=dt)
    b = _matrix(dt, "triangular_solve", 4, 3)
    cases = []
    for left_side, lower, transpose_a, conjugate_a, unit_diagonal in (
            (True, True, False, False, False), (False, False, True, True, False),
            (True, False, True, False, True), (False, True, False, True, False)):
        rhs = b if left_side else b.T.copy()
        cases.append(Case((a, rhs), dict(left_side=left_side, lower=lower,
                                         transpose_a=transpose_a, conjugate_a=conjugate_a,
                                         unit_diagonal=unit_diagonal)))
    return cases


def _householder_cases(dt: np.dtype) -> list[Case]:
    a = _matrix(dt, "householder_product", 5, 3)
    taus = _matrix(dt, "householder_product", 1, 3)[0] * 0.1
    return [Case((a, taus), {})]


def _svd_cases(dt: np.dtype) -> list[Case]:
    return [Case((_matrix(dt, "svd", m, n),), dict(full_matrices=full, compute_uv=uv,
                                                    subset_by_index=None, algorithm=None))
            for m, n, full, uv in ((4, 3, True, True), (3, 5, False, True), (4, 4, True, False))]


def _tridiagonal_solve_cases(dt: np.dtype) -> list[Case]:
    dl, d, du = _matrix(dt, "tridiagonal_solve", 3, 5)
    d = d + 10
    return [Case((dl, d, du, _matrix(dt, "tridiagonal_solve", 5, 2)),
                 dict(perturb_singular=False))]


def _eigh_tridiagonal_cases(dt: np.dtype) -> list[Case]:
    if dt.name not in ("float32", "float64"):
        return []
    d, e = (random_values(dt, n, seed_of("eigh_tridiagonal", dt.name, n)) for n in (5, 4))
    tol = np.zeros((), dt)
    return [Case((d, e, tol), dict(compute_vectors=v, lower_index=lo, upper_index=hi))
            for v in (False, True) for lo, hi in ((0, 4), (1, 2))]


def _hermitian(dt: np.dtype, name: str) -> np.ndarray:
    a = _matrix(dt, name, 4, 4)
    return (a + a.T.conj()).astype(dt)


_LINALG_SPECS = {
    "lu": _lapack_cases(_lu_cases),
    "lu_pivots_to_permutation": Spec(lambda dt: [
        Case((np.array([[2, 2, 3], [1, 0, 2]], np.int32),), dict(permutation_size=4))]
        if dt == np.int32 else []),
    "triangular_solve": _lapack_cases(_triangular_solve_cases),
    "geqrf": _lapack_cases(lambda dt: [Case((_matrix(dt, "geqrf", 5, 3),), {}),
                                       Case((_matrix(dt, "geqrf", 2, 4),), {})]),
    "geqp3": _lapack_cases(lambda dt: [Case((_matrix(dt, "geqp3", 4, 3),
                                             np.zeros(3, np.int32)), dict(use_magma=None))]),
    "householder_product": _lapack_cases(_householder_cases),
    "qr": _lapack_cases(lambda dt: [
        Case((_matrix(dt, "qr", m, n),), dict(pivoting=piv, full_matrices=full, use_magma=None))
        for m, n, piv, full in ((4, 3, False, True), (3, 5, True, False), (4, 2, False, False))]),
    "svd": _lapack_cases(_svd_cases),
    "schur": _lapack_cases(lambda dt: [Case((_matrix(dt, "schur", 4, 4),), dict(
        compute_schur_vectors=v, sort_eig_vals=False, select_callable=None))
        for v in (True, False)]),
    "hessenberg": _lapack_cases(lambda dt: [Case((_matrix(dt, "hessenberg", 4, 4),), {})]),
    "tridiagonal": _lapack_cases(lambda dt: [Case((_hermitian(dt, "tridiagonal"),),
                                                  dict(lower=lower)) for lower in (True, False)]),
    "tridiagonal_solve": _lapack_cases(_tridiagonal_solve_cases),
    "eigh_tridiagonal": Spec(_eigh_tridiagonal_cases, "rounding"),
}


def _replicated_sharding() -> Any:
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


def _call_exported_cases(dt: np.dtype) -> list[Case]:
    """A call of an exported function (it reverses its operand) at the edge values."""
    (col,) = value_columns(dt, 1, seed_of("call_exported", dt.name))
    exported = jax.export.export(jax.jit(lambda x: lax.rev(x, (0,))))(
        jax.ShapeDtypeStruct(col.shape, dt))
    return [Case((col,), {"exported": exported})]


def _host_call_cases(name: str, params: dict) -> Callable[[np.dtype], list[Case]]:
    """The host callbacks with a function returning its operand (pure and io callbacks)
    or nothing (debug callbacks), over shapes from a scalar to a matrix."""
    returns = name != "debug_callback"
    fn = HostFunction((lambda x: np.asarray(x)) if returns else (lambda x: None),
                      tree_structure(((0,), {})), name)

    def cases(dt):
        out = []
        for shape in ((), (0,), (7,), (3, 4)):
            x = _values_of(dt, int(np.prod(shape)), seed_of(name, dt.name, shape)).reshape(shape)
            results = {"result_avals": (core.ShapedArray(shape, dt),)} if returns else {}
            out.append(Case((x,), dict(callback=fn, **results, **params)))
        return out
    return cases


_COLLECTIVE = "needs a named axis: tests/test_pmap.py and tests/multidevice"
_CALL = "a call of a sub-jaxpr, lowered by inlining: tests/test_jit.py, test_autodiff.py"

def _normal_or_zero(a: np.ndarray) -> np.ndarray:
    if not is_float(a.dtype) or a.dtype == np.float16:
        return a
    wide = a.astype(np.float64)
    tiny = float(ml_dtypes.finfo(a.dtype).smallest_normal)
    den = (wide != 0) & (np.abs(wide) < tiny)
    return np.where(den, np.copysign(tiny, wide), wide).astype(a.dtype)


def _libm_binary(name: str) -> Spec:
    """XLA:CPU's float pow is the C library's powf/pow, run under FTZ and DAZ: for denormal
    operands its results are the library's own (neither flushed nor IEEE), so denormals are
    left out of the domain; JAX's values for them are pinned in test_xla_transcendentals."""
    def cases(dt):
        return [dataclasses.replace(c, args=tuple(_normal_or_zero(np.asarray(a)) for a in c.args))
                for c in elementwise_cases(name, dt, 2, {})]
    return Spec(cases)


SPECS: dict[str, Spec] = {
    "pure_callback": Spec(_host_call_cases("pure_callback", dict(sharding=None, vmap_method=None))),
    "io_callback": Spec(_host_call_cases("io_callback", dict(sharding=None, ordered=False))),
    "debug_callback": Spec(_host_call_cases("debug_callback", dict(ordered=False,
                                                                    partitioned=False))),
    "convert_element_type": Spec(_convert_cases),
    "bitcast_convert_type": Spec(_bitcast_cases),
    "integer_pow": _unary(lambda dt: [dict(y=y) for y in (0, 1, 2, 3, -2, 5)]),
    "round": _unary(lambda dt: [dict(rounding_method=m) for m in lax.RoundingMethod]),
    "conj": _unary(lambda dt: [dict(input_dtype=dt)]),
    "mul": Spec(lambda dt: elementwise_cases("mul", dt, 2, {})),
    "pow": _libm_binary("pow"),
    "clamp": Spec(lambda dt: elementwise_cases("clamp", dt, 3, {})),
    "select_n": Spec(_select_cases),
    "stop_gradient": Spec(lambda dt: elementwise_cases("stop_gradient", dt, 1, {})),
    "copy": Spec(lambda dt: elementwise_cases("copy", dt, 1, {})),
    # The identity on values; its layouts are tested in tests/test_sharding.py.
    "call_exported": Spec(_call_exported_cases),
    "sharding_constraint": Spec(lambda dt: elementwise_cases(
        "sharding_constraint", dt, 1, {"sharding": _replicated_sharding()})),
    # bool excluded: as in JAX, add_any's abstract eval takes any dtype but its eager impl
    # is lax.add, which refuses bool (only symbolic-zero-free bool tangents could reach it).
    "add_any": Spec(lambda dt: elementwise_cases("add_any", dt, 2, {}) if dt != np.bool_ else []),
    "reduce_sum": Spec(_reduce_cases("sum"), "rounding"),
    "reduce_prod": Spec(_reduce_cases("prod"), "rounding"),
    "reduce_max": Spec(_reduce_cases("max")),
    "reduce_min": Spec(_reduce_cases("min")),
    "reduce_and": Spec(_reduce_cases("and")),
    "reduce_or": Spec(_reduce_cases("or")),
    "reduce_xor": Spec(_reduce_cases("xor")),
    "argmax": Spec(_argminmax_cases),
    "argmin": Spec(_argminmax_cases),
    "cumsum": Spec(_cumulative_cases, "rounding"),
    "cumprod": Spec(_cumulative_cases, "rounding"),
    "cummax": Spec(_cumulative_cases),
    "cummin": Spec(_cumulative_cases),
    "cumlogsumexp": Spec(_cumulative_cases, "rounding"),
    "reshape": _shape_op(lambda x: ((x,), dict(new_sizes=(x.shape[1], 3), dimensions=None,
                                               sharding=None))),
    "transpose": _shape_op(lambda x: ((x,), dict(permutation=(1, 0)))),
    "rev": _shape_op(lambda x: ((x,), dict(dimensions=(1,)))),
    "squeeze": _shape_op(lambda x: ((x[:1],), dict(dimensions=(0,)))),
    "broadcast_in_dim": _shape_op(lambda x: ((x[0],), dict(shape=(2, x.shape[1]),
                                                           broadcast_dimensions=(1,)))),
    "slice": _shape_op(lambda x: ((x,), dict(start_indices=(0, 1), limit_indices=(3, x.shape[1]),
                                             strides=(2, 3)))),
    "pad": _shape_op(lambda x: ((x, x[0, :1].reshape(())),
                                dict(padding_config=((1, 2, 0), (-1, 1, 1))))),
    "concatenate": _shape_op(lambda x: ((x, x[:1]), dict(dimension=0))),
    "dynamic_slice": _shape_op(lambda x: ((x, np.int32(1), np.int32(x.shape[1])),
                                          dict(slice_sizes=(2, 3)))),
    "dynamic_update_slice": _shape_op(lambda x: ((x, x[:1, :2], np.int32(2), np.int32(-1)), {})),
    "gather": _shape_op(_gather_case),
    "cpp_gather_wrap_negative": _shape_op(_wrapped_gather_case),
    "cpp_scatter_wrap_negative": _shape_op(_wrapped_scatter_case),
    "scatter": _scatter_spec(),
    "scatter-add": _scatter_spec(),
    "scatter-mul": _scatter_spec(),
    "scatter-max": _scatter_spec(),
    "scatter-min": _scatter_spec(),
    "sort": Spec(_sort_cases),
    "iota": Spec(lambda dt: [Case((), dict(dtype=dt, shape=(3, 5), dimension=d, sharding=None))
                             for d in (0, 1)],
                 probe=lambda dt: Case((), dict(dtype=dt, shape=(3, 5), dimension=0,
                                                sharding=None))),
    "dot_general": Spec(_dot_cases, "rounding"),
    "eigh": Spec(_eigh_cases, "rounding"),
    "eig": Spec(_eig_cases, "rounding"),
    "cholesky": Spec(_cholesky_cases, "rounding"),
    "fft": Spec(_fft_cases, "rounding"),
    "conv_general_dilated": Spec(_conv_cases, "rounding"),
    "reduce_window_sum": Spec(lambda dt: _window_cases(dt) + _pool_cases(dt), "rounding"),
    "reduce_window_max": Spec(lambda dt: _window_cases(dt) + _pool_cases(dt)),
    "reduce_window_min": Spec(lambda dt: _window_cases(dt) + _pool_cases(dt)),
    "select_and_gather_add": Spec(_window_select_cases(scatter=False)),
    "select_and_scatter_add": Spec(_window_select_cases(scatter=True), "rounding"),
    **_LINALG_SPECS,
    **{name: Spec(kind="excluded", reason=_COLLECTIVE) for name in (
        "psum", "pmax", "pmin", "all_gather", "all_to_all", "ppermute", "reduce_scatter",
        "axis_index", "xla_pmap")},
    **{name: Spec(kind="excluded", reason=_CALL) for name in (
        "jit", "remat2", "custom_jvp_call", "custom_vjp_call", "custom_lin")},
    "while": Spec(lambda dt: [_control_flow_case(
        "while", lambda i, x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, lax.rev(c[1], (0,))),
                                             (i, x)), np.int32(0), _column(dt, "while"))]),
    "scan": Spec(lambda dt: [_control_flow_case(
        "scan", lambda c, xs: lax.scan(lambda c, x: (lax.rev(c, (0,)), lax.rev(x, (0,))), c, xs),
        _column(dt, "scan")[:3], np.resize(_column(dt, "scan xs"), (4, 3)))]),
    "cond": Spec(lambda dt: [_control_flow_case(
        "cond", lambda i, x: lax.switch(i, [lambda x: x, lambda x: lax.rev(x, (0,))], x),
        np.int32(1), _column(dt, "cond"))]),
    "random_gamma": Spec(lambda dt: [
        Case((np.array([0, 42], np.uint32), np.array([0.4, 2.0, 3.7, 9.0], dt)),
             dict(log_space=log_space, partitionable=True)) for log_space in (False, True)]
        if dt in (np.float32, np.float64) else []),
    # Rates and counts on both sides of each sampler's switch (Knuth/rejection, inversion/BTRS).
    "random_poisson": Spec(lambda dt: [
        Case((np.array([0, 42], np.uint32), np.array([0.5, 4.0, 12.0, 30.0], dt)),
             dict(dtype=np.dtype(np.int32), partitionable=p)) for p in (True, False)]
        if dt == np.float32 else []),
    "random_binomial": Spec(lambda dt: [
        Case((np.array([0, 42], np.uint32), np.array([3.0, 40.0, 100.0, 7.0], dt),
              np.array([0.2, 0.5, 0.7, 0.9], dt)), dict(dtype=np.dtype(dt), partitionable=p))
        for p in (True, False)] if dt in (np.float32, np.float64) else []),
    "custom_linear_solve": Spec(kind="excluded", reason="holds the jaxprs of a linear solve, "
                                "lowered by inlining: tests/test_lax_custom_solves.py"),
}
