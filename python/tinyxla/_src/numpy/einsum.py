"""einsum and einsum_path: Einstein summation planned by opt_einsum, run as dot_generals.

Mirrors ``jax._src.numpy.einsum``: opt_einsum orders the pairwise contractions (as in
JAX, ``optimize='auto'`` by default, ``True`` is 'optimal', ``False`` contracts left to
right); each contraction is one ``lax.dot_general`` (operands unconverted, accumulating
in ``preferred_element_type``), after summing the labels only one operand has and
taking the diagonals of repeated labels, then one transpose into the result's order.

The plan (opt_einsum's path, then each step's dimension numbers, sums and permutation)
is a pure function of the subscripts, the shapes and ``optimize``; it is cached, so a
repeated eager call costs its dot_generals and little else.
"""
from __future__ import annotations

import collections
import functools
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
import opt_einsum

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.numpy.promotion import check_arraylike, ensure_array

ArrayLike = Any


class Unoptimized(opt_einsum.paths.PathOptimizer):
    """Contracts the operands left to right (``optimize=False``), as JAX does."""

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> list[tuple[int, int]]:
        return [(0, 1)] * (len(inputs) - 1)


class _Prep(NamedTuple):
    """What one operand needs before its contraction: size-1 axes dropped, labels only it
    has summed, repeated labels reduced to their diagonal (``repeats``: axes, how many of
    them are summed away)."""
    squeeze: tuple[int, ...]
    sums: tuple[int, ...]
    repeats: tuple[tuple[tuple[int, ...], int], ...]


class _Step(NamedTuple):
    operands: tuple[int, ...]          # positions popped from the working list
    preps: tuple[_Prep, ...]           # one per popped operand
    dimension_numbers: Any             # for dot_general, or None for a one-operand step
    swap: bool                         # dot_general(rhs, lhs) rather than (lhs, rhs)
    perm: tuple[int, ...] | None       # the final transpose, if any


def _remove(names: str, chars: str) -> str:
    return names.translate(str.maketrans(dict.fromkeys(chars)))


def _prep(names: str, shape: tuple[int, ...], uniques: Sequence[str], keep: str,
          squeeze: tuple[int, ...] = ()) -> tuple[_Prep, str, tuple[int, ...]]:
    """The preparation of one operand: returns it with the names and shape it leaves."""
    if squeeze:
        names = "".join(n for i, n in enumerate(names) if i not in squeeze)
        shape = tuple(s for i, s in enumerate(shape) if i not in squeeze)
    sums = tuple(names.index(n) for n in uniques)
    if sums:
        names = _remove(names, "".join(uniques))
        shape = tuple(s for i, s in enumerate(shape) if i not in sums)
    repeats = []
    for name, count in collections.Counter(names).items():
        if count > 1:
            axes = tuple(i for i, n in enumerate(names) if n == name)
            if name in keep:
                summed = axes[:-1]
                names = names.replace(name, "", count - 1)
            else:
                summed = axes
                names = names.replace(name, "")
            repeats.append((axes, len(summed)))
            shape = tuple(s for i, s in enumerate(shape) if i not in summed)
    return _Prep(squeeze, sums, tuple(repeats)), names, shape


def _singletons(names: str, shape: tuple[int, ...], other_names: str,
                other_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Size-1 axes whose label the other operand has at another size (they broadcast)."""
    out = []
    for i, n in enumerate(names):
        j = other_names.find(n)
        if shape[i] == 1 and j != -1 and other_shape[j] != 1:
            out.append(i)
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _plan(subscripts: str, shapes: tuple[tuple[int, ...], ...], optimize: Any
          ) -> tuple[_Step, ...]:
    path_type = ("optimal" if optimize is True else Unoptimized() if optimize is False
                 else list(optimize) if isinstance(optimize, tuple) else optimize)
    return _plan_steps(subscripts, shapes, path_type)


def _plan_steps(subscripts: str, shapes: tuple[tuple[int, ...], ...], path_type: Any
                ) -> tuple[_Step, ...]:
    _, contractions = opt_einsum.contract_path(
        subscripts, *shapes, shapes=True, einsum_call=True, use_blas=True,
        optimize=path_type)
    work = list(shapes)
    steps = []
    for operand_indices, contracted, einstr, *_ in contractions:
        contracted_names = sorted(contracted)
        input_str, result_names = einstr.split("->")
        input_names = input_str.split(",")
        if len(operand_indices) == 1:
            shape = work.pop(operand_indices[0])
            names, = input_names
            counts = collections.Counter(names)
            uniques = [n for n in contracted_names if counts[n] == 1]
            prep, names, shape = _prep(names, shape, uniques, result_names)
            preps, dims, swap = (prep,), None, False
        elif len(operand_indices) == 2:
            lhs_shape, rhs_shape = map(work.pop, operand_indices)
            lhs_names, rhs_names = input_names
            lsq = _singletons(lhs_names, lhs_shape, rhs_names, rhs_shape)
            rsq = _singletons(rhs_names, rhs_shape, lhs_names, lhs_shape)
            lhs_kept = "".join(n for i, n in enumerate(lhs_names) if i not in lsq)
            rhs_kept = "".join(n for i, n in enumerate(rhs_names) if i not in rsq)
            lc, rc = collections.Counter(lhs_kept), collections.Counter(rhs_kept)
            lhs_uniques = [n for n in contracted_names if lc[n] == 1 and rc[n] == 0]
            rhs_uniques = [n for n in contracted_names if rc[n] == 1 and lc[n] == 0]
            lprep, lhs_names, lhs_shape = _prep(lhs_names, lhs_shape, lhs_uniques,
                                                result_names + rhs_kept, lsq)
            rprep, rhs_names, rhs_shape = _prep(rhs_names, rhs_shape, rhs_uniques,
                                                result_names + lhs_names, rsq)
            both = set(lhs_names) | set(rhs_names)
            contracted_names = [n for n in contracted_names if n in both]
            common = set(lhs_names) & set(rhs_names)
            batch_names = "".join(n for n in result_names if n in common)
            lb = tuple(lhs_names.find(n) for n in batch_names)
            rb = tuple(rhs_names.find(n) for n in batch_names)
            lcont = tuple(lhs_names.index(n) for n in contracted_names)
            rcont = tuple(rhs_names.index(n) for n in contracted_names)
            deleted = batch_names + "".join(contracted_names)
            rem_l, rem_r = _remove(lhs_names, deleted), _remove(rhs_names, deleted)
            names = batch_names + rem_r + rem_l
            swap = names == result_names
            if swap:
                dims = ((rcont, lcont), (rb, lb))
            else:
                names = batch_names + rem_l + rem_r
                dims = ((lcont, rcont), (lb, rb))
            sizes = {**dict(zip(lhs_names, lhs_shape)), **dict(zip(rhs_names, rhs_shape))}
            shape = tuple(sizes[n] for n in names)
            preps = (lprep, rprep)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more"
                " operands. Typically this means you've passed an unsupported path to"
                " the einsum optimize parameter.")
        perm = None
        if names != result_names:
            perm = tuple(names.index(n) for n in result_names)
            shape = tuple(shape[p] for p in perm)
        work.append(shape)
        steps.append(_Step(tuple(operand_indices), preps, dims, swap, perm))
    return tuple(steps)


def _sum(x: Any, axes: Sequence[int], dt: np.dtype) -> Any:
    if dtypes.result_type(x, dt) != x.dtype:
        x = lax.convert_element_type(x, dt)
    if x.dtype == dtypes.bool_dtype:
        return lax.reduce_or(x, tuple(axes))
    return lax.reduce_sum(x, tuple(axes))


def _diagonal_mask(shape: tuple[int, ...], axes: Sequence[int]) -> Any:
    """True where the indices along ``axes`` are all equal (JAX's ``lax._delta``)."""
    iotas = [lax.broadcasted_iota(np.int32, shape, a) for a in axes]
    mask = lax.eq(iotas[0], iotas[1])
    for other in iotas[2:]:
        mask = lax.bitwise_and(mask, lax.eq(iotas[0], other))
    return mask


def _apply_prep(x: Any, prep: _Prep, dt: np.dtype) -> Any:
    if prep.squeeze:
        x = lax.squeeze(x, prep.squeeze)
    if prep.sums:
        x = _sum(x, prep.sums, dt)
    for axes, nsummed in prep.repeats:
        x = lax.select(_diagonal_mask(x.shape, axes), x, lax.full_like(x, 0))
        x = _sum(x, axes[:nsummed], dt)
    return x


def _parse(subscripts: Any, operands: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """The subscripts string and the operands, from either calling convention."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    # The interleaved form: arr, axes, arr, axes, ..., [output axes]. opt_einsum turns it
    # into a string from stand-ins of the arrays' shapes.
    args = (subscripts, *operands)
    arrays = list(args[0:len(args) - len(args) % 2:2])
    rebuilt: list[Any] = []
    for a, axes in zip(arrays, args[1::2]):
        rebuilt += [np.broadcast_to(np.bool_(False), np.shape(a)), axes]
    if len(args) % 2:
        rebuilt.append(args[-1])
    spec, _ = opt_einsum.parser.convert_interleaved_input(rebuilt)
    return spec, arrays


def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] = lax.dot_general, out_sharding: Any = None
           ) -> Any:
    """Mirrors ``jax.numpy.einsum`` (both calling conventions; ``out_sharding`` must be None).

    Each pairwise contraction is one ``dot_general``; the contraction order is
    opt_einsum's, as in JAX, so results match JAX's up to rounding.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if out_sharding is not None:
        raise NotImplementedError("tinyxla's einsum does not support out_sharding")
    spec, arrays = _parse(subscripts, operands)
    check_arraylike("einsum", *arrays)
    arrays = [ensure_array(a) for a in arrays]
    shapes = tuple(tuple(a.shape) for a in arrays)
    if isinstance(optimize, list):
        optimize = tuple(tuple(p) if isinstance(p, (list, tuple)) else p for p in optimize)
    try:
        steps = _plan(spec, shapes, optimize)
    except TypeError as e:  # an unhashable optimizer object: plan without the cache
        if "unhashable" not in str(e):
            raise
        steps = _plan_steps(spec, shapes, optimize)
    if preferred_element_type is None:
        dt, weak = dtypes.result_type(*arrays, return_weak_type_flag=True)
    else:
        dt = dtypes.check_user_dtype_supported(preferred_element_type, "einsum")
        weak = False
    # The plan's dimension numbers are already canonical: the default dot_general binds
    # the primitive directly (eager einsum of small operands is dominated by overhead).
    direct = _dot_general is lax.dot_general
    canonical_precision = lax.canonicalize_precision(precision) if direct else None
    for step in steps:
        popped = [arrays.pop(i) for i in step.operands]
        popped = [_apply_prep(x, p, dt) for x, p in zip(popped, step.preps)]
        if step.dimension_numbers is None:
            result = popped[0]
        else:
            lhs, rhs = popped
            if step.swap:
                lhs, rhs = rhs, lhs
            if direct:
                result = lax.dot_general_p.bind(lhs, rhs, dimension_numbers=step.dimension_numbers,
                                                precision=canonical_precision,
                                                preferred_element_type=dt)
            else:
                result = _dot_general(lhs, rhs, step.dimension_numbers, precision,
                                      preferred_element_type=dt)
        if step.perm is not None:
            result = lax.transpose(result, step.perm)
        arrays.append(result)
    out = arrays[0]
    if out.dtype == dt and out.weak_type == weak:
        return out
    return lax._convert_element_type(out, dt, weak)


def einsum_path(subscripts: Any, /, *operands: Any, optimize: Any = "auto"
                ) -> tuple[list[tuple[int, ...]], Any]:
    """Mirrors ``jax.numpy.einsum_path``: opt_einsum's contraction path and its report."""
    if isinstance(optimize, bool):
        optimize = "optimal" if optimize else Unoptimized()
    return opt_einsum.contract_path(subscripts, *operands, optimize=optimize)
