"""Set operations: unique (with ``axis``), unique_all/counts/inverse/values, isin,
intersect1d, setdiff1d, setxor1d and union1d.

Mirrors ``jax._src.numpy.setops``, all from ``lax.sort`` and gathers: sort, mark where
neighbours differ, take the marked ones. Results whose length depends on the data need
concrete input unless ``size`` is given (then they are padded: by default with the
smallest value, as JAX does). ``isin``'s default method picks, by size, between
comparing all pairs and a binary search in the sorted test elements (JAX's 'auto' always
compares all pairs); for concrete integer test elements spanning a small range the
search is a lookup table, as numpy's. Every method gives the same answer.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from tinyxla._src import core, dtypes
from tinyxla._src.lax import cumulative as lax_cumulative
from tinyxla._src.lax import lax
from tinyxla._src.lax import slicing
from tinyxla._src.lax import sorting as lax_sorting
from tinyxla._src.numpy import promotion
from tinyxla._src.numpy.indexing import take
from tinyxla._src.numpy.promotion import canonicalize_axis, concrete_or_error, ensure_arraylike
from tinyxla._src.numpy.selection import nonzero
from tinyxla._src.numpy.sorting import searchsorted

ArrayLike = Any

UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size.")


def _ravel(x: Any) -> Any:
    return lax.reshape(x, (int(np.prod(x.shape)),)) if x.ndim != 1 else x


def _index_dtype() -> np.dtype:
    return dtypes.default_int_dtype()


def _iota(n: int) -> Any:
    return lax.iota(_index_dtype(), n)


def _boolean_take(x: Any, mask: Any) -> Any:
    """x[mask] along the first axis, for a concrete mask."""
    return take(x, nonzero(mask)[0], axis=0)


def _count_true(mask: Any) -> Any:
    return lax.reduce_sum(lax.convert_element_type(mask, _index_dtype()), (0,))


def _below(n: int, count: Any) -> Any:
    """[i < count for i in range(n)]."""
    return lax.lt(_iota(n), lax.broadcast_in_dim(count, (n,), ()))


def _differs(prev: Any, cur: Any, equal_nan: bool) -> Any:
    out = lax.ne(prev, cur)
    if equal_nan and dtypes.issubdtype(prev.dtype, np.inexact):
        both_nan = lax.bitwise_and(lax.ne(prev, prev), lax.ne(cur, cur))
        out = lax.bitwise_and(out, lax.bitwise_not(both_nan))
    return out


def _unique_sorted_mask(ar: Any, axis: int, equal_nan: bool, need_perm: bool = True
                        ) -> tuple[Any, Any, Any]:
    """The slices along ``axis`` sorted (axis moved first), the mask of first
    occurrences, and the sorting permutation (JAX's ``_unique_sorted_mask``); without
    ``need_perm`` a 1-d input is sorted alone (a key-value sort costs more) and the
    permutation is None."""
    aux = lax.transpose(ar, (axis, *(d for d in range(ar.ndim) if d != axis)))
    if dtypes.issubdtype(aux.dtype, np.complexfloating):
        # A NaN in either part makes the number NaN, as numpy sorts it.
        aux = lax.select_n(lax.ne(aux, aux), aux, lax.full_like(aux, np.nan))
    size, rest = aux.shape[0], aux.shape[1:]
    width = int(np.prod(rest))
    if width == 0:
        size, perm = 1, lax.full((1,), 0, _index_dtype())
    elif aux.ndim == 1 and not need_perm:
        aux, perm = lax_sorting.sort(aux), None
    elif aux.ndim == 1:
        aux, perm = lax_sorting.sort_key_val(aux, _iota(size))
    else:
        # Rows compared lexicographically: the first column is the primary key.
        cols = lax.reshape(aux, (size, width))
        keys = [lax.reshape(lax.slice(cols, (0, j), (size, j + 1)), (size,))
                for j in range(width)]
        perm = lax_sorting.sort((*keys, _iota(size)), dimension=0, num_keys=width)[-1]
    if aux.ndim > 1 or width == 0:
        aux = take(aux, perm, axis=0)
    if int(np.prod(aux.shape)):
        diff = _differs(aux[1:], aux[:-1], equal_nan)
        if aux.ndim > 1:
            diff = lax.reduce_or(diff, tuple(range(1, aux.ndim)))
        mask = lax.concatenate([lax.full((1,), True, np.bool_), diff], 0)
    else:
        mask = lax.full((size,), False, np.bool_)
    return aux, mask, perm


def _unique(ar: Any, axis: int, return_index: bool = False, return_inverse: bool = False,
            return_counts: bool = False, equal_nan: bool = True, size: int | None = None,
            fill_value: ArrayLike | None = None, return_true_size: bool = False) -> Any:
    """``unique`` of the slices along ``axis`` (JAX's ``_unique``)."""
    axis = canonicalize_axis(axis, ar.ndim)
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan, return_index or return_inverse)
    if size is None:
        concrete_or_error(None, mask, "The error arose in jnp.unique(). " + UNIQUE_SIZE_HINT)
        ind = nonzero(mask)[0]
    else:
        ind = nonzero(mask, size=size)[0]
    has_data = bool(int(np.prod(aux.shape)))
    result = take(aux, ind, axis=0) if has_data else aux
    if size is not None and fill_value is not None:
        fill = lax.convert_element_type(promotion.ensure_array(fill_value), result.dtype)
        if result.shape[0]:
            valid = lax.broadcast_in_dim(_below(size, _count_true(mask)), result.shape, (0,))
            result = lax.select(valid, result, lax.broadcast_in_dim(fill, result.shape, ()))
        else:
            result = lax.broadcast_in_dim(fill, (size, *result.shape[1:]), ())
    result = lax.transpose(result, (*range(1, axis + 1), 0, *range(axis + 1, result.ndim)))
    ret: tuple[Any, ...] = (result,)
    if return_index:
        ret += (take(perm, ind) if has_data else perm,)
    if return_inverse:
        if has_data:
            group = lax.sub(lax_cumulative.cumsum(lax.convert_element_type(mask, _index_dtype())),
                            lax.full(mask.shape, 1, _index_dtype()))
            dnums = slicing.ScatterDimensionNumbers((), (0,), (0,))
            inverse = slicing.scatter(lax.full(mask.shape, 0, _index_dtype()),
                                      lax.reshape(perm, (perm.shape[0], 1)), group, dnums,
                                      indices_are_sorted=False, unique_indices=True)
        else:
            inverse = lax.full((ar.shape[axis],), 0, _index_dtype())
        ret += (inverse,)
    if return_counts:
        if has_data:
            n = mask.shape[0]
            if size is None:
                starts = nonzero(mask)[0]
                bounds = lax.concatenate([starts, lax.full((1,), n, starts.dtype)], 0)
            else:
                bounds = nonzero(mask, size=size + 1)[0]
                tail = bounds[1:]
                tail = lax.select(lax.ne(tail, lax.full_like(tail, 0)), tail,
                                  lax.full_like(tail, n))
                bounds = lax.concatenate([bounds[:1], tail], 0)
            ret += (lax.sub(bounds[1:], bounds[:-1]),)
        elif ar.shape[axis]:
            ret += (lax.full((1,), ar.shape[axis], _index_dtype()),)
        else:
            ret += (lax.full((0,), 0, _index_dtype()),)
    if return_true_size:
        ret += (_count_true(mask),)
    return ret[0] if len(ret) == 1 else ret


def unique(ar: ArrayLike, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: ArrayLike | None = None,
           sorted: bool = True) -> Any:  # noqa: A002 - JAX's name
    """Mirrors ``jax.numpy.unique``: the sorted distinct elements (or slices along
    ``axis``), optionally with first indices, the inverse and counts. Without ``size``
    the input must be concrete; with it the result is padded with ``fill_value``
    (default: the smallest value; indices pad with the first one's)."""
    arr = ensure_arraylike("unique", ar)
    if size is None:
        concrete_or_error(None, arr, "The error arose for the first argument of jnp.unique(). "
                  + UNIQUE_SIZE_HINT)
    else:
        size = concrete_or_error(operator.index, size, "The error arose for the size argument of jnp.unique(). "
                              + UNIQUE_SIZE_HINT)
    shape = arr.shape
    if axis is None:
        arr, axis_int = _ravel(arr), 0
    else:
        axis_int = canonicalize_axis(axis, arr.ndim)
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        result = (*result[:i], lax.reshape(result[i], shape), *result[i + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    """The result of ``unique_all``."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    """The result of ``unique_counts``."""
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    """The result of ``unique_inverse``."""
    values: Any
    inverse_indices: Any


def unique_all(x: ArrayLike, /, *, size: int | None = None,
               fill_value: ArrayLike | None = None) -> _UniqueAllResult:
    """Mirrors ``jax.numpy.unique_all`` (NaNs are not merged)."""
    x = ensure_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False, size=size,
                                   fill_value=fill_value))


def unique_counts(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> _UniqueCountsResult:
    """Mirrors ``jax.numpy.unique_counts`` (NaNs are not merged)."""
    x = ensure_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                      fill_value=fill_value))


def unique_inverse(x: ArrayLike, /, *, size: int | None = None,
                   fill_value: ArrayLike | None = None) -> _UniqueInverseResult:
    """Mirrors ``jax.numpy.unique_inverse`` (NaNs are not merged)."""
    x = ensure_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_values(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.unique_values`` (NaNs are not merged)."""
    x = ensure_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# Below this many pairs, comparing all of them beats sorting.
_COMPARE_ALL_PAIRS = 1 << 16


def _in1d(ar1: Any, ar2: Any, invert: bool, method: str, assume_unique: bool) -> Any:
    arr1, arr2 = promotion.promote_dtypes(ar1, ar2)
    arr1, arr2 = _ravel(arr1), _ravel(arr2)
    n1, n2 = arr1.shape[0], arr2.shape[0]
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"{method=} is not implemented; options are "
                         "'compare_all', 'binary_search', 'sort', and 'auto'")
    if n1 == 0 or n2 == 0:
        return lax.full((n1,), invert, np.bool_)
    if method == "auto":
        method = "compare_all" if n1 * n2 <= _COMPARE_ALL_PAIRS else "binary_search"
    if method == "compare_all":
        a = lax.broadcast_in_dim(arr1, (n1, n2), (0,))
        b = lax.broadcast_in_dim(arr2, (n1, n2), (1,))
        if invert:
            return lax.reduce_and(lax.ne(a, b), (1,))
        return lax.reduce_or(lax.eq(a, b), (1,))
    if (method == "binary_search" and not isinstance(arr2, core.Tracer)
            and dtypes.issubdtype(arr1.dtype, np.integer)):
        table = _in1d_table(arr1, arr2, invert)
        if table is not None:
            return table
    # 'sort' answers as 'binary_search' does.
    sorted2 = lax_sorting.sort(arr2)
    found = take(sorted2, searchsorted(sorted2, arr1), mode="clip")
    return lax.ne(arr1, found) if invert else lax.eq(arr1, found)


# The lookup table may be this many times larger than the inputs together.
_TABLE_RATIO = 4


def _in1d_table(arr1: Any, arr2: Any, invert: bool) -> Any:
    """For integers: a table of which values in [min(arr2), max(arr2)] arr2 holds, read at
    each element (numpy's 'table' kind); None when that range is too large."""
    lo, hi = int(lax.reduce_min(arr2, (0,))), int(lax.reduce_max(arr2, (0,)))
    span = hi - lo + 1
    if span > _TABLE_RATIO * (arr1.shape[0] + arr2.shape[0]):
        return None
    # Offsets from lo, computed modulo 2**bits of a 32- or 64-bit int: exact for values
    # inside the (short) range, the only ones read.
    wide = np.dtype(np.int64 if arr1.dtype.itemsize == 8 else np.int32)
    lo_wide = np.asarray(lo, dtype=arr1.dtype).astype(wide)

    def offset(x: Any) -> Any:
        return lax.convert_element_type(lax.sub(lax.convert_element_type(x, wide),
                                                lax.full(x.shape, lo_wide, wide)), np.int32)
    offsets = offset(arr2)
    dnums = slicing.ScatterDimensionNumbers((), (0,), (0,))
    table = slicing.scatter(lax.full((span,), invert, np.bool_),
                            lax.reshape(offsets, (offsets.shape[0], 1)),
                            lax.full(offsets.shape, not invert, np.bool_), dnums)
    # Compared in arr1's own dtype (lo and hi are values of it).
    inside = lax.bitwise_and(lax.ge(arr1, lax.full_like(arr1, lo)),
                             lax.le(arr1, lax.full_like(arr1, hi)))
    found = take(table, offset(arr1), mode="clip")
    return lax.select(inside, found, lax.full(found.shape, invert, np.bool_))


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Any:
    """Mirrors ``jax.numpy.isin``: whether each element is among ``test_elements``.

    ``method='auto'`` compares all pairs for small inputs and binary-searches the sorted
    test elements for large ones; 'sort' is the binary search here.
    """
    element, test_elements = ensure_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert, method, assume_unique)
    return lax.reshape(result, element.shape)


def _fill_tail(vals: Any, count: Any, fill_value: ArrayLike | None) -> Any:
    """vals with the entries from ``count`` on replaced by ``fill_value`` (default: the
    smallest of the valid values, as JAX computes it)."""
    n = vals.shape[0]
    valid = _below(n, count)
    if fill_value is None:
        vals = lax.select(valid, vals, lax.broadcast_in_dim(lax.reduce_max(vals, (0,)), (n,), ()))
        return lax.select(valid, vals, lax.broadcast_in_dim(lax.reduce_min(vals, (0,)), (n,), ()))
    fill = lax.convert_element_type(promotion.ensure_array(fill_value), vals.dtype)
    return lax.select(valid, vals, lax.broadcast_in_dim(fill, (n,), ()))


def _take_filled(x: Any, indices: Any, fill: Any) -> Any:
    return take(x, indices, mode="fill", fill_value=fill)


def _concat_unique(arr1: Any, arr2: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The unique values of arr1, then those of arr2, packed at the front of one array
    of length len(arr1) + len(arr2); with the first indices and the counts of each."""
    u1, i1, c1 = _unique(arr1, 0, return_index=True, size=arr1.shape[0],
                         return_true_size=True, fill_value=0)
    u2, i2, c2 = _unique(arr2, 0, return_index=True, size=arr2.shape[0],
                         return_true_size=True, fill_value=0)
    dt = dtypes.result_type(u1, u2)
    arr = lax.full((u1.shape[0] + u2.shape[0],), 0, dt)
    arr = slicing.dynamic_update_slice(arr, lax.convert_element_type(u1, dt), (0,))
    arr = slicing.dynamic_update_slice(arr, lax.convert_element_type(u2, dt), (c1,))
    return arr, c1, c2, i1, i2


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None,
            fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.union1d``: the sorted unique elements of both."""
    ar1, ar2 = ensure_arraylike("union1d", ar1, ar2)
    if size is None:
        concrete_or_error(None, ar1, "The error arose in union1d()")
        concrete_or_error(None, ar2, "The error arose in union1d()")
    else:
        size = concrete_or_error(operator.index, size, "The error arose in union1d()")
    a, b = promotion.promote_dtypes(_ravel(ar1), _ravel(ar2))
    return unique(lax.concatenate([a, b], 0), size=size, fill_value=fill_value)


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *,
              size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.setdiff1d``: the unique elements of ar1 not in ar2 (padded
    with ``fill_value``, default 0, when ``size`` is given)."""
    arr1, arr2 = ensure_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = _ravel(arr1), _ravel(arr2)
    if size is None:
        concrete_or_error(None, arr1, "The error arose in setdiff1d()")
    else:
        size = concrete_or_error(operator.index, size, "The error arose in setdiff1d()")
    fill = lax.convert_element_type(promotion.ensure_array(0 if fill_value is None
                                                          else fill_value), arr1.dtype)
    if arr1.shape[0] == 0:
        return lax.broadcast_in_dim(fill, (size or 0,), ())
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.shape[0])
    mask = _in1d(arr1, arr2, True, "auto", assume_unique)
    if size is None:
        return _boolean_take(arr1, mask)
    if not assume_unique:
        # Not the padding unique() added (copies of the first value).
        n = arr1.shape[0]
        n_unique = lax.sub(lax.full((), n + 1, _index_dtype()),
                           _count_true(lax.eq(arr1, lax.broadcast_in_dim(arr1[0], (n,), ()))))
        mask = lax.bitwise_and(mask, _below(n, n_unique))
    picked = take(arr1, nonzero(mask, size=size)[0])
    return lax.select(_below(size, _count_true(mask)), picked,
                      lax.broadcast_in_dim(fill, (size,), ()))


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False, *,
             size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.setxor1d``: the sorted elements in exactly one of the two."""
    ar1, ar2 = ensure_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promotion.promote_dtypes(_ravel(ar1), _ravel(ar2))
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique, operator.index(size))
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = lax.concatenate([arr1, arr2], 0)
    if aux.shape[0] == 0:
        return aux
    aux = lax_sorting.sort(aux)
    true1 = lax.full((1,), True, np.bool_)
    flag = lax.concatenate([true1, lax.ne(aux[1:], aux[:-1]), true1], 0)
    return _boolean_take(aux, lax.bitwise_and(flag[1:], flag[:-1]))


def _setxor1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool,
                   size: int) -> Any:
    if assume_unique:
        aux = lax_sorting.sort(lax.concatenate([arr1, arr2], 0))
        edge = lax.full((1,), bool(aux.shape[0]), np.bool_)
        flag = lax.concatenate([edge, lax.ne(aux[1:], aux[:-1]), lax.full((1,), True, np.bool_)],
                               0)
    else:
        arr, c1, c2, _, _ = _concat_unique(arr1, arr2)
        num_unique = lax.add(c1, c2)
        n = arr.shape[0]
        mask = _below(n + 1, lax.add(num_unique, lax.full((), 1, num_unique.dtype)))
        # Padding last, then by value: the padding sorts after the real values.
        aux = lax_sorting.sort((lax.bitwise_not(mask[1:]), arr), dimension=0, num_keys=2)[1]
        edge = lax.full((1,), bool(aux.shape[0]), np.bool_)
        flag = lax.concatenate([edge, lax.ne(aux[1:], aux[:-1]), lax.full((1,), False, np.bool_)],
                               0)
        at_end = lax.eq(_iota(n + 1), lax.broadcast_in_dim(num_unique, (n + 1,), ()))
        flag = lax.bitwise_and(mask, lax.bitwise_or(flag, at_end))
    aux_mask = lax.bitwise_and(flag[1:], flag[:-1])
    count = _count_true(aux_mask)
    if aux.shape[0]:
        indices = nonzero(aux_mask, size=size, fill_value=aux.shape[0])[0]
        vals = _take_filled(aux, indices, 0)
    else:
        vals = lax.full((size,), 0, aux.dtype)
    return _fill_tail(vals, count, fill_value)


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Any:
    """Mirrors ``jax.numpy.intersect1d``: the sorted common elements, optionally with
    their first indices in each input."""
    ar1, ar2 = ensure_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = promotion.promote_dtypes(_ravel(ar1), _ravel(ar2))
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique,
                                 operator.index(size), return_indices)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = lax.concatenate([arr1, arr2], 0)
    if return_indices:
        aux, order = lax_sorting.sort_key_val(arr, _iota(arr.shape[0]))
    else:
        aux, order = lax_sorting.sort(arr), None
    if aux.shape[0] == 0:
        empty = lax.full((0,), 0, _index_dtype())
        return (aux, empty, empty) if return_indices else aux
    mask = lax.eq(aux[1:], aux[:-1])
    found = nonzero(mask)[0]
    common = take(aux, found)
    if not return_indices:
        return common
    idx1 = take(order, found)
    idx2 = lax.sub(take(order, lax.add(found, lax.full_like(found, 1))),
                   lax.full(found.shape, arr1.shape[0], found.dtype))
    if ind1 is not None:
        idx1, idx2 = take(ind1, idx1), take(ind2, idx2)
    return common, idx1, idx2


def _intersect1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool,
                      size: int, return_indices: bool) -> Any:
    n1, n2 = arr1.shape[0], arr2.shape[0]
    if assume_unique:
        ind1, c1 = _iota(n1), lax.full((), n1, _index_dtype())
        ind2 = _iota(n2)
        arr = lax.concatenate([arr1, arr2], 0)
        aux, aux_order = lax_sorting.sort_key_val(arr, _iota(arr.shape[0]))
        mask = lax.full((arr.shape[0],), True, np.bool_)
    else:
        arr, c1, c2, ind1, ind2 = _concat_unique(arr1, arr2)
        n = arr.shape[0]
        mask = _below(n, lax.add(c1, c2))
        _, aux, aux_order = lax_sorting.sort((lax.bitwise_not(mask), arr, _iota(n)),
                                             dimension=0, num_keys=2)
    aux_mask = lax.bitwise_and(lax.eq(aux[1:], aux[:-1]), mask[1:])
    count = _count_true(aux_mask)
    if aux.shape[0]:
        val_indices = nonzero(aux_mask, size=size, fill_value=aux.shape[0])[0]
        vals = _take_filled(aux, val_indices, 0)
    else:
        val_indices = lax.full((0,), 0, _index_dtype())
        vals = lax.full((size,), 0, aux.dtype)
    vals = _fill_tail(vals, count, fill_value)
    if not return_indices:
        return vals
    valid = _below(size, count)
    idx1 = _take_filled(aux_order, val_indices, n1)
    idx1 = lax.select(valid, idx1, lax.full_like(idx1, n1))
    idx2 = lax.sub(_take_filled(aux_order, lax.add(val_indices, lax.full_like(val_indices, 1)),
                                n2), lax.broadcast_in_dim(c1, (size,), ()))
    idx2 = lax.select(valid, idx2, lax.full_like(idx2, n2))
    if not assume_unique:
        idx1 = _take_filled(ind1, idx1, ind1.shape[0])
        idx2 = _take_filled(ind2, idx2, ind2.shape[0])
    return vals, idx1, idx2
