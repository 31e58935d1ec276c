"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
jacobian and hessian (mirrors the functions of ``jax._src.api``).

Everything is built on the two flat entry points of ``interpreters/ad.py``: ``jvp_flat``
(forward mode) and ``linearize_flat`` (concrete primals, tangents staged into a linear
jaxpr, which ``vjp`` transposes). Error texts are JAX's.

Differences from JAX: ``jacfwd`` linearizes once and vmaps the linear map over the basis
(JAX vmaps ``jvp`` of the function); the functions returned by ``linearize`` and ``vjp``
are plain callables, not ``Partial``/``VJP`` pytrees.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla._src import core, dtypes, errors
from tinyxla._src.array import Array, _to_array
from tinyxla._src.interpreters import ad
from tinyxla._src.lax import lax
from tinyxla._src.numpy import creation
from tinyxla._src.numpy import shape as jnp_shape
from tinyxla._src.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten
from tinyxla._src.vmap import vmap


# ---------------------------------------------------------------------------------------
# Argument handling shared by the transforms.

def _check_callable(fun: Any) -> None:
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")


def _ensure_index(argnums: Any) -> int | tuple[int, ...]:
    """``argnums`` as an int or a tuple of ints (``api_util._ensure_index``)."""
    try:
        return operator.index(argnums)
    except TypeError:
        return tuple(map(operator.index, argnums))


def _as_value(x: Any) -> Any:
    """A leaf of a differentiated argument: tracers as they are, concrete values as
    Arrays (Python scalars weak-typed); JAX's error for anything else."""
    if isinstance(x, core.Tracer) or type(x) is Array:
        return x
    try:
        return _to_array(x)
    except TypeError:
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.") from None


def _argnums_partial(fun: Callable, argnums: int | tuple[int, ...], args: Sequence[Any],
                     kwargs: dict) -> tuple[Callable, tuple[Any, ...]]:
    """``fun`` as a function of the arguments at ``argnums`` only, and those arguments."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    nums = tuple(i % len(args) if i < 0 else i for i in nums)

    def partial_fun(*dyn):
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return fun(*full, **kwargs)

    return partial_fun, tuple(args[i] for i in nums)


def _check_argnums_passed(argnums: int | tuple[int, ...], args: Sequence[Any]) -> None:
    max_argnum = argnums if isinstance(argnums, int) else max(argnums)
    if max_argnum >= len(args):
        raise TypeError(f"differentiating with respect to {argnums=} requires at least "
                        f"{max_argnum + 1} positional arguments to be passed by the caller, "
                        f"but got only {len(args)} positional arguments.")


class _Flat:
    """``fun`` of a pytree of arguments as a function of flat leaves returning flat
    leaves: the main outputs, then (with ``has_aux``) the auxiliary ones. The output
    trees are recorded on the first call."""

    def __init__(self, fun: Callable, in_tree: Any, has_aux: bool):
        self.fun = fun
        self.in_tree = in_tree
        self.has_aux = has_aux
        self.out_tree = None
        self.aux_tree = None
        self.num_out = 0

    def __call__(self, *leaves):
        out = self.fun(*tree_unflatten(self.in_tree, leaves))
        aux_leaves: list = []
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("expected function with aux output to return a two-element "
                                f"tuple, but got type {type(out)} with value {out!r}")
            out, aux = out
            aux_leaves, self.aux_tree = tree_flatten(aux)
        out_leaves, self.out_tree = tree_flatten(out)
        self.num_out = len(out_leaves)
        return list(out_leaves) + list(aux_leaves)

    def split(self, leaves: Sequence[Any]) -> tuple[Any, Any]:
        """The output pytree and the auxiliary pytree (None without has_aux)."""
        out = tree_unflatten(self.out_tree, [_as_output(x) for x in leaves[:self.num_out]])
        aux = tree_unflatten(self.aux_tree, leaves[self.num_out:]) if self.has_aux else None
        return out, aux


def _as_output(x: Any) -> Any:
    """An output leaf: Python and numpy scalars become Arrays, as JAX returns them."""
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return _to_array(x)
    return x


def _tangent_zeros(aval: core.ShapedArray) -> Any:
    return ad.zeros_like_aval(ad.tangent_aval(aval))


def _like_primal(ct: Any, aval: core.ShapedArray) -> Any:
    """A cotangent with the dtype and weak type of its primal (zeros where symbolic)."""
    if type(ct) is ad.Zero:
        return _tangent_zeros(aval)
    if ad.tangent_dtype(aval.dtype) == dtypes.float0:
        return ct
    return lax._convert_element_type(ct, aval.dtype, aval.weak_type)


# ---------------------------------------------------------------------------------------
# jvp and linearize.

def jvp(fun: Callable, primals: Any, tangents: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Forward-mode Jacobian-vector product (``jax.jvp``).

    Returns ``(primals_out, tangents_out)``, plus ``aux`` with ``has_aux``.
    """
    _check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    p_leaves = [_as_value(p) for p in p_leaves]
    ts = []
    for p, t in zip(p_leaves, t_leaves):
        p_dtype = core.get_aval(p).dtype
        expected = ad.tangent_dtype(p_dtype)
        t_dtype = dtypes.float0 if getattr(t, "dtype", None) == dtypes.float0 else \
            core.get_aval(t).dtype if isinstance(t, core.Tracer) else dtypes.dtype(t)
        if expected != t_dtype:
            raise TypeError("primal and tangent arguments to jax.jvp do not match; dtypes must "
                            "be equal, or in case of int/bool primal dtype the tangent dtype "
                            f"must be float0.Got primal dtype {p_dtype} and so expected tangent "
                            f"dtype {expected}, but got tangent dtype {t_dtype} instead.")
        if np.shape(p) != np.shape(t):
            raise ValueError("jvp called with different primal and tangent shapes;Got primal "
                             f"shape {np.shape(p)} and tangent shape as {np.shape(t)}")
        ts.append(ad.Zero(ad.tangent_aval(core.get_aval(p))) if t_dtype == dtypes.float0
                  else _as_value(t))
    flat = _Flat(fun, p_tree, has_aux)
    out_primals, out_tangents = ad.jvp_flat(flat, p_leaves, ts)
    out, aux = flat.split(out_primals)
    tangents_out = tree_unflatten(flat.out_tree, [ad.instantiate_zeros(t)
                                                  for t in out_tangents[:flat.num_out]])
    return (out, tangents_out, aux) if has_aux else (out, tangents_out)


def _linearize(fun: Callable, primals: Sequence[Any], has_aux: bool
               ) -> tuple[ad.Linearized, _Flat, list[Any], Any]:
    leaves, in_tree = tree_flatten(tuple(primals))
    leaves = [_as_value(x) for x in leaves]
    flat = _Flat(fun, in_tree, has_aux)
    return ad.linearize_flat(flat, leaves), flat, leaves, in_tree


def linearize(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``fun``'s value at ``primals`` and its linearization there (``jax.linearize``):
    ``(primals_out, f_jvp)``, plus ``aux`` with ``has_aux``. ``f_jvp`` evaluates the
    staged linear jaxpr, so calling it does not run ``fun`` again."""
    _check_callable(fun)
    lin, flat, leaves, in_tree = _linearize(fun, primals, has_aux)
    in_avals = [core.get_aval(x) for x in leaves]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(f"expected {in_tree}, got {t_tree}")
        ts = []
        for p_aval, t in zip(in_avals, t_leaves):
            expected = ad.tangent_aval(p_aval)
            got = core.get_aval(t) if getattr(t, "dtype", None) != dtypes.float0 else \
                core.ShapedArray(np.shape(t), dtypes.float0)
            if (got.shape, got.dtype) != (expected.shape, expected.dtype):
                raise ValueError("linearized function called on tangent values inconsistent "
                                 "with the original primal values:\nGot tangent aval "
                                 f"{got} for primal aval {p_aval} but expected {expected}.")
            ts.append(t if got.dtype == dtypes.float0 else _as_value(t))
        outs = lin.jvp(ts)[:flat.num_out]
        return tree_unflatten(flat.out_tree, [ad.instantiate_zeros(o) for o in outs])

    out, aux = flat.split(lin.out_primals)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


# ---------------------------------------------------------------------------------------
# vjp, grad and value_and_grad.

class _VJPFunction:
    """The pullback returned by ``vjp``: output cotangents -> a tuple of input cotangents."""

    __slots__ = ("_lin", "_flat", "_in_tree", "_in_avals", "_out_avals", "__weakref__")

    def __init__(self, lin: ad.Linearized, flat: _Flat, in_tree: Any,
                 in_avals: list[core.ShapedArray]):
        self._lin = lin
        self._flat = flat
        self._in_tree = in_tree
        self._in_avals = in_avals
        self._out_avals = [core.get_aval(x) for x in lin.out_primals[:flat.num_out]]

    def __call__(self, out_ct: Any, *extra_args: Any) -> tuple[Any, ...]:
        if extra_args:
            name = getattr(self._flat.fun, "__name__", "fun")
            raise TypeError(f"The function returned by `jax.vjp` applied to {name} was called "
                            f"with {len(extra_args) + 1} arguments, but functions returned by "
                            "`jax.vjp` must be called with a single argument corresponding to "
                            f"the single value returned by {name} (even if that returned "
                            "value is a tuple or other container).")
        ct_leaves, ct_tree = tree_flatten(out_ct)
        if ct_tree != self._flat.out_tree:
            raise ValueError(
                "unexpected tree structure.\n\nThe argument to a VJP function returned by "
                "`jax.vjp` must match the pytree\nstructure of the differentiated function "
                f"{errors._fun_source_info(self._flat.fun)}.\n\nBut the tree structures "
                f"differ:\n  * the original output was {self._flat.out_tree}, but the "
                f"argument here is {ct_tree}.")
        cts = []
        for ct, aval in zip(ct_leaves, self._out_avals):
            expected = ad.tangent_aval(aval)
            got = core.ShapedArray(np.shape(ct), dtypes.float0) \
                if getattr(ct, "dtype", None) == dtypes.float0 else core.get_aval(ct)
            if (got.shape, got.dtype) != (expected.shape, expected.dtype):
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{got.str_short()}, but expected {expected.str_short()} because the "
                    "corresponding output of the differentiated function had JAX type "
                    f"{aval.str_short()}")
            cts.append(ad.Zero(expected) if got.dtype == dtypes.float0 else _as_value(ct))
        cts += [ad.Zero(core.ShapedArray((), dtypes.float0))] * (
            len(self._lin.out_primals) - len(cts))  # auxiliary outputs
        cts_in = self._lin.vjp(cts)
        return tree_unflatten(self._in_tree, [_like_primal(c, a)
                                              for c, a in zip(cts_in, self._in_avals)])


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``fun``'s value at ``primals`` and its pullback (``jax.vjp``): ``(primals_out,
    vjp_fun)``, plus ``aux`` with ``has_aux``."""
    _check_callable(fun)
    return _vjp(fun, primals, has_aux)


def _vjp(fun: Callable, primals: Sequence[Any], has_aux: bool) -> tuple[Any, ...]:
    lin, flat, leaves, in_tree = _linearize(fun, primals, has_aux)
    pullback = _VJPFunction(lin, flat, in_tree, [core.get_aval(x) for x in leaves])
    out, aux = flat.split(lin.out_primals)
    return (out, pullback, aux) if has_aux else (out, pullback)


def _check_scalar(x: Any) -> None:
    msg = "Gradient only defined for scalar-output functions. Output {}.".format
    if not isinstance(x, (core.Tracer, Array, bool, int, float, complex, np.ndarray, np.generic)):
        raise TypeError(msg(f"was {x}"))
    aval = core.get_aval(x)
    if aval.shape != ():
        raise TypeError(msg(f"had shape: {aval.shape}"))


def _check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    aval = core.get_aval(x)
    if holomorphic and not dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {aval.dtype.name}.")
    if dtypes.issubdtype(aval.dtype, np.integer) or dtypes.issubdtype(aval.dtype, np.bool_):
        if not allow_int:
            raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype "
                            f"that is a sub-dtype of np.inexact), but got {aval.dtype.name}. "
                            "If you want to use Boolean- or integer-valued inputs, use vjp "
                            "or set allow_int to True.")
    elif not dtypes.issubdtype(aval.dtype, np.inexact):
        raise TypeError(f"{name} requires numerical-valued inputs (input dtype that is a "
                        f"sub-dtype of np.bool_ or np.number), but got {aval.dtype.name}.")


def _check_output_dtype_revderiv(name: str, holomorphic: bool, x: Any) -> None:
    aval = core.get_aval(x)
    if holomorphic:
        if not dtypes.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {aval.dtype.name}.")
    elif dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {aval.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")
    elif not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {aval.dtype.name}. For "
                        "differentiation of functions with integer outputs, use jax.vjp "
                        "directly.")


def _one_like(x: Any) -> Any:
    return lax.full_like(x, 1)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence[Any] = ()) -> Callable[..., tuple[Any, Any]]:
    """A function returning ``(fun(*args), grad)`` (``jax.value_and_grad``); with
    ``has_aux``, ``((value, aux), grad)``."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    _check_callable(fun)
    argnums = _ensure_index(argnums)

    @functools.wraps(fun, updated=())
    def value_and_grad_f(*args, **kwargs):
        _check_argnums_passed(argnums, args)
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        for leaf in tree_flatten(dyn_args)[0]:
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, _as_value(leaf))
        ans, pullback, *maybe_aux = _vjp(f_partial, dyn_args, has_aux)
        _check_scalar(ans)
        tree_map(functools.partial(_check_output_dtype_revderiv, "grad", holomorphic), ans)
        g = pullback(_one_like(ans))
        g = g[0] if isinstance(argnums, int) else g
        return ((ans, *maybe_aux) if has_aux else ans), g

    return value_and_grad_f


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``fun`` with respect to the arguments at
    ``argnums`` (``jax.grad``); with ``has_aux``, ``(grad, aux)``.

    Reverse mode by online linearization: ``fun`` runs once on concrete values (so Python
    control flow on them works), its tangent computation is staged into a linear jaxpr,
    and that jaxpr is transposed.
    """
    value_and_grad_f = value_and_grad(fun, argnums, has_aux=has_aux, holomorphic=holomorphic,
                                      allow_int=allow_int, reduce_axes=reduce_axes)

    @functools.wraps(fun, updated=())
    def grad_f(*args, **kwargs):
        return value_and_grad_f(*args, **kwargs)[1]

    @functools.wraps(fun, updated=())
    def grad_f_aux(*args, **kwargs):
        (_, aux), g = value_and_grad_f(*args, **kwargs)
        return g, aux

    return grad_f_aux if has_aux else grad_f


# ---------------------------------------------------------------------------------------
# Jacobians and the Hessian.

def _check_input_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    aval = core.get_aval(x)
    if holomorphic:
        if not dtypes.issubdtype(aval.dtype, np.complexfloating):
            raise TypeError("jacfwd with holomorphic=True requires inputs with complex "
                            f"dtype, but got {aval.dtype.name}.")
    elif not dtypes.issubdtype(aval.dtype, np.floating):
        raise TypeError("jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
                        f"of np.floating), but got {aval.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex inputs or integer "
                        "inputs, use jax.jvp directly.")


def _check_output_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    aval = core.get_aval(x)
    if holomorphic and not dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError("jacfwd with holomorphic=True requires outputs with complex dtype, "
                        f"but got {aval.dtype.name}.")


def _std_basis(leaves: Sequence[Any]) -> list[Any]:
    """The standard basis of the flattened ``leaves``, batched along a leading axis: one
    array per leaf, of shape ``(total size,) + leaf.shape`` and the leaf's dtype."""
    sizes = [int(np.size(x)) for x in leaves]
    eye = np.eye(sum(sizes))
    out, start = [], 0
    for leaf, n in zip(leaves, sizes):
        part = eye[:, start:start + n].reshape((eye.shape[0], *np.shape(leaf)))
        out.append(creation.asarray(part, dtype=core.get_aval(leaf).dtype))
        start += n
    return out


def _unravel_last(arr: Any, leaves: Sequence[Any], example: Any) -> list[Any]:
    """Splits the last axis of ``arr`` by the sizes of ``leaves`` and reshapes each part
    to ``arr.shape[:-1] + leaf.shape``, cast to ``example``'s dtype and weak type (to the
    leaf's own when ``example`` is None)."""
    out, start = [], 0
    head = tuple(np.shape(arr)[:-1])
    for leaf in leaves:
        n = int(np.size(leaf))
        idx = (slice(None),) * len(head) + (slice(start, start + n),)
        part = arr[idx].reshape(head + tuple(np.shape(leaf)))
        ex = core.get_aval(leaf if example is None else example)
        if dtypes.issubdtype(part.dtype, np.complexfloating) and \
                not dtypes.issubdtype(ex.dtype, np.complexfloating):
            part = part.real
        out.append(lax._convert_element_type(part, ex.dtype, ex.weak_type))
        start += n
    return out


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode (``jax.jacfwd``): ``fun`` is linearized
    once and the linear map is vmapped over the input basis."""
    _check_callable(fun)
    argnums = _ensure_index(argnums)

    @functools.wraps(fun, updated=())
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        tree_map(functools.partial(_check_input_dtype_jacfwd, holomorphic), dyn_args)
        lin, flat, leaves, in_tree = _linearize(f_partial, dyn_args, has_aux)
        outs = [_as_output(y) for y in lin.out_primals[:flat.num_out]]
        for y in outs:
            _check_output_dtype_jacfwd(holomorphic, y)
        # Every input basis vector through the linear map at once: output leaf j comes
        # back as y_j.shape + (total input size,).
        columns = vmap(lambda *t: [ad.instantiate_zeros(c) for c in lin.jvp(t)[:flat.num_out]],
                       out_axes=-1)(*_std_basis(leaves))
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
        ex_leaves, ex_tree = tree_flatten(example_args)
        jac = [tree_unflatten(ex_tree, _unravel_last(c, ex_leaves, y))
               for c, y in zip(columns, outs)]
        jac_tree = tree_unflatten(flat.out_tree, jac)
        if has_aux:
            return jac_tree, flat.split(lin.out_primals)[1]
        return jac_tree

    return jacfun


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode (``jax.jacrev``): one ``vjp``, its pullback
    vmapped over the output basis."""
    _check_callable(fun)

    @functools.wraps(fun, updated=())
    def jacfun(*args, **kwargs):
        nums = _ensure_index(argnums)
        f_partial, dyn_args = _argnums_partial(fun, nums, args, kwargs)
        tree_map(functools.partial(_check_input_dtype_revderiv, "jacrev", holomorphic,
                                   allow_int), dyn_args)
        y, pullback, *maybe_aux = _vjp(f_partial, dyn_args, has_aux)
        tree_map(functools.partial(_check_output_dtype_revderiv, "jacrev", holomorphic), y)
        y_leaves, y_tree = tree_flatten(y)
        example_args = dyn_args[0] if isinstance(argnums, int) else dyn_args
        x_leaves = tree_flatten(dyn_args)[0]
        differentiable = [ad.tangent_dtype(core.get_aval(x).dtype) != dtypes.float0
                          for x in x_leaves]

        def pull(*ct):
            cts = tree_flatten(pullback(tree_unflatten(y_tree, ct)))[0]
            return [c for c, d in zip(cts, differentiable) if d]

            # Every output basis vector pulled back at once: input leaf i comes back as
        # x_i.shape + (total output size,).
        rows = iter(vmap(pull, out_axes=-1)(*_std_basis(y_leaves)) if y_leaves else ())
        per_input = []
        for x, d in zip(x_leaves, differentiable):
            shape = np.shape(x)
            if not y_leaves:
                per_input.append([])
                continue
            if not d:
                per_input.append([np.zeros((*np.shape(y), *shape), dtypes.float0)
                                  for y in y_leaves])
                continue
            arr = next(rows)
            # x.shape + (output size,) -> per output leaf, y.shape + x.shape.
            parts = _unravel_last(arr, y_leaves, x)
            per_input.append([jnp_shape.moveaxis(p, tuple(range(len(shape))),
                                                 tuple(range(p.ndim - len(shape), p.ndim)))
                              for p in parts])
        # per_input[i][j]: output leaf j by input leaf i, into output-tree-of-input-trees.
        x_tree = tree_structure(example_args)
        jac_tree = tree_unflatten(y_tree, [tree_unflatten(x_tree, [per_input[i][j]
                                                                   for i in range(len(x_leaves))])
                                           for j in range(len(y_leaves))])
        return (jac_tree, *maybe_aux) if has_aux else jac_tree

    return jacfun


jacobian = jacrev


def hessian(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of ``fun``: ``jacfwd(jacrev(fun))`` (``jax.hessian``)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
                  argnums, has_aux=has_aux, holomorphic=holomorphic)
