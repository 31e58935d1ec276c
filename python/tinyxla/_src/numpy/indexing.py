"""Indexing ``x[idx]`` and the ``x.at[idx]`` updates (mirrors ``jax._src.numpy.indexing``).

Basic indices (integers, slices of any step, None, Ellipsis, scalar booleans) become one
``slice``, then ``rev`` for negative steps, then one ``reshape``; a traced integer becomes
a ``dynamic_slice``. Out-of-bounds integers clamp, as JAX's gather does
(``jnp.arange(10)[11]`` is 9). Integer arrays (advanced indexing, numpy's placement rules)
and boolean masks (concrete only: converted with ``nonzero``) make one ``gather``, built
like JAX's ``_index_to_gather``; ``x.at[idx]`` scatters through the same description.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, NamedTuple

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.api import jit
from tinyxla._src.array import Array, _to_array
from tinyxla._src.config import config
from tinyxla._src.interpreters import caches
from tinyxla._src.lax import lax, slicing
from tinyxla._src.numpy import creation, promotion, ufuncs
from tinyxla._src.numpy import shape as shape_ops

_NEWAXIS = "newaxis"
_ELLIPSIS = "ellipsis"
_INT = "int"
_SLICE = "slice"
_DYNAMIC = "dynamic"  # a traced integer scalar
_ARRAY = "array"  # an integer array (advanced indexing)
_MASK = "mask"  # a boolean array of one or more dims
_GAP = "gap"  # an Ellipsis of no dims among advanced indices: it still separates them


def _classify(e: Any) -> tuple[str, Any]:
    """(kind, value) of one index element, with JAX's errors for unsupported ones."""
    if e is None:
        return _NEWAXIS, None
    if e is Ellipsis:
        return _ELLIPSIS, None
    t = type(e)
    if t is int:
        return _INT, e
    if t is slice:
        return _SLICE, e
    if t is bool or t is np.bool_:
        return _NEWAXIS, bool(e)  # a scalar mask: a new axis of length 1 (True) or 0
    if isinstance(e, np.integer):
        return _INT, int(e)
    if isinstance(e, str):
        raise TypeError(f"JAX does not support string indexing; got idx={e!r}")
    if isinstance(e, (list, tuple)):  # a sequence inside the index tuple is an array
        if any(isinstance(v, core.Tracer) for v in e):
            e = creation.asarray(e)
        else:
            e = np.asarray(e)
            if e.size == 0:
                e = e.astype(np.int32)  # numpy reads [] as float
    dt = getattr(e, "dtype", None)
    if dt is None:
        dt = np.asarray(e).dtype
    dt = np.dtype(dt)
    if dt.kind == "O":
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                         f"integer or boolean arrays are valid indices. Got {e}")
    if dt.kind not in "iub":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
    if np.ndim(e) == 0 and dt.kind != "b":
        if isinstance(e, core.Tracer):
            return _DYNAMIC, e
        return _INT, operator.index(e)
    if dt.kind == "b":
        if np.ndim(e) == 0:
            if isinstance(e, core.Tracer):
                raise errors.NonConcreteBooleanIndexError(e)
            return _NEWAXIS, bool(e)
        return _MASK, e
    return _ARRAY, e


def _expand(idx: Any, ndim: int) -> list[tuple[str, Any]]:
    """The classified index (``x[idx]``'s ``idx``) with its Ellipsis replaced by full
    slices (or appended)."""
    if isinstance(idx, list):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]`. See "
            "https://github.com/jax-ml/jax/issues/4564 for more information.")
    entries = [_classify(e) for e in (idx if type(idx) is tuple else (idx,))]
    for i, (k, v) in enumerate(entries):
        if k == _SLICE and any(isinstance(b, core.Tracer) for b in (v.start, v.stop, v.step)):
            raise IndexError(f"Slice entries must be static integers. Got {v} at position {i}")
    n_ellipsis = sum(k == _ELLIPSIS for k, _ in entries)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(np.ndim(v) if k == _MASK else 1 for k, v in entries
                 if k in (_INT, _SLICE, _DYNAMIC, _ARRAY, _MASK))
    if n_real > ndim:
        raise IndexError(f"Too many indices: array is {ndim}-dimensional, but {n_real} were "
                         "indexed")
    fill = [(_SLICE, slice(None))] * (ndim - n_real)
    if n_ellipsis:
        i = next(i for i, (k, _) in enumerate(entries) if k == _ELLIPSIS)
        if not fill and any(k in (_ARRAY, _MASK) for k, _ in entries):
            fill = [(_GAP, None)]  # numpy: the advanced indices are not adjacent
        return entries[:i] + fill + entries[i + 1:]
    return entries + fill


def getitem(arr: Any, idx: Any) -> Any:
    """``arr[idx]`` (what ``Array.__getitem__`` calls)."""
    if type(idx) is int and type(arr) is Array:
        return _int_index(arr, idx)
    entries = _expand(idx, arr.ndim)
    if any(k in (_ARRAY, _MASK) for k, _ in entries):
        return _advanced_getitem(arr, entries)
    return _basic_getitem(arr, entries)


def _basic_getitem(arr: Any, entries: list[tuple[str, Any]]) -> Any:
    shape = arr.shape
    start, limit, strides = [], [], []
    reversed_dims, dynamic = [], []
    out_shape: list[int] = []
    dim = 0
    for kind, v in entries:
        if kind == _NEWAXIS:
            out_shape.append(1 if v is not False else 0)
            continue
        n = shape[dim]
        if kind == _INT:
            if n == 0:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
            i = v + n if v < 0 else v
            i = 0 if i < 0 else n - 1 if i >= n else i  # clamp, as JAX's gather
            start.append(i), limit.append(i + 1), strides.append(1)
        elif kind == _DYNAMIC:
            start.append(0), limit.append(n), strides.append(1)
            dynamic.append((dim, v))
        else:
            s = slice(*(None if b is None else operator.index(b) for b in (v.start, v.stop, v.step)))
            lo, hi, step = s.indices(n)
            count = len(range(lo, hi, step))
            if count == 0:
                start.append(0), limit.append(0), strides.append(1)
            elif step > 0:
                start.append(lo), limit.append(lo + (count - 1) * step + 1), strides.append(step)
            else:
                first = lo + (count - 1) * step  # the smallest index taken
                start.append(first), limit.append(lo + 1), strides.append(-step)
                reversed_dims.append(dim)
            out_shape.append(count)
        dim += 1
    out = arr
    if start != [0] * len(start) or limit != list(shape) or any(s != 1 for s in strides):
        out = lax.slice(out, tuple(start), tuple(limit),
                        None if all(s == 1 for s in strides) else tuple(strides))
    if reversed_dims:
        out = lax.rev(out, tuple(reversed_dims))
    if dynamic:
        out = _dynamic_index(out, dynamic)
    # A False mask is a new axis of length 0: reshape with length 1, then slice it empty.
    empty = [i for i, (k, v) in enumerate(e for e in entries if e[0] != _INT and e[0] != _DYNAMIC)
             if k == _NEWAXIS and v is False]
    shape1 = tuple(1 if i in empty else d for i, d in enumerate(out_shape))
    if out.shape != shape1:
        out = lax.reshape(out, shape1)
    if empty:
        out = lax.slice(out, (0,) * len(shape1), tuple(out_shape))
    return out


def _int_index(arr: Array, i: int) -> Any:
    """The fast path for ``x[i]`` with a Python int."""
    shape = arr.shape
    if not shape:
        raise IndexError("Too many indices: array is 0-dimensional, but 1 were indexed")
    n = shape[0]
    if n == 0:
        raise IndexError("index is out of bounds for axis 0 with size 0")
    if i < 0:
        i += n
    i = 0 if i < 0 else n - 1 if i >= n else i
    rest = shape[1:]
    return lax.reshape(lax.slice(arr, (i,) + (0,) * len(rest), (i + 1,) + rest), rest)


def _dynamic_index(arr: Any, dynamic: list[tuple[int, Any]]) -> Any:
    """One dynamic_slice of size 1 along each traced-index axis (it wraps negative indices
    and clamps, as JAX's gather does)."""
    starts: list[Any] = [0] * arr.ndim
    sizes = list(arr.shape)
    for dim, i in dynamic:
        starts[dim] = lax.convert_element_type(i, dtypes.int32)
        sizes[dim] = 1
    return slicing.dynamic_slice(arr, starts, sizes)


# ---------------------------------------------------------------------------------------
# Advanced indexing: the index as one gather (JAX's _index_to_gather).

class _Indexer(NamedTuple):
    """An index as a gather of ``x``: the gather's operands and parameters, then what turns
    its result into ``x[idx]`` (new axes inserted, reversed dims flipped)."""
    dnums: slicing.GatherDimensionNumbers
    indices: Any  # (batch..., k) integer array
    gather_slice_shape: tuple[int, ...]
    slice_shape: tuple[int, ...]  # the shape of x[idx]
    newaxis_dims: tuple[int, ...]
    reversed_y_dims: tuple[int, ...]
    unique_indices: bool
    indices_are_sorted: bool


def _index_dtype(shape: tuple[int, ...]) -> np.dtype:
    return dtypes.int64 if any(d >= 1 << 31 for d in shape) and config.jax_enable_x64 \
        else dtypes.int32


def _masks_to_arrays(entries: list[tuple[str, Any]], shape: tuple[int, ...]
                     ) -> list[tuple[str, Any]]:
    """Boolean masks as the integer arrays of their true positions (they must be
    concrete: the result's shape depends on them)."""
    out: list[tuple[str, Any]] = []
    dim = 0
    for position, (kind, v) in enumerate(entries):
        if kind == _MASK:
            if isinstance(v, core.Tracer):
                raise errors.NonConcreteBooleanIndexError(v)
            mask = np.asarray(v)
            expected = list(shape[dim:dim + mask.ndim])
            # As numpy and JAX, a mask dimension of size 0 matches any array dimension.
            if not all(k in (0, n) for k, n in zip(mask.shape, expected)):
                raise IndexError(f"boolean index did not match shape of indexed array in "
                                 f"index {position}: got {mask.shape}, expected {expected}")
            out.extend((_ARRAY, a) for a in np.nonzero(mask))
            dim += mask.ndim
            continue
        out.append((kind, v))
        if kind not in (_NEWAXIS, _GAP):
            dim += 1
    return out


def _normalize(i: Any, n: int, dtype: np.dtype, wrap: bool) -> Any:
    """Index ``i`` as ``dtype``, negative values counted from the end when ``wrap``: as
    JAX's ``_normalize_index``, in ``i``'s own type before the conversion (so an unsigned
    index that converts to a negative one is out of bounds, not counted from the end)."""
    if isinstance(i, (int, np.integer)):
        i = int(i)
        return np.asarray(i + n if wrap and i < 0 else i, dtype)
    if not isinstance(i, (Array, core.Tracer)):
        a = np.asarray(i)
        a = np.where(a < 0, a + n, a) if wrap and a.dtype.kind == "i" else a
        return a.astype(dtype)
    if not wrap or not dtypes.issubdtype(i.dtype, np.signedinteger):
        return lax.convert_element_type(i, dtype)
    if n > np.iinfo(i.dtype).max:  # JAX raises OverflowError; numpy counts from the end
        i = lax.convert_element_type(i, dtype)
    i = lax.select(lax.lt(i, lax.full_like(i, 0)), lax.add(i, lax.full_like(i, n)), i)
    return lax.convert_element_type(i, dtype)


def _broadcast_indices(arrays: list[Any]) -> tuple[list[Any], tuple[int, ...]]:
    shape = tuple(np.broadcast_shapes(*(np.shape(a) for a in arrays)))
    out = []
    for a in arrays:
        if np.shape(a) == shape:
            out.append(a)
        elif isinstance(a, np.ndarray):
            out.append(np.broadcast_to(a, shape))
        else:
            nd = len(np.shape(a))
            out.append(lax.broadcast_in_dim(a, shape, tuple(range(len(shape) - nd, len(shape)))))
    return out, shape


def _index_to_gather(shape: tuple[int, ...], entries: list[tuple[str, Any]],
                     wrap_negative: bool = True) -> _Indexer:
    """The gather that computes ``x[idx]`` for ``x`` of ``shape`` (JAX's
    ``_index_to_gather``; masks already converted to integer arrays)."""
    dtype = _index_dtype(shape)
    advanced = any(k == _ARRAY for k, _ in entries)
    # With an array index, integers are advanced indices too (numpy's rule).
    adv_pos = [p for p, (k, _) in enumerate(entries)
               if advanced and k in (_ARRAY, _INT, _DYNAMIC)]
    contiguous = all(b - a == 1 for a, b in zip(adv_pos, adv_pos[1:]))
    x_dims = []
    dim = 0
    for k, _ in entries:
        x_dims.append(dim)
        if k not in (_NEWAXIS, _GAP):
            dim += 1
    offset_dims, collapsed, start_map = [], [], []
    gather_indices: list[tuple[Any, int]] = []  # (array, its first batch dim)
    batch_shape: list[int] = []
    slice_shape: list[int] = []
    gather_slice_shape: list[int] = []
    newaxis_dims, reversed_y_dims = [], []
    y_axis = collapsed_y_axis = 0
    for pos, (kind, v) in enumerate(entries):
        if adv_pos and pos == (adv_pos[0] if contiguous else 0):
            arrays, bshape = _broadcast_indices(
                [_normalize(entries[p][1], shape[x_dims[p]], dtype, wrap_negative)
                 for p in adv_pos])
            start = len(batch_shape)
            gather_indices.extend((a, start) for a in arrays)
            batch_shape.extend(bshape)
            start_map.extend(x_dims[p] for p in adv_pos)
            collapsed.extend(x_dims[p] for p in adv_pos)
            slice_shape.extend(bshape)
            y_axis += len(bshape)
            collapsed_y_axis += len(bshape)
        if pos in adv_pos:
            gather_slice_shape.append(1)
            continue
        if kind == _GAP:
            continue
        n = shape[x_dims[pos]] if kind != _NEWAXIS else 0
        if kind in (_INT, _DYNAMIC):
            gather_indices.append((_normalize(v, n, dtype, wrap_negative), len(batch_shape)))
            collapsed.append(x_dims[pos])
            start_map.append(x_dims[pos])
            gather_slice_shape.append(1)
        elif kind == _NEWAXIS:
            slice_shape.append(1 if v is not False else 0)
            newaxis_dims.append(y_axis)
            y_axis += 1
        else:
            sl = slice(*(None if b is None else operator.index(b)
                         for b in (v.start, v.stop, v.step)))
            lo, hi, step = sl.indices(n)
            count = len(range(lo, hi, step))
            slice_shape.append(count)
            if step == 1 or count <= 1:
                if count != n:
                    gather_indices.append((np.asarray(lo if count else 0, dtype),
                                           len(batch_shape)))
                    start_map.append(x_dims[pos])
                gather_slice_shape.append(count)
                offset_dims.append(collapsed_y_axis)
            else:
                first = lo if step > 0 else lo + (count - 1) * step
                idx = np.arange(count, dtype=dtype) * abs(step) + first
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                gather_indices.append((idx, len(batch_shape)))
                batch_shape.append(count)
                start_map.append(x_dims[pos])
                collapsed.append(x_dims[pos])
                gather_slice_shape.append(1)
            collapsed_y_axis += 1
            y_axis += 1
    indices = _stack_indices(gather_indices, batch_shape, dtype)
    dnums = slicing.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                           collapsed_slice_dims=tuple(sorted(collapsed)),
                                           start_index_map=tuple(start_map))
    return _Indexer(dnums, indices, tuple(gather_slice_shape), tuple(slice_shape),
                    tuple(newaxis_dims), tuple(reversed_y_dims), not advanced, not advanced)


def _stack_indices(gather_indices: list[tuple[Any, int]], batch_shape: list[int],
                   dtype: np.dtype) -> Any:
    """The (batch..., k) index array: each piece broadcast along its batch dims."""
    full_shape = tuple(batch_shape)
    if all(isinstance(g, np.ndarray) for g, _ in gather_indices):  # a constant
        cols = [np.broadcast_to(np.expand_dims(g, tuple(
            [d for d in range(len(full_shape)) if not start <= d < start + g.ndim])), full_shape)
            for g, start in gather_indices]
        return np.stack(cols, -1).astype(dtype) if cols else np.zeros(full_shape + (0,), dtype)
    cols = []
    for g, start in gather_indices:
        g = lax.convert_element_type(g, dtype)
        cols.append(lax.broadcast_in_dim(g, full_shape + (1,),
                                         tuple(range(start, start + len(np.shape(g))))))
    return cols[0] if len(cols) == 1 else lax.concatenate(cols, len(full_shape))


def _gather_mode(mode: Any) -> slicing.GatherScatterMode:
    """Indexing's gather mode: None clamps (promise_in_bounds), as JAX."""
    if mode is None:
        return slicing.GatherScatterMode.PROMISE_IN_BOUNDS
    return slicing.GatherScatterMode.from_any(mode)


def _advanced_getitem(arr: Any, entries: list[tuple[str, Any]], *, mode: Any = None,
                      fill_value: Any = None, indices_are_sorted: bool = False,
                      unique_indices: bool = False, wrap_negative_indices: bool = True) -> Any:
    entries = _masks_to_arrays(entries, arr.shape)
    options = (mode, fill_value, indices_are_sorted, unique_indices, wrap_negative_indices)
    if core._state.trace is core.EVAL_TRACE and type(arr) is Array:
        out = _compiled_getitem(arr, entries, options)
        if out is not None:
            return out
    return _gather_entries(arr, entries, *options)


# Eager gathers with Array indices, compiled per index structure: their negative-index
# normalisation and index stacking are separate eager ops over the whole index array
# otherwise, where jit fuses them into the gather (as JAX's _rewriting_take jits _gather).
_compiled_getitems = caches.Cache(256)
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def _compiled_getitem(arr: Array, entries: list[tuple[str, Any]], options: tuple) -> Any:
    """``arr[entries]`` through a jitted gather cached by the index's static structure, or
    None when no index is a device Array (numpy indices make a constant gather) or the
    options hold values that are not static (an Array fill value)."""
    fill_value = options[1]
    if fill_value is not None and type(fill_value) not in (bool, int, float, complex):
        return None
    # repr tells -0.0 from 0.0 and matches a NaN, where == would not.
    key: list[Any] = [(type(fill_value), repr(fill_value), *options[:1], *options[2:])]
    arrays = []
    dynamic = False
    for kind, v in entries:
        if kind == _ARRAY and type(v) is Array:
            arrays.append(v)
            key.append(_ARRAY)
            dynamic = True
        elif kind == _INT and _INT32_MIN <= v <= _INT32_MAX:
            # An argument, as in JAX: a loop over x[i, idx] compiles once, not per i.
            arrays.append(_to_array(v))
            key.append(_DYNAMIC)
        elif kind == _SLICE:
            key.append((kind, v.start, v.stop, v.step))
        elif kind in (_NEWAXIS, _GAP):
            key.append((kind, v))
        else:  # numpy arrays (a constant), huge integers, tracers from another trace
            return None
    if not dynamic:
        return None
    key_t = tuple(key)
    call = _compiled_getitems.entries.get(key_t)
    if call is None:
        call = _compiled_getitems.put(key_t, _getitem_function(entries, options))
    return call(arr, *arrays)


def _getitem_function(entries: list[tuple[str, Any]], options: tuple) -> Callable[..., Any]:
    """The jitted ``arr[entries]`` taking ``entries``' Array indices as arguments."""
    # The positions taken by arguments, and the kind each argument has in the trace.
    template = [(_DYNAMIC, None) if k == _INT else
                (k, None) if k == _ARRAY and type(v) is Array else (k, v) for k, v in entries]

    def gather(arr: Any, *arrays: Any) -> Any:
        it = iter(arrays)
        return _gather_entries(arr, [(k, next(it) if v is None and k in (_ARRAY, _DYNAMIC)
                                      else v) for k, v in template], *options)
    return jit(gather)


def _gather_entries(arr: Any, entries: list[tuple[str, Any]], mode: Any, fill_value: Any,
                    indices_are_sorted: bool, unique_indices: bool,
                    wrap_negative_indices: bool) -> Any:
    """``arr[entries]`` (masks already converted to integer arrays) as one gather."""
    indexer = _index_to_gather(arr.shape, entries, wrap_negative_indices)
    if 0 in indexer.slice_shape:  # as JAX: no gather (whose slices may not fit) for no values
        return lax.full(indexer.slice_shape, 0, arr.dtype)
    y = arr
    if indexer.indices.size or indexer.dnums.offset_dims != tuple(range(arr.ndim)):
        y = slicing.gather(arr, indexer.indices, indexer.dnums, indexer.gather_slice_shape,
                           unique_indices=unique_indices or indexer.unique_indices,
                           indices_are_sorted=indices_are_sorted or indexer.indices_are_sorted,
                           mode=_gather_mode(mode), fill_value=fill_value)
    if indexer.reversed_y_dims:
        y = lax.rev(y, indexer.reversed_y_dims)
    if indexer.newaxis_dims:
        y = lax.reshape(y, indexer.slice_shape) if 0 not in indexer.slice_shape \
            else lax.full(indexer.slice_shape, 0, y.dtype)
    return y


def _rewriting_take(arr: Any, idx: Any, *, mode: Any = None, fill_value: Any = None,
                    indices_are_sorted: bool = False, unique_indices: bool = False,
                    wrap_negative_indices: bool = True) -> Any:
    """``arr[idx]`` with the gather's options (``x.at[idx].get``)."""
    entries = _expand(idx, arr.ndim)
    if mode is None and wrap_negative_indices and \
            not any(k in (_ARRAY, _MASK) for k, _ in entries):
        return _basic_getitem(arr, entries)
    return _advanced_getitem(arr, entries, mode=mode, fill_value=fill_value,
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices,
                             wrap_negative_indices=wrap_negative_indices)


# ---------------------------------------------------------------------------------------
# x.at[idx]: functional updates as scatters.

def _scatter_update(x: Any, idx: Any, y: Any, scatter: Callable[..., Any], *,
                    indices_are_sorted: bool, unique_indices: bool, mode: Any,
                    wrap_negative_indices: bool) -> Any:
    """``x`` with ``scatter`` applying ``y`` (cast to x's dtype, broadcast to the shape of
    ``x[idx]``) at ``idx`` (JAX's ``_scatter_update``). Mode None drops out-of-bounds
    updates."""
    x = creation.asarray(x)
    y = lax.convert_element_type(creation.asarray(y), x.dtype)
    if x.weak_type != getattr(y, "weak_type", False):
        y = lax._convert_element_type(y, x.dtype, x.weak_type)
    entries = _masks_to_arrays(_expand(idx, x.ndim), x.shape)
    indexer = _index_to_gather(x.shape, entries, wrap_negative_indices)
    y = shape_ops.broadcast_to(y, indexer.slice_shape)
    if 0 in indexer.slice_shape:
        return x
    if indexer.newaxis_dims:
        y = lax.reshape(y, tuple(d for i, d in enumerate(indexer.slice_shape)
                                 if i not in indexer.newaxis_dims))
    if indexer.reversed_y_dims:
        y = lax.rev(y, indexer.reversed_y_dims)
    d = indexer.dnums
    dnums = slicing.ScatterDimensionNumbers(update_window_dims=d.offset_dims,
                                            inserted_window_dims=d.collapsed_slice_dims,
                                            scatter_dims_to_operand_dims=d.start_index_map)
    return scatter(x, indexer.indices, y, dnums,
                   indices_are_sorted=indices_are_sorted or indexer.indices_are_sorted,
                   unique_indices=unique_indices or indexer.unique_indices, mode=mode)


class _IndexUpdateHelper:
    """``x.at``: indexing it gives the updates at that index (``jax.numpy.ndarray.at``)."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates of ``x`` at ``idx``, each returning a new array.
    Out-of-bounds updates are dropped (mode None); duplicate indices accumulate. Differs
    from JAX in ``apply``: with duplicate indices ``func`` is applied once, not once per
    occurrence."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, out_sharding: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """``x[idx]`` with the gather's options; mode None clamps (promise_in_bounds),
        ``fill_value`` applies with mode "fill"."""
        return _rewriting_take(self.array, self.index, mode=mode, fill_value=fill_value,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices,
                               wrap_negative_indices=wrap_negative_indices)

    def _update(self, values: Any, scatter: Callable[..., Any], kwargs: dict) -> Any:
        return _scatter_update(self.array, self.index, values, scatter,
                               indices_are_sorted=kwargs.get("indices_are_sorted", False),
                               unique_indices=kwargs.get("unique_indices", False),
                               mode=kwargs.get("mode"),
                               wrap_negative_indices=kwargs.get("wrap_negative_indices", True))

    def set(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = values``; for duplicate indices the last value wins."""
        return self._update(values, slicing.scatter, locals())

    def add(self, values: Any, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, wrap_negative_indices: bool = True) -> Any:
        """``x[idx] += values``."""
        return self._update(values, slicing.scatter_add, locals())

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        """``x[idx] -= values`` (a scatter_add of the negated values)."""
        neg = lax.neg(lax.convert_element_type(creation.asarray(values), self.array.dtype))
        return self._update(neg, slicing.scatter_add, locals())

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        """``x[idx] *= values``."""
        return self._update(values, slicing.scatter_mul, locals())

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None,
               wrap_negative_indices: bool = True) -> Any:
        """``x[idx] /= values``: ``x`` divided by ones with the values multiplied in, as
        JAX (so integer ``x`` gives a float result)."""
        ones = creation.ones_like(self.array)
        return ufuncs.divide(self.array, _IndexUpdateRef(ones, self.index)._update(
            values, slicing.scatter_mul, locals()))

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """``x[idx] **= values`` (ones with the exponents multiplied in, as JAX)."""
        ones = creation.ones_like(self.array)
        return ufuncs.power(self.array, _IndexUpdateRef(ones, self.index)._update(
            values, slicing.scatter_mul, locals()))

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = minimum(x[idx], values)``."""
        return self._update(values, slicing.scatter_min, locals())

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        """``x[idx] = maximum(x[idx], values)``."""
        return self._update(values, slicing.scatter_max, locals())

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """``func`` applied to ``x[idx]`` in place (``ufunc.at``); see the class note on
        duplicate indices."""
        taken = self.get(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode="clip" if mode == "clip" else None,
                         wrap_negative_indices=wrap_negative_indices)
        return self._update(func(taken), slicing.scatter, locals())


# ---------------------------------------------------------------------------------------
# take and take_along_axis

def take(a: Any, indices: Any, axis: int | None = None, out: None = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Mirrors ``jax.numpy.take``: elements of ``a`` (flattened when ``axis`` is None) at
    ``indices`` along ``axis``. Mode None is "fill" (negative indices wrap, others out of
    bounds give NaN / the integer extreme); "clip" clamps, "wrap" takes them modulo."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = promotion.ensure_arraylike("take", a, indices)
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise ValueError("indices must have an integer type")
    if axis is None:
        a = lax.reshape(a, (int(np.prod(a.shape)),))
        axis = 0
    axis = _canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if mode is None or mode == "fill":
        gather_mode = slicing.GatherScatterMode.FILL_OR_DROP
        indices = _normalize(indices, n, indices.dtype, True)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = ufuncs.mod(indices, lax.full_like(indices, n))
        gather_mode = slicing.GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = slicing.GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = indices.ndim
    sizes = list(a.shape)
    if n == 0:
        if indices.size != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if indices.size == 0:
        return creation.full_like(a, 0, shape=tuple(sizes[:axis] + list(indices.shape) +
                                                    sizes[axis + 1:]))
    sizes[axis] = 1
    dnums = slicing.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + index_dims, a.ndim + index_dims - 1)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    return slicing.gather(a, lax.expand_dims(indices, (index_dims,)), dnums, tuple(sizes),
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                          mode=gather_mode, fill_value=fill_value)


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1, mode: Any = None,
                    fill_value: Any = None, *,
                    wrap_negative_indices: bool | None = None) -> Any:
    """Mirrors ``jax.numpy.take_along_axis``: ``arr`` indexed along ``axis`` (the last by
    default, as JAX and the Array API) by ``indices`` (broadcast with ``arr`` in the other
    dims). Negative indices wrap unless ``wrap_negative_indices=False`` (default: wrap
    except under mode "promise_in_bounds", as JAX); mode None is "fill" (out-of-bounds
    give NaN / the integer extreme), "clip" clamps."""
    a, indices = promotion.ensure_arraylike("take_along_axis", arr, indices)
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError("take_along_axis indices must be of integer type, got "
                        f"{indices.dtype}")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("take_along_axis indices must be 1D if axis=None, got shape "
                             f"{indices.shape}")
        a = lax.reshape(a, (int(np.prod(a.shape)),))
        axis = 0
    if a.ndim != indices.ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {a.ndim}")
    axis = _canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    out_shape = tuple(np.broadcast_shapes(indices.shape, a.shape[:axis] + (1,) + a.shape[axis + 1:]))
    if n == 0:
        return lax.full(out_shape, 0, a.dtype)
    dtype = dtypes.int64 if indices.dtype == dtypes.int64 else dtypes.int32
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    indices = _normalize(indices, n, dtype, wrap_negative_indices)
    indices = lax.broadcast_in_dim(indices, out_shape, tuple(range(len(out_shape)))) \
        if indices.shape != out_shape else indices
    # One gather of single elements: the other dims index themselves (their iota).
    cols = [indices if d == axis else lax.broadcasted_iota(dtype, out_shape, d)
            for d in range(a.ndim)]
    if a.shape != tuple(out_shape[d] if d != axis else n for d in range(a.ndim)):
        a = lax.broadcast_in_dim(a, tuple(out_shape[d] if d != axis else n
                                          for d in range(a.ndim)), tuple(range(a.ndim)))
    idx = lax.concatenate([lax.expand_dims(c, (a.ndim,)) for c in cols], a.ndim)
    dnums = slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=tuple(range(a.ndim)),
                                           start_index_map=tuple(range(a.ndim)))
    gather_mode = slicing.GatherScatterMode.from_any("fill" if mode is None else mode)
    return slicing.gather(a, idx, dnums, (1,) * a.ndim, mode=gather_mode, fill_value=fill_value)
