"""``conv_general_dilated`` and its wrappers (``conv``, ``conv_with_general_padding``,
``conv_transpose``), with ``ConvDimensionNumbers``, ``conv_dimension_numbers`` and
``padtype_to_pads``.

Mirrors ``jax._src.lax.convolution``: one primitive with its abstract eval, impl, lowering,
JVP (bilinear), transposes with respect to the input and the kernel, and batching rule
side by side. The C++ ``conv`` op computes in one layout, channels last (lhs ``[N, S...,
C]``, rhs ``[S..., I, O]``, result ``[N, S..., O]``); the emitter transposes the user's
dimension numbers into it and back, so any layout runs on the same kernel.
"""
from __future__ import annotations

import enum
import operator
from typing import Any, NamedTuple, Sequence, Union

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.array import _CODE, _DTYPES, Array
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_emitter
from tinyxla._src.lax.conversion import convert_element_type
from tinyxla._src.lax.dot import canonicalize_precision
from tinyxla._src.lax.eager import EAGER, _colocated, _operand, _reject, _result
from tinyxla._src.lax.shape_ops import full, reshape, rev
from tinyxla._src.lax.type_rules import _check_same_dtypes, _weak


class ConvDimensionNumbers(NamedTuple):
    """Describes batch, spatial, and feature dimensions of a convolution
    (``jax.lax.ConvDimensionNumbers``).

    ``lhs_spec`` and ``out_spec`` are ``(batch dim, feature dim, spatial dims...)``;
    ``rhs_spec`` is ``(out feature dim, in feature dim, spatial dims...)``.
    """
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]


class PaddingType(enum.Enum):
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def _dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> tuple[int, ...]:
    """``jax._src.lax.lax._dilate_shape``: each size after inserting dilation-1 holes."""
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(d if r == 1 else max(1 + r * (d - 1), 0) for d, r in zip(shape, dilation))


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str | PaddingType
                    ) -> list[tuple[int, int]]:
    """``jax.lax.padtype_to_pads``: the (low, high) pads of 'VALID', 'SAME' (odd extra
    at the end) or 'SAME_LOWER' (odd extra at the start)."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError as err:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from err
    if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
        pads = []
        for d, w, s in zip(in_shape, window_shape, window_strides):
            out = -(-int(d) // int(s))
            size = max((out - 1) * int(s) + int(w) - int(d), 0)
            small, big = size // 2, size - size // 2
            pads.append((small, big) if padding == PaddingType.SAME else (big, small))
        return pads
    if padding == PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    raise TypeError(f"Unknown padding type: {padding}.")


def conv_general_permutations(dimension_numbers: tuple[str, str, str]
                              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The (lhs, rhs, out) specs of string dimension numbers; spatial dims ordered as
    they appear in the rhs spec."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    charpairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(charpairs):
        if not dimension_numbers[i].count(a) == dimension_numbers[i].count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {dimension_numbers[i]}.")
        if len(dimension_numbers[i]) != len(set(dimension_numbers[i])):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {dimension_numbers[i]}.")
    if not (set(lhs_spec) - set(charpairs[0]) == set(rhs_spec) - set(charpairs[1])
            == set(out_spec) - set(charpairs[2])):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {dimension_numbers}.")

    def getperm(spec: str, charpair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in charpair]
        if spec is not rhs_spec:
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(charpair[0]), spec.index(charpair[1])) + tuple(spatial)

    lhs_perm, rhs_perm, out_perm = map(getperm, dimension_numbers, charpairs)
    return lhs_perm, rhs_perm, out_perm


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: ConvGeneralDilatedDimensionNumbers
                           ) -> ConvDimensionNumbers:
    """``jax.lax.conv_dimension_numbers``: ``dimension_numbers`` (None, strings or
    ``ConvDimensionNumbers``) as a ``ConvDimensionNumbers``."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(elt, str) for elt in dimension_numbers):
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}.")
        for i, elt in enumerate(dimension_numbers):
            if len(elt) != len(lhs_shape):
                raise TypeError(
                    f"convolution dimension_numbers[{i}] must have len equal to the ndim of "
                    f"lhs and rhs, got {len(elt)} for lhs and rhs shapes {tuple(lhs_shape)} "
                    f"and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(tuple(dimension_numbers)))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The result shape of a conv with operands in canonical (N, C, spatial) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(max((p - k) // s + 1, 0) for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (batch, rhs_shape[0]) + space


# ---- the primitive ----

def _conv_abstract_eval(lhs: Any, rhs: Any, *, window_strides: Sequence[int], padding: Any,
                        lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any = None,
                        preferred_element_type: Any = None) -> ShapedArray:
    """JAX's shape rule (its checks and messages, in its order) and dtype rule."""
    dn = dimension_numbers
    if len(lhs.shape) != len(rhs.shape):
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}.")
    lhs_features = lhs.shape[dn.lhs_spec[1]]
    quot, rem = divmod(lhs_features, feature_group_count)
    if rem:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{lhs_features}.")
    if quot != rhs.shape[dn.rhs_spec[1]]:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {lhs_features} // {feature_group_count} != "
                         f"{rhs.shape[dn.rhs_spec[1]]}.")
    out_features = rhs.shape[dn.rhs_spec[0]]
    if out_features % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {out_features} is not a "
                         f"multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive "
                         f"integer, got {batch_group_count}.")
    lhs_batch = lhs.shape[dn.lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch % batch_group_count != 0:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide "
                         f"{lhs_batch}.")
    if out_features % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {out_features} is not a "
                         f"multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > "
                         f"1, got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")
    if len(dn.rhs_spec) - 2 != len(window_strides):
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {len(dn.rhs_spec) - 2} and "
                         f"{len(window_strides)}")
    lhs_trans = _dilate_shape(np.take(lhs.shape, dn.lhs_spec), lhs_dilation)
    rhs_trans = _dilate_shape(np.take(rhs.shape, dn.rhs_spec), rhs_dilation)
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding,
                                 batch_group_count)
    shape = tuple(int(d) for d in np.take(out_trans, np.argsort(dn.out_spec)))
    _check_same_dtypes("conv_general_dilated", lhs, rhs)
    dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    return ShapedArray(shape, dtype, weak_type=_weak(lhs, rhs))


def _canonical_perms(dn: ConvDimensionNumbers) -> tuple[list[int], list[int], list[int]]:
    """The transposes into the C++ op's layout (lhs, rhs) and out of it (result)."""
    nsp = len(dn.lhs_spec) - 2
    lhs_perm = [dn.lhs_spec[0], *dn.lhs_spec[2:], dn.lhs_spec[1]]
    rhs_perm = [*dn.rhs_spec[2:], dn.rhs_spec[1], dn.rhs_spec[0]]
    out_perm = [0] * (nsp + 2)
    out_perm[dn.out_spec[0]] = 0
    out_perm[dn.out_spec[1]] = nsp + 1
    for i, d in enumerate(dn.out_spec[2:]):
        out_perm[d] = i + 1
    return lhs_perm, rhs_perm, out_perm


def _maybe_transpose(ops: Any, x: Any, perm: list[int]) -> Any:
    return x if perm == sorted(perm) else ops.transpose(x, perm)


def _conv_emit(ops: Any, lhs: Any, rhs: Any, *, window_strides: Sequence[int], padding: Any,
               lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
               dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
               batch_group_count: int, precision: Any = None,
               preferred_element_type: Any = None) -> Any:
    lhs_perm, rhs_perm, out_perm = _canonical_perms(dimension_numbers)
    attrs = {
        "window_strides": [int(s) for s in window_strides],
        "padding_lo": [int(lo) for lo, _ in padding],
        "padding_hi": [int(hi) for _, hi in padding],
        "lhs_dilation": [int(d) for d in lhs_dilation],
        "rhs_dilation": [int(d) for d in rhs_dilation],
        "feature_group_count": int(feature_group_count),
        "batch_group_count": int(batch_group_count),
        "preferred_element_type": (-1 if preferred_element_type is None
                                   else _CODE[np.dtype(preferred_element_type)]),
    }
    out = ops.op("conv", attrs, [_maybe_transpose(ops, lhs, lhs_perm),
                                 _maybe_transpose(ops, rhs, rhs_perm)])
    return _maybe_transpose(ops, out, out_perm)


def _conv_impl(lhs: Any, rhs: Any, **params: Any) -> Array:
    x = lhs if type(lhs) is Array else _operand(conv_general_dilated_p, 0, lhs)
    y = rhs if type(rhs) is Array else _operand(conv_general_dilated_p, 1, rhs)
    aval = _conv_abstract_eval(x.aval, y.aval, **params)
    try:
        out = _conv_emit(EAGER, x._h, y._h, **params)
    except (TypeError, ValueError) as e:
        moved = _colocated(conv_general_dilated_p, (x, y))
        if moved is not None:
            return _conv_impl(*moved, **params)
        _reject(conv_general_dilated_p, (x, y), params, e)
        raise
    return _result(out, aval.weak_type, _DTYPES[_CODE[np.dtype(aval.dtype)]], (x, y))


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.def_abstract_eval(_conv_abstract_eval)
conv_general_dilated_p.def_impl(_conv_impl)
register_emitter(conv_general_dilated_p, _conv_emit)


def _conv_spec_transpose(spec: Sequence[int]) -> tuple[int, ...]:
    return (spec[1], spec[0]) + tuple(spec[2:])


def _conv_general_vjp_lhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                                  window_strides: Sequence[int], out_shape: Sequence[int],
                                  padding: Sequence[tuple[int, int]],
                                  lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]
                                  ) -> list[tuple[int, int]]:
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window_dimensions, rhs_dilation)
    out_d = _dilate_shape(out_shape, window_strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding)]
    after = [l + r - 1 - o - b for l, r, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return list(zip(before, after))


def _conv_general_vjp_rhs_padding(in_shape: Sequence[int], window_dimensions: Sequence[int],
                                  window_strides: Sequence[int], out_shape: Sequence[int],
                                  padding: Sequence[tuple[int, int]],
                                  lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]
                                  ) -> list[tuple[int, int]]:
    if len(in_shape) == 0:
        return []
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window_dimensions, rhs_dilation)
    out_d = _dilate_shape(out_shape, window_strides)
    los = [lo for lo, _ in padding]
    his = [o - l + r - lo - 1 for o, l, r, lo in zip(out_d, lhs_d, rhs_d, los)]
    return list(zip(los, his))


def _reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merges axis ``src`` into axis ``dst`` (as the major part)."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    new_shape = list(np.delete(x.shape, src))
    new_shape[dst] *= x.shape[src]
    return reshape(x, tuple(int(d) for d in new_shape), tuple(perm))


def _reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """Splits axis ``src`` into ``(size1, rest)``."""
    shape = list(x.shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return reshape(x, tuple(int(d) for d in shape))


def _conv_transpose_lhs(g: Any, lhs: Any, rhs: Any, *, window_strides: Sequence[int],
                        padding: Any, lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any = None,
                        preferred_element_type: Any = None) -> Any:
    """The input's cotangent: a conv of ``g`` with the spatially reversed kernel, in and
    out features swapped, strides becoming lhs dilation (JAX's rule)."""
    lhs_shape, rhs_shape = lhs.aval.shape, rhs.shape
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_sdims, rhs_sdims, out_sdims = lhs_spec[2:], rhs_spec[2:], out_spec[2:]
    if feature_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = _reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    trans_dn = ConvDimensionNumbers(out_spec, _conv_spec_transpose(rhs_spec), lhs_spec)
    pads = _conv_general_vjp_lhs_padding(
        np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims), window_strides,
        np.take(g.shape, out_sdims), padding, lhs_dilation, rhs_dilation)
    revd = rev(rhs, rhs_sdims)
    if revd.dtype != g.dtype:
        revd = convert_element_type(revd, g.dtype)
    out = conv_general_dilated(g, revd, window_strides=lhs_dilation, padding=pads,
                               lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
                               dimension_numbers=trans_dn,
                               feature_group_count=feature_group_count, batch_group_count=1,
                               precision=precision,
                               preferred_element_type=preferred_element_type)
    if out.dtype != lhs.aval.dtype:
        out = convert_element_type(out, lhs.aval.dtype)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_transpose_rhs(g: Any, lhs: Any, rhs: Any, *, window_strides: Sequence[int],
                        padding: Any, lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
                        dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                        batch_group_count: int, precision: Any = None,
                        preferred_element_type: Any = None) -> Any:
    """The kernel's cotangent: a conv of the input with ``g`` as the kernel, batch and
    feature roles swapped, feature groups becoming batch groups (JAX's rule)."""
    if np.size(g.shape) and int(np.prod(g.shape)) == 0:
        return ad.Zero(rhs.aval)
    lhs_shape, rhs_shape = lhs.shape, rhs.aval.shape
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        feature_group_count, batch_group_count = 1, feature_group_count
    trans_dn = ConvDimensionNumbers(_conv_spec_transpose(lhs_spec),
                                    _conv_spec_transpose(out_spec),
                                    _conv_spec_transpose(rhs_spec))
    pads = _conv_general_vjp_rhs_padding(
        np.take(lhs_shape, lhs_spec[2:]), np.take(rhs_shape, rhs_spec[2:]), window_strides,
        np.take(g.shape, out_spec[2:]), padding, lhs_dilation, rhs_dilation)
    if lhs.dtype != g.dtype:
        lhs = convert_element_type(lhs, g.dtype)
    out = conv_general_dilated(lhs, g, window_strides=rhs_dilation, padding=pads,
                               lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                               dimension_numbers=trans_dn,
                               feature_group_count=feature_group_count,
                               batch_group_count=batch_group_count, precision=precision,
                               preferred_element_type=preferred_element_type)
    if out.dtype != rhs.aval.dtype:
        out = convert_element_type(out, rhs.aval.dtype)
    return out


ad.defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)


def _conv_batch_rule(vals: Sequence[Any], dims: Sequence[int | None], **params: Any
                     ) -> tuple[Any, int]:
    """JAX's rule: a batched input folds into the batch dimension (or the batch groups),
    a batched kernel into the output features (feature groups when both are batched)."""
    lhs, rhs = vals
    lhs_bdim, rhs_bdim = dims
    dn = params["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dn
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    rest = {k: v for k, v in params.items()
            if k not in ("feature_group_count", "batch_group_count")}
    size = lhs.shape[lhs_bdim] if lhs_bdim is not None else rhs.shape[rhs_bdim]
    if size == 0:
        lhs_aval = ShapedArray(tuple(np.delete(lhs.shape, lhs_bdim)) if lhs_bdim is not None
                               else lhs.shape, lhs.dtype)
        rhs_aval = ShapedArray(tuple(np.delete(rhs.shape, rhs_bdim)) if rhs_bdim is not None
                               else rhs.shape, rhs.dtype)
        aval = _conv_abstract_eval(lhs_aval, rhs_aval, **params)
        return full((0,) + aval.shape, 0, aval.dtype), 0
    if lhs_bdim is not None and rhs_bdim is not None:
        if bgc > 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            bgc *= size
        else:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            fgc *= size
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind(new_lhs, new_rhs, feature_group_count=fgc,
                                          batch_group_count=bgc, **rest)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lhs_bdim is not None:
        if bgc == 1:
            new_lhs = _reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
        else:
            new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]), bgc,
                                           lhs)
            new_lhs = _reshape_axis_into(lhs_bdim + int(lhs_spec[0] < lhs_bdim),
                                         lhs_spec[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv_general_dilated_p.bind(new_lhs, rhs, feature_group_count=fgc,
                                          batch_group_count=bgc, **rest)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if fgc == 1 and bgc == 1:
        new_rhs = _reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv_general_dilated_p.bind(lhs, new_rhs, feature_group_count=fgc,
                                          batch_group_count=bgc, **rest)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    groups = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1,
                                 new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv_general_dilated_p.bind(lhs, new_rhs, feature_group_count=fgc,
                                      batch_group_count=bgc, **rest)
    out = _reshape_axis_out_of(out_spec[1], groups, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


batching.primitive_batchers[conv_general_dilated_p] = _conv_batch_rule


# ---- public functions ----

def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                         feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None,
                         out_sharding: Any = None) -> Any:
    """General n-dimensional convolution with dilations (``jax.lax.conv_general_dilated``).

    ``padding`` is 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs; dimension numbers
    default to ('NCHW', 'OIHW', 'NCHW') order. ``precision`` is validated and recorded;
    tinyxla always computes at full precision. ``out_sharding`` must be None.
    """
    if out_sharding is not None:
        raise NotImplementedError("tinyxla's conv_general_dilated takes no out_sharding")
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    if lhs_dilation is None:
        lhs_dilation = (1,) * (len(lhs_shape) - 2)
    elif isinstance(padding, str) and not len(lhs_dilation) == tuple(lhs_dilation).count(1):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. "
            "Please either exactly specify the required padding or use conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * (len(rhs_shape) - 2)
    if isinstance(padding, str):
        kernel = np.take(rhs_shape, dnums.rhs_spec)[2:]
        effective = [0 if k == 0 else 1 + r * (k - 1) for k, r in zip(kernel, rhs_dilation)]
        padding = padtype_to_pads(np.take(lhs_shape, dnums.lhs_spec)[2:], effective,
                                  window_strides, padding)
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
    preferred = (None if preferred_element_type is None else
                 dtypes.check_user_dtype_supported(preferred_element_type,
                                                   "conv_general_dilated"))
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dnums)),
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count),
        precision=canonicalize_precision(precision), preferred_element_type=preferred)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jax.lax.conv``: ``conv_general_dilated`` in NCHW/OIHW layout, no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """``jax.lax.conv_with_general_padding``: ``conv_general_dilated`` in NCHW/OIHW
    layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """Before and after padding of one dimension of a transposed convolution."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


_CONV_TRANSPOSE_DEFAULT_DNUMS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                                 4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None,
                   dimension_numbers: ConvGeneralDilatedDimensionNumbers = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """``jax.lax.conv_transpose``: a fractionally strided convolution (strides become
    lhs dilation), TensorFlow's layout by default; ``transpose_kernel`` flips the
    kernel's spatial axes and swaps its feature axes, as Keras' Conv2DTranspose."""
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    assert len(lhs_shape) == len(rhs_shape) and len(lhs_shape) >= 2
    ndims = len(lhs_shape)
    one = (1,) * (ndims - 2)
    if dimension_numbers is None:
        if ndims not in _CONV_TRANSPOSE_DEFAULT_DNUMS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _CONV_TRANSPOSE_DEFAULT_DNUMS[ndims]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    k_sdims = np.take(rhs_shape, dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
        effective = [0 if k == 0 else 1 + r * (k - 1) for k, r in zip(k_sdims, rhs_dilation)]
        replicated = [padding] * len(strides) if isinstance(padding, str) else padding
        pads: Any = tuple(_conv_transpose_padding(int(k), int(s), p)
                          for k, s, p in zip(effective, strides, replicated))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(int(d) for d in dn.rhs_spec[2:]))
        perm = list(range(ndims))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = rhs.transpose(perm)
    return conv_general_dilated(lhs, rhs, one, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of ``conv_general_dilated`` without dilation (JAX's helper)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                           window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The result shape of ``conv_transpose`` (JAX's helper)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_trans, rhs_trans = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(int(k), int(s), padding)
                   for k, s in zip(rhs_trans[2:], window_strides)]
    pad_sums = [int(np.sum(p)) for p in padding]
    space = [(i - 1) * s - k + 2 + p
             for i, k, s, p in zip(lhs_trans[2:], rhs_trans[2:], window_strides, pad_sums)]
    out = (lhs_trans[0], rhs_trans[0]) + tuple(space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))
