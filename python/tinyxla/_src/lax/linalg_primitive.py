"""How a ``lax.linalg`` primitive runs one C++ op (as ``jax._src.lax.linalg``'s
``linalg_primitive``): the eager impl calls the op by ``_core.make_op``, the lowering adds it
by ``builder.op``, and the batching rule moves every operand's mapped axis to the front
(broadcasting unmapped operands), since the ops take any leading batch dims. Each module
beside this one adds its primitive's abstract eval, derivative rules and public function."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from tinyxla import _core
from tinyxla._src.array import Array
from tinyxla._src.core import Primitive
from tinyxla._src.interpreters import ad, batching, lowering
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.interpreters.partial_eval import trace_to_jaxpr
from tinyxla._src.lax.lax import _operand, _reject, _result


@functools.lru_cache(maxsize=None)
def _eager_op(name: str, attrs: tuple[tuple[str, Any], ...]) -> Any:
    return _core.make_op(name, dict(attrs))


def linalg_primitive(name: str, abstract_eval: Callable[..., Any],
                     op_attrs: Callable[..., dict[str, Any]], *, multiple_results: bool,
                     op_name: str | None = None) -> Primitive:
    """The primitive ``name`` running C++ op ``op_name`` (default ``name``) with the
    attributes ``op_attrs(**params)``; ``abstract_eval`` raises JAX's errors."""
    op_name = op_name or name
    prim = Primitive(name, multiple_results=multiple_results)
    prim.def_abstract_eval(abstract_eval)

    def impl(*args: Any, **params: Any) -> Any:
        arrays = [a if type(a) is Array else _operand(prim, i, a) for i, a in enumerate(args)]
        avals = abstract_eval(*(a.aval for a in arrays), **params)
        op = _eager_op(op_name, tuple(sorted(op_attrs(**params).items())))
        try:
            handles = op(*(a._h for a in arrays))
        except (TypeError, ValueError, IndexError) as e:
            _reject(prim, arrays, params, e)
            raise
        if not multiple_results:
            return _result(handles, False, avals.dtype, arrays)
        return [_result(h, False, a.dtype, arrays) for h, a in zip(handles, avals)]

    def lower(ctx: Any, *xs: Any, **params: Any) -> Any:
        return ctx.builder.op(op_name, op_attrs(**params), list(xs))

    prim.def_impl(impl)
    register_lowering(prim, lower)
    _batch_at_front(prim)
    return prim


def _batch_at_front(prim: Primitive) -> None:
    """vmap moves every operand's mapped axis to the front (broadcasting unmapped ones):
    the primitive takes any leading batch dims."""
    def batch_rule(vals: Sequence[Any], dims: Sequence[int | None],
                   **params: Any) -> tuple[Any, Any]:
        size = batching.batch_size(vals, dims)
        moved = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        outs = prim.bind(*moved, **params)
        return outs, ([0] * len(outs) if prim.multiple_results else 0)

    batching.primitive_batchers[prim] = batch_rule


def composite_linalg_primitive(name: str, abstract_eval: Callable[..., Any],
                               composition: Callable[..., Any], *,
                               multiple_results: bool) -> Primitive:
    """A primitive defined by ``composition`` of other primitives (JAX's ``lower_fun``):
    it runs the composition eagerly and inlines its jaxpr when lowered; the primitive
    itself carries the abstract eval and derivative rules."""
    prim = Primitive(name, multiple_results=multiple_results)
    prim.def_abstract_eval(abstract_eval)

    def flat(*xs: Any, **params: Any) -> list[Any]:
        out = composition(*xs, **params)
        return list(out) if multiple_results else [out]

    @functools.lru_cache(maxsize=None)
    def jaxpr(avals: tuple[Any, ...], params: tuple[tuple[str, Any], ...]) -> Any:
        return trace_to_jaxpr(lambda *xs: flat(*xs, **dict(params)), avals)

    def impl(*args: Any, **params: Any) -> Any:
        arrays = [a if type(a) is Array else _operand(prim, i, a) for i, a in enumerate(args)]
        abstract_eval(*(a.aval for a in arrays), **params)
        return composition(*arrays, **params)

    def lower(ctx: Any, *xs: Any, **params: Any) -> Any:
        outs = lowering.inline_jaxpr(
            ctx.builder, jaxpr(tuple(ctx.avals_in), tuple(sorted(params.items()))), xs)
        return outs if multiple_results else outs[0]

    prim.def_impl(impl)
    register_lowering(prim, lower)
    _batch_at_front(prim)
    return prim


def not_differentiable(prim: Primitive) -> None:
    """JAX defines no derivative for ``prim`` (geqrf, schur, ...): its JVP rule raises
    JAX's error."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{prim.name}' not implemented")

    ad.primitive_jvps[prim] = rule


def no_attrs(**params: Any) -> dict[str, Any]:
    """The op attributes of a primitive whose op has none."""
    return {}


def split_batch(name: str, ranks: Sequence[int],
                avals: Sequence[Any]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The common batch dims of ``avals`` and each one's trailing core dims (``ranks[i]``
    of them), with JAX's errors (``linalg_shape_rule``)."""
    batch_dims, dims = [], []
    for i, (rank, aval) in enumerate(zip(ranks, avals)):
        shape = tuple(aval.shape)
        if len(shape) < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                            f"shape={shape}")
        batch_dims.append(shape[:len(shape) - rank])
        dims.append(shape[len(shape) - rank:])
    if not all(len(batch_dims[0]) == len(b) for b in batch_dims):
        raise TypeError(
            f"All inputs to {name} must have the same number of batch dimensions, but got "
            f"{[len(b) for b in batch_dims]} batch dimensions for the inputs.")
    if any(b != batch_dims[0] for b in batch_dims):
        raise TypeError(f"All inputs to {name} must have equal batch dimensions, but got "
                        f"{batch_dims}.")
    return batch_dims[0], dims
