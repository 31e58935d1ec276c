"""``jax.flatten_util.ravel_pytree``: a pytree of arrays as one 1-D array, and the function
that splits such an array back into the tree."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyxla._src import dtypes
from tinyxla._src.lax import lax
from tinyxla._src.tree_util import PyTreeDef, tree_flatten, tree_unflatten


class _HashablePartial:
    """``functools.partial`` that hashes and compares by function and arguments, so two
    unravel functions of the same structure are equal (as JAX's ``HashablePartial``)."""

    def __init__(self, f: Callable, *args: Any):
        self.f, self.args = f, args

    def __eq__(self, other: Any) -> bool:
        return (type(other) is _HashablePartial and self.f is other.f
                and self.args == other.args)

    def __hash__(self) -> int:
        return hash((self.f, self.args))

    def __call__(self, *args: Any) -> Any:
        return self.f(*self.args, *args)


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The leaves of ``pytree`` raveled and concatenated into one 1-D array of their
    promoted dtype, and the inverse (``jax.flatten_util.ravel_pytree``). A tree without
    leaves gives an empty float32 array."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _HashablePartial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef: PyTreeDef, unravel_list: Callable, flat: Any) -> Any:
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves: list[Any]) -> tuple[Any, Callable[[Any], list[Any]]]:
    if not leaves:
        return lax.full([0], 0, "float32"), lambda _: []
    from_dtypes = tuple(dtypes.dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        # No conversion, so the unravel function takes any dtype (as JAX's).
        raveled = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return raveled, _HashablePartial(_unravel_list_single_dtype, sizes, shapes)
    raveled = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                               for x, n in zip(leaves, sizes)], 0)
    return raveled, _HashablePartial(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _split(arr: Any, sizes: tuple[int, ...]) -> list[Any]:
    """``arr`` cut into consecutive pieces of ``sizes`` (``lax.split`` on axis 0)."""
    if sum(sizes) != arr.shape[0]:
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension 0 of the "
                         f"operand shape [{', '.join(map(str, arr.shape))}]")
    starts = np.cumsum((0,) + sizes)
    return [lax.slice(arr, (int(a),), (int(b),)) for a, b in zip(starts[:-1], starts[1:])]


def _unravel_list_single_dtype(sizes: tuple[int, ...], shapes: tuple, arr: Any) -> list[Any]:
    return [lax.reshape(c, s) for c, s in zip(_split(arr, sizes), shapes)]


def _unravel_list(sizes: tuple[int, ...], shapes: tuple, from_dtypes: tuple,
                  to_dtype: np.dtype, arr: Any) -> list[Any]:
    arr_dtype = dtypes.dtype(arr)
    if arr_dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {arr_dtype}, "
                        f"but expected dtype {to_dtype}")
    return [lax.convert_element_type(lax.reshape(c, s), dt)
            for c, s, dt in zip(_split(arr, sizes), shapes, from_dtypes)]
