"""Pytrees: flattening nested containers to leaves and back (mirrors ``jax.tree_util``).

Containers are tuples, lists, dicts (keys sorted), None, namedtuples, OrderedDict
(insertion order, as JAX), and any type registered with ``register_pytree_node``.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, Iterable, NamedTuple


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, Iterable[Any]], Any]


_registry: dict[type, _NodeType] = {}
# _node_type's answer per type (flattening is on every jit call's path); registering a
# node type clears it.
_type_nodes: dict[type, tuple[type, _NodeType] | None] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Registers a container type (``jax.tree_util.register_pytree_node``)."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)
    _type_nodes.clear()


def register_pytree_node_class(cls: type) -> type:
    """Class decorator using ``tree_flatten`` / ``tree_unflatten`` methods (as JAX)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype: type, data_fields: list[str] | None = None,
                       meta_fields: list[str] | None = None, drop_fields=()) -> type:
    """Registers a dataclass whose ``data_fields`` are children (``jax.tree_util.register_dataclass``)."""
    if data_fields is None or meta_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, flatten, unflatten)
    return nodetype


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)


def _dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)))
register_pytree_node(collections.defaultdict,
                     lambda d: ([d[k] for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
                     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)))


def _node_type(x: Any) -> tuple[type, _NodeType] | None:
    t = type(x)
    try:
        return _type_nodes[t]
    except KeyError:
        pass
    node = _registry.get(t)
    if node is not None:
        found = t, node
    elif issubclass(t, tuple) and hasattr(t, "_fields"):  # namedtuple
        found = t, _NodeType(lambda n: (tuple(n), None), lambda _, c, t=t: t(*c))
    else:
        found = None
    _type_nodes[t] = found
    return found


class PyTreeDef:
    """The structure of a pytree (``jax.tree_util.PyTreeDef``); hashable and comparable."""

    __slots__ = ("node", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node: type | None, aux: Any, children: tuple["PyTreeDef", ...],
                 num_leaves: int | None = None):
        self.node = node  # None marks a leaf
        self.aux = aux
        self.children = children
        if num_leaves is None:
            num_leaves = 1 if node is None else sum(c.num_leaves for c in children)
        self.num_leaves = num_leaves
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"Too {'few' if len(leaves) < self.num_leaves else 'many'} leaves "
                             f"for PyTreeDef; expected {self.num_leaves}, got {len(leaves)}.")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.node is None:
            return next(it)
        children = [c._build(it) for c in self.children]
        return _node_for(self.node).unflatten(self.aux, children)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this treedef's leaves (``PyTreeDef.flatten_up_to``)."""
        out: list[Any] = []
        self._up_to(tree, out)
        return out

    def _up_to(self, tree, out):
        if self.node is None:
            out.append(tree)
            return
        nt = _node_type(tree)
        if nt is None or nt[0] is not self.node:
            raise ValueError(f"Tree structures did not match: expected {self.node.__name__} "
                             f"node, got {type(tree).__name__}.")
        children, aux = nt[1].flatten(tree)
        children = list(children)
        if aux != self.aux or len(children) != len(self.children):
            raise ValueError(f"Tree structures did not match: {self} vs a tree with aux {aux!r}.")
        for c, sub in zip(self.children, children):
            c._up_to(sub, out)

    def _key(self):
        return (self.node, self.aux, self.children)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            try:
                self._hash = hash(self._key())
            except TypeError:  # unhashable aux data: compare by structure only
                self._hash = hash((self.node, self.children))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.node is None:
            return "*"
        kids = [c._str() for c in self.children]
        if self.node is tuple:
            return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
        if self.node is list:
            return "[" + ", ".join(kids) + "]"
        if self.node is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, kids)) + "}"
        if self.node is type(None):
            return "None"
        if issubclass(self.node, tuple) and hasattr(self.node, "_fields"):
            return f"CustomNode(namedtuple[{self.node.__name__}], [{', '.join(kids)}])"
        return f"CustomNode({self.node.__name__}[{self.aux!r}], [{', '.join(kids)}])"


def _node_for(t: type) -> _NodeType:
    node = _registry.get(t)
    if node is None:  # namedtuple
        found = _type_nodes.get(t)
        return found[1] if found else _NodeType(lambda n: (tuple(n), None), lambda _, c: t(*c))
    return node


_LEAF = PyTreeDef(None, None, ())


def _flatten(tree, is_leaf, leaves) -> PyTreeDef:
    # On every jit call and tree_map: tuples and lists skip the registry, and the leaf
    # count is the growth of ``leaves`` rather than a sum over the children.
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    t = type(tree)
    if t is tuple or t is list:
        node, aux, children = t, None, tree
    else:
        nt = _node_type(tree)
        if nt is None:
            leaves.append(tree)
            return _LEAF
        node = nt[0]
        children, aux = nt[1].flatten(tree)
    start = len(leaves)
    kids = tuple([_flatten(c, is_leaf, leaves) for c in children])
    return PyTreeDef(node, aux, kids, len(leaves) - start)


def _collect_leaves(tree, is_leaf, leaves) -> None:
    """``_flatten`` without the structure (``tree_leaves``, ``block_until_ready``)."""
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return
    t = type(tree)
    if t is tuple or t is list:
        children = tree
    else:
        nt = _node_type(tree)
        if nt is None:
            leaves.append(tree)
            return
        children = nt[1].flatten(tree)[0]
    for c in children:
        _collect_leaves(c, is_leaf, leaves)


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """Leaves in order, and the structure (``jax.tree_util.tree_flatten``)."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, is_leaf, leaves)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    leaves: list[Any] = []
    _collect_leaves(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Applies ``f`` leafwise over one or more trees of the same structure (``jax.tree.map``)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_reduce(f: Callable[[Any, Any], Any], tree: Any, *initializer: Any,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    return functools.reduce(f, tree_leaves(tree, is_leaf), *initializer)


def tree_all(tree: Any) -> bool:
    return all(tree_leaves(tree))


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node is None


def all_leaves(iterable: Iterable[Any]) -> bool:
    return all(_node_type(x) is None for x in iterable)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its arguments are leaves, the function is
    static structure (``jax.tree_util.Partial``)."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
