"""``jax.lax.with_sharding_constraint``: the identity on values that records the layout an
intermediate must have (JAX's ``sharding_constraint_p``).

On one host every device reads host memory, so the value is unchanged; a concrete array
is laid out by the sharding, and under ``jit`` the equation tells the result layout
(``sharded_jit.py``) the sharding of the value it constrains.
"""
from __future__ import annotations

from typing import Any

from tinyxla._src import core
from tinyxla._src.core import Primitive, ShapedArray
from tinyxla._src.interpreters import ad, batching
from tinyxla._src.interpreters.lowering import register_lowering
from tinyxla._src.sharded_array import put_sharded
from tinyxla._src.sharding import NamedSharding, resolve
from tinyxla._src.tree_util import tree_flatten, tree_unflatten
from tinyxla._src.vmap import _flatten_axes

sharding_constraint_p = Primitive("sharding_constraint")
sharding_constraint_p.def_abstract_eval(
    lambda x, *, sharding: ShapedArray(x.shape, x.dtype, x.weak_type))


def _impl(x: Any, *, sharding: Any) -> Any:
    if isinstance(sharding, NamedSharding):
        return put_sharded(x, sharding)
    return x


sharding_constraint_p.def_impl(_impl)
register_lowering(sharding_constraint_p, lambda ctx, x, *, sharding: x)
ad.deflinear2(sharding_constraint_p,
              lambda t, _, *, sharding: [sharding_constraint_p.bind(t, sharding=sharding)])


def _batch(vals, dims, *, sharding):
    # The mapped axis is not part of the constrained layout: the constraint is dropped.
    return vals[0], dims[0]


batching.primitive_batchers[sharding_constraint_p] = _batch


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrains the layout of every leaf of ``x`` (``jax.lax.with_sharding_constraint``);
    ``shardings`` is a sharding, a PartitionSpec under ``set_mesh``, or a pytree prefix."""
    leaves, tree = tree_flatten(x)
    specs = _flatten_axes("with_sharding_constraint shardings", x, shardings)
    out = []
    for leaf, s in zip(leaves, specs):
        s = resolve(s)
        if isinstance(s, NamedSharding):
            shape = core.get_aval(leaf).shape
            if len(s.spec) > len(shape):
                raise ValueError("One of with_sharding_constraint arguments is incompatible "
                                 f"with its sharding annotation {s}: Sharding {s} is only valid "
                                 f"for values of rank at least {len(s.spec)}, but was applied "
                                 f"to a value of rank {len(shape)}.")
            s.check_shape(shape)
        out.append(sharding_constraint_p.bind(leaf, sharding=s))
    return tree_unflatten(tree, out)
