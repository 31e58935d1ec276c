"""Key paths and the rest of ``jax.tree_util`` / ``jax.tree``, against outputs pinned from
JAX 0.10.2."""
import collections
import dataclasses
import pickle

import numpy as np
import pytest

import tinyxla
import tinyxla.numpy as jnp
from tinyxla import tree_util as tu

NT = collections.namedtuple("NT", "a b")


class Custom:
    def __init__(self, x, y):
        self.x, self.y = x, y


tu.register_pytree_node(Custom, lambda c: ((c.x, c.y), "aux"), lambda a, ch: Custom(*ch))


def _mixed_tree():
    return {"b": [1, (2, NT(3, 4))], "a": None, "c": Custom(5, [6]),
            "d": collections.OrderedDict([("z", 7), ("y", 8)]),
            "e": collections.defaultdict(int, {2: 9, 1: 10}),
            "f": tu.Partial(max, 11, k=12)}


def test_flatten_with_path_pinned():
    leaves, treedef = tu.tree_flatten_with_path(_mixed_tree())
    got = [(tu.keystr(p), tu.keystr(p, simple=True, separator="/"), v) for p, v in leaves]
    assert got == [
        ("['b'][0]", "b/0", 1), ("['b'][1][0]", "b/1/0", 2), ("['b'][1][1].a", "b/1/1/a", 3),
        ("['b'][1][1].b", "b/1/1/b", 4), ("['c'][<flat index 0>]", "c/0", 5),
        ("['c'][<flat index 1>][0]", "c/1/0", 6), ("['d']['z']", "d/z", 7),
        ("['d']['y']", "d/y", 8), ("['e'][1]", "e/1", 10), ("['e'][2]", "e/2", 9),
        ("['f'][<flat index 0>][0]", "f/0/0", 11), ("['f'][<flat index 1>]['k']", "f/1/k", 12)]
    assert repr(leaves[2][0]) == ("(DictKey(key='b'), SequenceKey(idx=1), SequenceKey(idx=1), "
                                  "GetAttrKey(name='a'))")
    assert treedef == tu.tree_structure(_mixed_tree())
    assert repr(treedef) == (
        "PyTreeDef({'a': None, 'b': [*, (*, CustomNode(namedtuple[NT], [*, *]))], "
        "'c': CustomNode(Custom[aux], [*, [*]]), 'd': CustomNode(OrderedDict[('z', 'y')], "
        "[*, *]), 'e': CustomNode(defaultdict[(<class 'int'>, (1, 2))], [*, *]), "
        "'f': CustomNode(Partial[<built-in function max>], [(*,), {'k': *}])})")
    assert tu.tree_leaves_with_path([1, {"x": 2}]) == [
        ((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1), tu.DictKey("x")), 2)]
    assert tinyxla.tree.leaves_with_path({"x": 2}) == [((tu.DictKey("x"),), 2)]
    assert tinyxla.tree.flatten_with_path((3,))[0] == [((tu.SequenceKey(0),), 3)]


def test_key_entries():
    k = tu.DictKey("a")
    assert (repr(k), str(k), k.key) == ("DictKey(key='a')", "['a']", "a")
    assert k == tu.DictKey("a") and hash(k) == hash(tu.DictKey("a"))
    assert tu.DictKey(1) != tu.SequenceKey(1) and tu.DictKey("a") != "a"
    assert (repr(tu.SequenceKey(3)), str(tu.SequenceKey(3)), tu.SequenceKey(3).idx) == \
        ("SequenceKey(idx=3)", "[3]", 3)
    assert (repr(tu.GetAttrKey("x")), str(tu.GetAttrKey("x")), tu.GetAttrKey("x").name) == \
        ("GetAttrKey(name='x')", ".x", "x")
    f = tu.FlattenedIndexKey(2)
    assert (repr(f), str(f), f.key) == ("FlattenedIndexKey(key=2)", "[<flat index 2>]", 2)
    assert pickle.loads(pickle.dumps(k)) == k
    assert str(tu.DictKey(1.5)) == "[1.5]"
    with pytest.raises(AttributeError, match="property of 'DictKey' object has no setter"):
        k.key = 3
    with pytest.raises(TypeError, match="unhashable type: 'list'"):
        hash(tu.DictKey([1]))
    for cls, bad in [(tu.SequenceKey, "a"), (tu.GetAttrKey, 1), (tu.FlattenedIndexKey, "a")]:
        with pytest.raises(TypeError, match="incompatible function arguments"):
            cls(bad)
    match k:
        case tu.DictKey(key=name):
            assert name == "a"


def test_keystr():
    assert tu.keystr((tu.DictKey("a"), "x", 3)) == "['a']x3"
    assert tu.keystr(()) == ""
    assert tu.keystr((tu.GetAttrKey("a"), tu.DictKey("b")), simple=True, separator=".") == "a.b"
    params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
    paths = [tu.keystr(p, simple=True, separator="/") for p, _ in tu.tree_leaves_with_path(params)]
    assert paths == ["foo/bar/bat/0", "foo/bar/bat/1", "foo/bar/baz"]


def test_is_leaf_with_path():
    tree = (1, {"a": 2})
    expect = [((tu.SequenceKey(0),), 1), ((tu.SequenceKey(1),), {"a": 2})]
    assert tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, dict)) == expect
    assert tu.tree_leaves_with_path(tree, is_leaf=lambda p, x: len(p) == 1,
                                    is_leaf_takes_path=True) == expect


def test_map_with_path():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y),
                                {"a": 1, "b": [2]}, {"a": 10, "b": [20]})
    assert out == {"a": ("['a']", 11), "b": [("['b'][0]", 22)]}
    out = tinyxla.tree.map_with_path(lambda p, x: len(p), [1, (2,)])
    assert out == [1, (2,)]
    with pytest.raises(ValueError) as e:
        tu.tree_map_with_path(lambda p, x, y: x + y, {"a": 1, "b": [2]}, {"a": 10, "b": (20,)})
    assert str(e.value) == (
        "pytree structure error: different types at key path\n"
        "    tree_map_with_path tree['b']\n"
        "At that key path, the prefix pytree tree_map_with_path tree has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'tuple'>.")


def test_tree_map_structure_errors_pinned():
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x + y, {"a": 1, "b": [2]}, {"a": 10, "c": [20]})
    assert str(e.value) == (
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with metadata\n"
        "    ('a', 'b')\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        "    ('a', 'c')\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a', 'b')\n    ?        ^\n\n    + ('a', 'c')\n    ?        ^\n")
    with pytest.raises(ValueError) as e:
        tu.tree_map(lambda x, y: x + y, [1, 2], [1, 2, 3])
    assert str(e.value) == (
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type list of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.")


def test_register_dataclass_keys_and_forms():
    @tu.register_dataclass
    @dataclasses.dataclass
    class D:
        x: int
        y: list
        op: str = dataclasses.field(metadata=dict(static=True), default="add")

    leaves, treedef = tu.tree_flatten_with_path(D(1, [2, 3]))
    assert leaves == [((tu.GetAttrKey("x"),), 1),
                      ((tu.GetAttrKey("y"), tu.SequenceKey(0)), 2),
                      ((tu.GetAttrKey("y"), tu.SequenceKey(1)), 3)]
    assert repr(treedef) == "PyTreeDef(CustomNode(D[('add',)], [*, [*, *]]))"
    assert tu.flatten_one_level(D(1, [2, 3])) == ([1, [2, 3]], ("add",))
    assert tu.flatten_one_level_with_keys(D(1, [2, 3])) == (
        [(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), [2, 3])], ("add",))
    with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef type "
                                         "registration for"):
        tu.register_dataclass(D)

    @dataclasses.dataclass
    class E:
        x: int
        y: int

    with pytest.raises(ValueError, match=r"Missing fields: \{'y'\}. Add them to drop_fields"):
        tu.register_dataclass(E, data_fields=["x"], meta_fields=[])
    with pytest.raises(TypeError, match="must both be specified when either is specified. "
                                        r"Got data_fields=\['x'\] meta_fields=None."):
        tu.register_dataclass(E, data_fields=["x"])
    with pytest.raises(ValueError, match=r"must not overlap. Overlapping fields: \{'y'\}."):
        tu.register_dataclass(E, data_fields=["x", "y"], meta_fields=["y"])
    with pytest.raises(ValueError, match=r"Unexpected fields: \{'z'\}."):
        tu.register_dataclass(E, data_fields=["x", "y", "z"], meta_fields=[])
    with pytest.raises(TypeError, match="data_fields and meta_fields are required when "
                                        "nodetype is not a dataclass"):
        tu.register_dataclass(Custom)
    assert not tu.is_tree_node(E)
    tu.register_dataclass(E, data_fields=["x"], meta_fields=[], drop_fields=["y"])
    assert tu.tree_flatten(E(1, 2))[0] == [1]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'y'"):
        tu.tree_unflatten(tu.tree_structure(E(1, 2)), [5])


def test_tree_static_field_and_jit():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        op: str = tinyxla.tree.static(default="add")

    traces = []

    @tinyxla.jit
    def f(m):
        traces.append(m.op)
        return m.x + 1 if m.op == "add" else m.x - 1

    assert float(f(Op(jnp.float32(2)))) == 3.0
    assert float(f(Op(jnp.float32(2), op="sub"))) == 1.0
    assert float(f(Op(jnp.float32(5)))) == 6.0
    assert traces == ["add", "sub"]


def test_register_static():
    @tu.register_static
    class S:
        def __init__(self, v):
            self.v = v

        def __hash__(self):
            return hash(self.v)

        def __eq__(self, other):
            return isinstance(other, S) and other.v == self.v

        def __repr__(self):
            return f"S({self.v})"

    leaves, treedef = tu.tree_flatten([S(1), 2])
    assert leaves == [2] and repr(treedef) == "PyTreeDef([CustomNode(S[S(1)], []), *])"
    assert tu.tree_flatten_with_path([S(1), 2])[0] == [((tu.SequenceKey(1),), 2)]
    assert tu.tree_unflatten(treedef, [5])[0] == S(1)
    f = tinyxla.jit(lambda x, s: x + s.v)
    np.testing.assert_array_equal(f(1.0, S(2)), 3.0)
    np.testing.assert_array_equal(f(1.0, S(5)), 6.0)
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_static(S)


def test_register_with_keys_forms():
    class K:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_pytree_with_keys(
        K, lambda k: (((tu.GetAttrKey("a"), k.a), (tu.GetAttrKey("b"), k.b)), None),
        lambda aux, ch: K(*ch))
    leaves, treedef = tu.tree_flatten_with_path(K(1, [2]))
    assert leaves == [((tu.GetAttrKey("a"),), 1), ((tu.GetAttrKey("b"), tu.SequenceKey(0)), 2)]
    assert repr(treedef) == "PyTreeDef(CustomNode(K[None], [*, [*]]))"
    assert tu.tree_flatten(K(1, [2]))[0] == [1, 2]

    calls = []

    @tu.register_pytree_with_keys_class
    class Special:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            calls.append("keys")
            return ((tu.GetAttrKey("x"), self.x), (tu.GetAttrKey("y"), self.y)), None

        def tree_flatten(self):
            calls.append("plain")
            return (self.x, self.y), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert tu.tree_leaves(Special(1, 2)) == [1, 2] and calls == ["plain"]
    assert tu.keystr(tu.tree_leaves_with_path(Special(1, 2))[1][0]) == ".y"
    assert calls == ["plain", "keys"]
    out = tu.tree_map(lambda v: v * 3, Special(1, 2))
    assert (out.x, out.y) == (3, 6)

    class W:
        def __init__(self, v):
            self.v = v

    tu.register_pytree_node(W, lambda w: ((w.v,), None), lambda _, c: W(*c),
                            lambda w: (((tu.DictKey("v"), w.v),), None))
    assert tu.keystr(tu.tree_leaves_with_path(W(1))[0][0]) == "['v']"


def test_flatten_one_level_and_treedef_helpers():
    children, aux = tu.flatten_one_level({"a": [1, 2], "b": 3})
    assert (list(children), aux) == ([[1, 2], 3], ("a", "b"))
    children, aux = tu.flatten_one_level_with_keys({"a": [1, 2], "b": 3})
    assert (list(children), aux) == ([(tu.DictKey("a"), [1, 2]), (tu.DictKey("b"), 3)],
                                     ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level_with_keys(NT(1, 2))[0] == [(tu.GetAttrKey("a"), 1),
                                                           (tu.GetAttrKey("b"), 2)]
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(3)
    children = tu.treedef_children(tu.tree_structure([(1, 2), 3, {"a": 4}]))
    assert repr(children) == "[PyTreeDef((*, *)), PyTreeDef(*), PyTreeDef({'a': *})]"
    assert children == [tu.tree_structure(v) for v in [(1, 2), 3, {"a": 4}]]
    assert tu.treedef_children(tu.tree_structure(3)) == []
    td = tu.treedef_tuple([tu.tree_structure([1]), tu.tree_structure(2)])
    assert repr(td) == "PyTreeDef(([*], *))" and td == tu.tree_structure(([1], 2))
    assert td.unflatten([7, 8]) == ([7], 8)
    assert [tu.is_tree_node(t) for t in (list, NT, int, Custom, type(None), dict)] == \
        [True, True, False, True, True, True]
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert not tu.treedef_is_leaf(tu.tree_structure([1]))
    td = tu.tree_structure({"a": [1, 2], "b": 3})
    assert td.node_data() == (dict, ("a", "b")) and tu.tree_structure(1).node_data() is None
    assert repr(td.compose(tu.tree_structure((1, 2)))) == \
        "PyTreeDef({'a': [(*, *), (*, *)], 'b': (*, *)})"


def test_default_registry():
    reg = tu.default_registry
    assert reg.flatten({"a": 1, "b": (2,)})[0] == [1, 2]
    assert reg.flatten_one_level(3) is None
    assert reg.flatten_one_level([1, 2]) == ([1, 2], None)
    assert reg.flatten_with_path([5])[0] == [((tu.SequenceKey(0),), 5)]
    assert reg.is_node(tuple) and not reg.is_node(float)

    class R:
        def __init__(self, v):
            self.v = v

    reg.register_node(R, lambda r: ((r.v,), None), lambda _, c: R(*c))
    assert tu.tree_leaves([R(4)]) == [4] and tu.is_tree_node(R)


def test_all_leaves():
    assert tu.all_leaves([1, 2]) and not tu.all_leaves([[1], 2])
    assert tu.all_leaves([{"a": 1}], is_leaf=lambda x: isinstance(x, dict))
    assert not tu.all_leaves([{"a": 1}], is_leaf=lambda x: isinstance(x, list))


def test_broadcast():
    assert tu.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))) == \
        (1, {"a": 2, "b": 2}, (3, 3))
    assert tinyxla.tree.broadcast(5, [0, (0, 0)]) == [5, (5, 5)]
    with pytest.raises(ValueError) as e:
        tu.tree_broadcast((1, 2), [0, 0])
    assert str(e.value) == (
        "pytree structure error: different types at key path\n"
        "    broadcast_prefix prefix_tree\n"
        "At that key path, the prefix pytree broadcast_prefix prefix_tree has a subtree of "
        "type\n    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'list'>.")


def test_reduce_associative_and_reduce():
    assert tu.tree_reduce_associative(lambda a, b: f"({a}+{b})", [1, 2, 3, 4, 5]) == \
        "((1+2)+(3+(4+5)))"
    assert tinyxla.tree.reduce_associative(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity for parallel reduction of "
                                        "empty sequence."):
        tu.tree_reduce_associative(lambda a, b: a + b, [])
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2], 10) == 13
    assert tu.tree_reduce(lambda a, b: a + [b], [[1], [2]], [],
                          lambda x: isinstance(x, list) and len(x) == 1) == [[1], [2]]
    assert tu.tree_all([True, (1,)]) and not tu.tree_all([True, 0])
    assert tu.tree_all([[]], is_leaf=lambda x: x == []) is False


def test_transpose():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tinyxla.tree.transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    with pytest.raises(TypeError) as e:
        tu.tree_transpose(outer, tu.tree_structure((0, 0, 0)), [(1, 2), (3, 4)])
    assert str(e.value) == ("Mismatch\nPyTreeDef([(*, *), (*, *)])\n != \n"
                            "PyTreeDef([(*, *, *), (*, *, *)])")


def test_jit_and_grad_through_key_registered_nodes():
    @tu.register_pytree_with_keys_class
    class Params:
        def __init__(self, w, b):
            self.w, self.b = w, b

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("w"), self.w), (tu.GetAttrKey("b"), self.b)), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    def loss(p, x):
        return jnp.sum((x * p.w + p.b) ** 2)

    p, x = Params(jnp.float32(2.0), jnp.float32(1.0)), jnp.arange(3.0)
    g = tinyxla.grad(loss)(p, x)
    gj = tinyxla.jit(tinyxla.grad(loss))(p, x)
    # d/dw = sum 2 (x w + b) x = 2 * (0 + 3 + 10) = 26; d/db = 2 * (1 + 3 + 5) = 18
    for out in (g, gj):
        np.testing.assert_allclose([out.w, out.b], [26.0, 18.0])
    ys = tinyxla.vmap(lambda q: q.w * q.b)(Params(jnp.arange(3.0), jnp.ones(3)))
    np.testing.assert_array_equal(ys, [0.0, 1.0, 2.0])
