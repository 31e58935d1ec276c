"""jit's call path for pytree arguments (C++ flattening and output building, issue 18):
registered nodes, namedtuples, dataclasses, dicts, None and Python scalars among the leaves
hit the cache without retracing and give the unjitted function's results and trees; the C++
walks agree with tree_util's Python ones."""
import collections
import dataclasses

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import _core, tree_util
from tinyxla._src.tree_util import tree_builder
from tinyxla.example_libraries import optimizers

Point = collections.namedtuple("Point", "x y")


@tree_util.register_pytree_node_class
class Scaled:
    def __init__(self, value, scale):
        self.value, self.scale = value, scale

    def tree_flatten(self):
        return (self.value,), self.scale

    @classmethod
    def tree_unflatten(cls, scale, children):
        return cls(children[0], scale)


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class State:
    params: dict
    step: jnp.ndarray
    name: str = dataclasses.field(metadata=dict(static=True), default="s")


def _tree_equal(a, b):
    la, ta = tree_util.tree_flatten(a)
    lb, tb = tree_util.tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)


def _counting(fn):
    calls = []

    def traced(*args):
        calls.append(1)
        return fn(*args)
    return traced, calls


def update(state, p, s, scale, k):
    new = State({"w": state.params["w"] * 2 + k, "b": None}, state.step + 1, state.name)
    return new, Point(p.y, p.x * scale), Scaled(s.value + 1, s.scale), [k, (None, state.step)]


def _args(i):
    state = State({"w": jnp.arange(3.0) + i, "b": None}, jnp.int32(i))
    return state, Point(jnp.ones(2) * i, jnp.zeros((2, 2))), Scaled(jnp.float32(i), "tag"), 1.5, i


def test_pytree_arguments_hit_the_cache_and_match_eager():
    f, calls = _counting(update)
    jf = jax.jit(f)
    for i in range(4):
        _tree_equal(jf(*_args(i)), update(*_args(i)))
    assert len(calls) == 1
    out = jf(*_args(7))
    assert type(out[0]) is State and out[0].name == "s" and out[0].params["b"] is None
    assert type(out[1]) is Point and type(out[2]) is Scaled and out[2].scale == "tag"
    assert out[3][1][0] is None and type(out[3]) is list


def test_aux_data_and_leaf_types_are_in_the_key():
    f, calls = _counting(update)
    jf = jax.jit(f)
    state, p, s, scale, k = _args(1)
    jf(state, p, s, scale, k)
    jf(state, p, Scaled(s.value, "other"), scale, k)  # new aux: traces again
    assert len(calls) == 2
    out = jf(state, p, Scaled(s.value, "other"), scale, k)
    assert out[2].scale == "other" and len(calls) == 2
    jf(state, p, s, 2, k)  # an int where a float was: another signature
    jf(State({"w": jnp.arange(3.0), "b": None}, jnp.int32(1), "t"), p, s, scale, k)
    assert len(calls) == 4
    jf(state, p, s, scale, k)
    assert len(calls) == 4


def test_unhashable_aux_data_still_runs():
    jf = jax.jit(lambda t: Scaled(t.value * 2, t.scale))
    for _ in range(2):
        out = jf(Scaled(jnp.ones(3), ["unhashable"]))
        np.testing.assert_array_equal(np.asarray(out.value), 2 * np.ones(3))
        assert out.scale == ["unhashable"]


def test_optimizer_state_step_matches_eager():
    opt_init, opt_update, get_params = optimizers.adam(1e-2)
    loss = lambda p: jnp.sum((p["w"] - 3.0) ** 2) + jnp.sum(p["b"] ** 2)

    def step(i, state):
        g = jax.grad(loss)(get_params(state))
        return opt_update(i, g, state)

    params = {"w": jnp.arange(4.0), "b": jnp.ones(2)}
    eager = jitted = opt_init(params)
    jstep = jax.jit(step)
    for i in range(5):
        eager, jitted = step(i, eager), jstep(i, jitted)
    _tree_equal(get_params(eager), get_params(jitted))
    assert tree_util.tree_structure(eager) == tree_util.tree_structure(jitted)


def test_numpy_leaves_and_kwargs_take_the_general_path():
    jf = jax.jit(lambda t, s=1.0: (t["a"] + s, t["b"]))
    out = jf({"a": np.ones(2, np.float32), "b": None})
    np.testing.assert_array_equal(np.asarray(out[0]), 2 * np.ones(2))
    assert out[1] is None
    out = jf({"a": jnp.ones(2), "b": None}, s=3.0)
    np.testing.assert_array_equal(np.asarray(out[0]), 4 * np.ones(2))


@pytest.mark.parametrize("tree", [
    (), [None], {"b": [1, (2.0, None)], "a": Point(3, {"z": 4, "y": [5]})},
    State({"w": 1, "b": 2}, 3), Scaled([1, 2], "s"), collections.OrderedDict(b=1, a=2),
    [jnp.ones(2), (np.zeros(3), "leaf-string")],
])
def test_cpp_leaves_and_builder_agree_with_python(tree):
    leaves, treedef = tree_util.tree_flatten(tree)
    cpp_leaves = _core.tree_leaves(tree)
    assert len(cpp_leaves) == len(leaves)
    assert all(a is b for a, b in zip(cpp_leaves, leaves))
    rebuilt = tree_builder(treedef)(leaves)
    assert tree_util.tree_structure(rebuilt) == treedef
    assert all(a is b for a, b in zip(tree_util.tree_leaves(rebuilt), leaves))


def test_deep_trees_do_not_recurse_in_cpp():
    tree = leaf = [1.0]
    for _ in range(100_000):
        tree = [tree]
    assert _core.tree_leaves(tree) == [1.0]
    assert _core.wait_tree(tree) == [1.0]
    assert leaf == [1.0]


def test_builder_checks_the_leaf_count():
    build = tree_builder(tree_util.tree_structure((1, [2, 3])))
    assert build([4, 5, 6]) == (4, [5, 6])
    with pytest.raises(ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"):
        build([1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3, got 4"):
        build([1, 2, 3, 4])


def test_block_until_ready_on_a_tree_raises_a_failed_leaf_and_recovers():
    x = jnp.ones(3)
    _core._arm_fault("unary", 1)
    bad = jnp.exp(x)
    tree = {"ok": [x, None, 2.0], "bad": Point(bad, x)}
    with pytest.raises(Exception, match="injected"):
        jax.block_until_ready(tree)
    good = {"a": [jnp.exp(x)], "b": (np.ones(1), 3)}
    assert jax.block_until_ready(good) is good
    np.testing.assert_allclose(np.asarray(good["a"][0]), np.exp(np.ones(3)), rtol=1e-6)


def test_block_until_ready_waits_for_pmap_results():
    out = jax.pmap(lambda v: v * 2)(jnp.ones((jax.local_device_count(), 3)))
    assert jax.block_until_ready({"o": out})["o"] is out
    np.testing.assert_array_equal(np.asarray(out), 2 * np.ones((jax.local_device_count(), 3)))


def test_pmap_results_take_the_jit_fast_paths():
    # A pmap result's _h slot is unset until first use: the C++ slot reads fall back to the
    # attribute, which gathers it.
    n = jax.local_device_count()
    pm = jax.pmap(lambda v: v * 2)
    flat = jax.jit(lambda a: a + 1)
    tree = jax.jit(lambda t: t["o"][0] + t["o"][1])
    for _ in range(3):  # the first call traces; the later ones take the cached paths
        np.testing.assert_array_equal(np.asarray(flat(pm(jnp.ones((n, 3))))), 3 * np.ones((n, 3)))
        got = tree({"o": [pm(jnp.ones((n, 3))), pm(jnp.full((n, 3), 2.0))]})
        np.testing.assert_array_equal(np.asarray(got), 6 * np.ones((n, 3)))
