"""Pytree flattening against structures and reprs pinned from JAX 0.10.2."""
import collections
import dataclasses

import pytest

from tinyxla import tree_util as tu
import tinyxla

P = collections.namedtuple("P", "a b")


def test_flatten_order_and_repr():
    tree = {"b": [1, (2, 3)], "a": None, "c": P(4, 5),
            "d": collections.OrderedDict([("z", 1), ("y", 2)])}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 1, 2]
    assert repr(treedef) == ("PyTreeDef({'a': None, 'b': [*, (*, *)], 'c': CustomNode("
                             "namedtuple[P], [*, *]), 'd': CustomNode(OrderedDict[('z', 'y')], "
                             "[*, *])})")
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure([1, [2]])) == "PyTreeDef([*, [*]])"


def test_none_is_an_empty_node():
    assert tu.tree_leaves([None, 1, (None,)]) == [1]


def test_unflatten_wrong_count():
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 2, got 1"):
        tu.tree_unflatten(tu.tree_structure((1, 2)), [1])


def test_tree_map_several_trees_and_is_leaf():
    assert tu.tree_map(lambda a, b: a + b, {"x": (1, 2)}, {"x": (10, 20)}) == {"x": (11, 22)}
    assert tinyxla.tree.map(lambda x: x, {"a": 1}, is_leaf=lambda x: isinstance(x, dict)) == {"a": 1}
    with pytest.raises(ValueError):
        tu.tree_map(lambda a, b: a + b, (1, 2), [1, 2])


def test_registration_forms():
    @tu.register_pytree_node_class
    class Box:
        def __init__(self, v, tag):
            self.v, self.tag = v, tag

        def tree_flatten(self):
            return (self.v,), self.tag

        @classmethod
        def tree_unflatten(cls, tag, children):
            return cls(children[0], tag)

    out = tu.tree_map(lambda x: x * 2, Box(3, "t"))
    assert (out.v, out.tag) == (6, "t")

    @dataclasses.dataclass
    class Params:
        w: int
        name: str = dataclasses.field(metadata=dict(static=True), default="p")

    tu.register_dataclass(Params)
    leaves, treedef = tu.tree_flatten(Params(1, "q"))
    assert leaves == [1]
    assert tu.tree_unflatten(treedef, [5]) == Params(5, "q")
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Params, lambda p: ((), None), lambda a, c: None)


def test_partial_is_a_pytree():
    p = tu.Partial(lambda x, y: x + y, 1)
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1]
    assert tu.tree_unflatten(treedef, [10])(2) == 12


def test_treedef_equality_and_hash():
    a = tu.tree_structure({"x": [1, 2]})
    b = tu.tree_structure({"x": [3, 4]})
    assert a == b and hash(a) == hash(b)
    assert a != tu.tree_structure({"x": (1, 2)})


def test_deep_tree():
    tree = 0
    for _ in range(200):
        tree = [tree]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [0] and tu.tree_unflatten(treedef, [1]) is not None
