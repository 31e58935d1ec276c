"""Pytrees: flattening nested containers to leaves and back (mirrors ``jax.tree_util``).

Containers are tuples, lists, dicts (keys sorted), None, namedtuples, OrderedDict
(insertion order, as JAX), and any type registered with ``register_pytree_node`` and its
variants. Flattening with key paths (``tree_flatten_with_path``) names each leaf's way
from the root; plain flattening, on every jit call's path, never builds keys.
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import textwrap
from typing import Any, Callable, Hashable, Iterable, NamedTuple, Sequence, TypeVar

from tinyxla import _core
from tinyxla._src.tree_keys import (
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey, keystr)

T = TypeVar("T")


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, Iterable[Any]], Any]
    # (key, child) pairs and the aux data; None: the children get FlattenedIndexKeys.
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Any]] | None = None


_registry: dict[type, _NodeType] = {}
# _node_type's answer per type (flattening is on every jit call's path); registering a
# node type clears it.
_type_nodes: dict[type, tuple[type, _NodeType] | None] = {}


_KeyChildren = Iterable[tuple[KeyEntry, Any]]


def register_pytree_node(nodetype: type[T], flatten_func: Callable[[T], tuple[Iterable[Any], Any]],
                         unflatten_func: Callable[[Any, Iterable[Any]], T],
                         flatten_with_keys_func: Callable[[T], tuple[_KeyChildren, Any]]
                         | None = None) -> None:
    """Registers a container type (``jax.tree_util.register_pytree_node``); with
    ``flatten_with_keys_func`` its children get those keys in key paths."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func, flatten_with_keys_func)
    _type_nodes.clear()


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator using ``tree_flatten`` / ``tree_unflatten`` methods (as JAX)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(
        nodetype: type[T],
        flatten_with_keys: Callable[[T], tuple[Iterable[tuple[KeyEntry, Any]], Any]],
        unflatten_func: Callable[[Any, Iterable[Any]], T],
        flatten_func: Callable[[T], tuple[Iterable[Any], Any]] | None = None) -> None:
    """Registers a container whose flattening names its children
    (``jax.tree_util.register_pytree_with_keys``); ``flatten_func``, when given, is the
    faster keyless flattening (same children, same aux data)."""
    if not flatten_func:
        def flatten_func(tree):
            key_children, aux = flatten_with_keys(tree)
            return [c for _, c in key_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator using ``tree_flatten_with_keys`` (and ``tree_flatten`` if defined)
    and ``tree_unflatten`` methods (``jax.tree_util.register_pytree_with_keys_class``)."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_static(cls: type[T]) -> type[T]:
    """Registers ``cls`` as a node without children: an instance is part of the tree's
    structure, so jit treats it as static (``jax.tree_util.register_static``). Instances
    must be hashable."""
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def register_dataclass(nodetype: type[T], data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type[T]:
    """Registers a class whose ``data_fields`` are children and ``meta_fields`` static
    structure (``jax.tree_util.register_dataclass``); for a dataclass both default to its
    fields, those with ``metadata=dict(static=True)`` being meta. Usable as a decorator."""
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            "specified when either is specified. Got "
                            f"{data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta, *data} != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with"
                   " ``init=True`` and only them.")
            if missing := init_fields - {*meta, *data}:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress"
                        " this error.")
            if unexpected := {*meta, *data} - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data) & set(meta):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields:"
                         f" {overlap}.")
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom dataclass PyTreeDef type registration for {nodetype}.")
    keys = tuple(GetAttrKey(n) for n in data)

    def flatten(x):
        return [getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)

    def flatten_with_keys(x):
        return [(k, getattr(x, n)) for k, n in zip(keys, data)], tuple(getattr(x, n) for n in meta)

    def unflatten(aux, children):
        return nodetype(**dict(zip(meta, aux)), **dict(zip(data, children)))

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def _sequence_keys(seq):
    return [(SequenceKey(i), c) for i, c in enumerate(seq)], None


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c), _sequence_keys)
register_pytree_node(list, lambda l: (l, None), lambda _, c: list(c), _sequence_keys)
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None, lambda n: ((), None))


def _dict_flatten(d):
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


def _dict_flatten_with_keys(d):
    keys = sorted(d)
    return [(DictKey(k), d[k]) for k in keys], tuple(keys)


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)),
                     _dict_flatten_with_keys)
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)),
                     lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)))


def _defaultdict_flatten_with_keys(d):
    keys = tuple(sorted(d))
    return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)


register_pytree_node(collections.defaultdict,
                     lambda d: ([d[k] for k in sorted(d)], (d.default_factory, tuple(sorted(d)))),
                     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
                     _defaultdict_flatten_with_keys)


def _node_type(x: Any) -> tuple[type, _NodeType] | None:
    t = type(x)
    try:
        return _type_nodes[t]
    except KeyError:
        return _node_of_type(t)


def _node_of_type(t: type) -> tuple[type, _NodeType] | None:
    node = _registry.get(t)
    if node is not None:
        found = t, node
    elif issubclass(t, tuple) and hasattr(t, "_fields"):  # namedtuple
        keys = tuple(GetAttrKey(f) for f in t._fields)
        found = t, _NodeType(lambda n: (tuple(n), None), lambda _, c, t=t: t(*c),
                             lambda n, keys=keys: (list(zip(keys, n)), None))
    else:
        found = None
    _type_nodes[t] = found
    return found


class PyTreeDef:
    """The structure of a pytree (``jax.tree_util.PyTreeDef``); hashable and comparable."""

    __slots__ = ("node", "aux", "_kids", "num_leaves", "_hash")

    def __init__(self, node: type | None, aux: Any, children: tuple["PyTreeDef", ...],
                 num_leaves: int | None = None):
        self.node = node  # None marks a leaf
        self.aux = aux
        self._kids = children
        if num_leaves is None:
            num_leaves = 1 if node is None else sum(c.num_leaves for c in children)
        self.num_leaves = num_leaves
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self._kids)

    def children(self) -> list["PyTreeDef"]:
        """The treedefs of the root's children (``PyTreeDef.children``)."""
        return list(self._kids)

    def node_data(self) -> tuple[type, Any] | None:
        """The root's (node type, aux data); None for a leaf (``PyTreeDef.node_data``)."""
        return None if self.node is None else (self.node, self.aux)

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """This structure with ``inner`` at each leaf (``PyTreeDef.compose``)."""
        if self.node is None:
            return inner
        return PyTreeDef(self.node, self.aux, tuple(c.compose(inner) for c in self._kids))

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        leaves = list(leaves)
        if len(leaves) < self.num_leaves:
            raise ValueError(f"Too few leaves for PyTreeDef; expected {self.num_leaves}, got "
                             f"{len(leaves)}")
        if len(leaves) > self.num_leaves:
            raise ValueError(f"Too many leaves for PyTreeDef; expected {self.num_leaves}.")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.node is None:
            return next(it)
        children = [c._build(it) for c in self._kids]
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
        if aux != self.aux or len(children) != len(self._kids):
            raise ValueError(f"Tree structures did not match: {self} vs a tree with aux {aux!r}.")
        for c, sub in zip(self._kids, children):
            c._up_to(sub, out)

    def _key(self):
        return (self.node, self.aux, self._kids)

    def __eq__(self, other):
        return isinstance(other, PyTreeDef) and self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            try:
                self._hash = hash(self._key())
            except TypeError:  # unhashable aux data: compare by structure only
                self._hash = hash((self.node, self._kids))
        return self._hash

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self) -> str:
        if self.node is None:
            return "*"
        kids = [c._str() for c in self._kids]
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
        return f"CustomNode({self.node.__name__}[{self.aux}], [{', '.join(kids)}])"


def _node_for(t: type) -> _NodeType:
    node = _registry.get(t)
    if node is None:  # namedtuple
        found = _type_nodes.get(t)
        return found[1] if found else _NodeType(lambda n: (tuple(n), None), lambda _, c: t(*c))
    return node


_LEAF = PyTreeDef(None, None, ())


def tree_builder(treedef: PyTreeDef) -> Callable[[Sequence[Any]], Any]:
    """``treedef.unflatten`` compiled once into C++ steps (jit's output trees)."""
    program = []
    stack = [(treedef, False)]
    while stack:
        node, kids_done = stack.pop()
        if node.node is None:
            program.append((0, 0, None, None))
        elif not kids_done:
            stack.append((node, True))
            stack.extend((kid, False) for kid in reversed(node._kids))
        elif node.node is tuple or node.node is list:
            program.append((1 if node.node is tuple else 2, len(node._kids), None, None))
        elif node.node is type(None):
            program.append((3, 0, None, None))
        else:
            program.append((4, len(node._kids), _node_for(node.node).unflatten, node.aux))
    return _core.TreeBuilder(program)


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
    if is_leaf is None:
        return _core.tree_leaves(tree)
    leaves: list[Any] = []
    _collect_leaves(tree, is_leaf, leaves)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Applies ``f`` leafwise over one or more trees of the same structure (``jax.tree.map``)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = _flatten_rest(treedef, tree, rest, is_leaf, "tree_map tree")
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def _flatten_rest(treedef: PyTreeDef, tree: Any, rest: Sequence[Any],
                  is_leaf: Callable[[Any], bool] | None, name: str) -> list[list[Any]]:
    """Each of ``rest`` flattened up to ``treedef``, or JAX's structure error naming the
    first key path where it does not have ``tree``'s structure."""
    try:
        return [treedef.flatten_up_to(r) for r in rest]
    except ValueError as e:
        for r in rest:
            err = next(_prefix_errors((), tree, r, is_leaf), None)
            if err is not None:
                raise err(name) from None
        raise e from None


class Unspecified:
    """The default of ``tree_reduce``'s ``initializer``: none given."""


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: T | Unspecified = Unspecified(),
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Folds ``function`` over the leaves, left to right (``jax.tree.reduce``)."""
    if isinstance(initializer, Unspecified):
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: T | Unspecified = Unspecified(),
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduces the leaves with an associative ``operation`` as a balanced tree of calls
    (``jax.tree.reduce_associative``): ``((a+b)+(c+(d+e)))`` for five leaves."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if isinstance(identity, Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(lo: int, hi: int) -> T:
        if hi - lo == 1:
            return leaves[lo]
        mid = lo + (hi - lo) // 2
        return operation(reduce(lo, mid), reduce(mid, hi))
    return reduce(0, len(leaves))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy (``jax.tree.all``)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees turned into an inner tree of outer trees
    (``jax.tree.transpose``); ``inner_treedef=None`` infers it from the first subtree."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``full_tree``'s structure with each leaf of ``prefix_tree`` repeated over the
    subtree at its place (``jax.tree.broadcast``)."""
    leaves: list[Any] = []
    try:
        tree_map(lambda x, sub: leaves.extend([x] * tree_structure(sub).num_leaves),
                 prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        err = next(_prefix_errors((), prefix_tree, full_tree, is_leaf), None)
        if err is None:
            raise
        raise err("broadcast_prefix prefix_tree") from None
    return tree_structure(full_tree).unflatten(leaves)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure is a single node: a leaf, None or a childless node
    (``jax.tree_util.treedef_is_leaf``)."""
    return not treedef._kids


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children (``jax.tree_util.treedef_children``)."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple of trees of these structures (``jax.tree_util.treedef_tuple``)."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether no element is a container (``jax.tree_util.all_leaves``)."""
    if is_leaf is None:
        return all(_node_type(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a registered container type or a namedtuple
    (``jax.tree_util.is_tree_node``)."""
    return _node_of_type(typ) is not None


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """A container's children and aux data (``jax.tree_util.flatten_one_level``); a
    ValueError for a leaf."""
    nt = _node_type(tree)
    if nt is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return nt[1].flatten(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """A container's (key, child) pairs and aux data
    (``jax.tree_util.flatten_one_level_with_keys``); a ValueError for a leaf."""
    nt = _node_type(tree)
    if nt is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return _key_children(nt[1], tree)


def _key_children(node: _NodeType, tree: Any) -> tuple[list[tuple[KeyEntry, Any]], Any]:
    if node.flatten_with_keys is not None:
        key_children, aux = node.flatten_with_keys(tree)
        return list(key_children), aux
    children, aux = node.flatten(tree)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux


def _flatten_with_path(tree, is_leaf, path: KeyPath, leaves: list) -> PyTreeDef:
    if is_leaf is not None and is_leaf(path, tree):
        leaves.append((path, tree))
        return _LEAF
    nt = _node_type(tree)
    if nt is None:
        leaves.append((path, tree))
        return _LEAF
    key_children, aux = _key_children(nt[1], tree)
    start = len(leaves)
    kids = tuple([_flatten_with_path(c, is_leaf, (*path, k), leaves) for k, c in key_children])
    return PyTreeDef(nt[0], aux, kids, len(leaves) - start)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``tree_flatten`` with each leaf's key path (``jax.tree.flatten_with_path``);
    ``is_leaf`` is called as ``is_leaf(path, x)`` when ``is_leaf_takes_path``."""
    if is_leaf is not None and not is_leaf_takes_path:
        leaf_fn = is_leaf
        is_leaf = lambda _, x: leaf_fn(x)  # noqa: E731
    leaves: list[tuple[KeyPath, Any]] = []
    return leaves, _flatten_with_path(tree, is_leaf, (), leaves)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The (key path, leaf) pairs (``jax.tree.leaves_with_path``)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """``tree_map`` whose ``f`` gets each leaf's key path first
    (``jax.tree.map_with_path``)."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    plain_is_leaf = None if is_leaf is None or is_leaf_takes_path else is_leaf
    others = _flatten_rest(treedef, tree, rest, plain_is_leaf, "tree_map_with_path tree")
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(path_leaves, *others))


def _prefix_errors(key_path: KeyPath, prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None
                   ) -> Iterable[Callable[[str], ValueError]]:
    """JAX's messages for the places where ``prefix_tree`` is not a prefix of
    ``full_tree``, each a function of the name the message gives the prefix tree."""
    if tree_structure(prefix_tree, is_leaf).node is None:
        return  # a leaf is a prefix of any tree
    where = keystr(key_path)
    if type(prefix_tree) is not type(full_tree):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full_tree)}.")
        return
    prefix_kc, prefix_meta = flatten_one_level_with_keys(prefix_tree)
    full_kc, full_meta = flatten_one_level_with_keys(full_tree)
    prefix_keys = [k for k, _ in prefix_kc]
    full_keys = [k for k, _ in full_kc]
    if isinstance(prefix_tree, (list, tuple)):
        if len(prefix_tree) != len(full_tree):
            ty = type(prefix_tree).__name__
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty} at key path\n"
                f"    {name}{where}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty} of length {len(prefix_tree)}, but the full pytree has a subtree of "
                f"the same type but of length {len(full_tree)}.")
            return
    elif len(prefix_kc) != len(full_kc):
        try:
            diff: set | None = set(prefix_keys).symmetric_difference(full_keys)
        except TypeError:
            diff = None
        yield lambda name: ValueError(
            "pytree structure error: different numbers of pytree children at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"with {len(prefix_kc)} child keys\n"
            f"    {' '.join(keystr((k,), simple=True) for k in prefix_keys)}\n"
            "but at the same key path the full pytree has a subtree of the same "
            f"type but with {len(full_kc)} child keys\n"
            f"    {' '.join(keystr((k,), simple=True) for k in full_keys)}\n"
            + ("" if diff is None else
               "so the symmetric difference on key sets is\n"
               f"    {' '.join(keystr((k,), simple=True) for k in diff)}"))
        return
    if prefix_meta != full_meta:
        prefix_str, full_str = str(prefix_meta), str(full_meta)
        meta_diff = textwrap.indent("\n".join(difflib.ndiff(prefix_str.splitlines(),
                                                            full_str.splitlines())), "    ")
        yield lambda name: ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"with metadata\n"
            f"    {prefix_str}\n"
            "but at the same key path the full pytree has a subtree of the same "
            f"type but with metadata\n"
            f"    {full_str}\n"
            f"so the diff in the metadata at these pytree nodes is\n"
            f"{meta_diff}")
        return
    for k, (_, p), (_, f) in zip(prefix_keys, prefix_kc, full_kc):
        yield from _prefix_errors((*key_path, k), p, f, is_leaf)


class PyTreeRegistry:
    """The registry of container types (``jax.tree_util.default_registry``'s class);
    tinyxla has the one registry, which these methods read and extend."""

    def flatten(self, tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> tuple[list[Any], PyTreeDef]:
        return tree_flatten(tree, is_leaf)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Hashable] | None:
        nt = _node_type(tree)
        return None if nt is None else nt[1].flatten(tree)

    def flatten_one_level_with_keys(self, tree: Any
                                    ) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable] | None:
        nt = _node_type(tree)
        return None if nt is None else _key_children(nt[1], tree)

    def flatten_with_path(self, tree: Any, is_leaf: Callable[[Any, Any], bool] | None = None
                          ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
        return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path=True)

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def register_node(self, nodetype: type, to_iterable: Callable, from_iterable: Callable,
                      to_iterable_with_keys: Callable | None = None) -> None:
        register_pytree_node(nodetype, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, nodetype: type, data_fields: Sequence[str],
                                meta_fields: Sequence[str]) -> None:
        register_dataclass(nodetype, data_fields, meta_fields)


default_registry = PyTreeRegistry()


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its arguments are leaves, the function is
    static structure (``jax.tree_util.Partial``)."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)


_core.set_pytree_registry(_type_nodes, _node_of_type)
