"""jax.export: export, Exported, serialize / deserialize in tinyxla's versioned format,
the errors for incompatible or damaged files, and JAX's call-time checks (messages pinned
from JAX 0.10.2)."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import export


def f(x, d):
    return {"a": jnp.sin(x) + d["y"], "b": [x * 2]}


@pytest.fixture
def exported():
    return export.export(jax.jit(f))(jnp.ones((3,), jnp.float32), {"y": jnp.float32(1)})


def _args():
    return np.arange(3, dtype=np.float32), {"y": np.float32(2)}


def test_exported_fields(exported):
    # As JAX 0.10.2 prints them.
    assert str(exported) == "Exported(fun_name=f, ...)"
    assert str(exported.in_tree) == "PyTreeDef(((*, {'y': *}), {}))"
    assert str(exported.out_tree) == "PyTreeDef({'a': *, 'b': [*]})"
    assert [repr(a) for a in exported.in_avals] == ["ShapedArray(float32[3])",
                                                    "ShapedArray(float32[])"]
    assert [repr(a) for a in exported.out_avals] == ["ShapedArray(float32[3])"] * 2
    assert exported.platforms == ("cpu",) and exported.nr_devices == 1
    assert exported.module_kept_var_idx == (0, 1) and not exported.uses_global_constants
    assert "sin(" in exported.mlir_module()


def test_call_matches_the_function(exported):
    want = f(*_args())
    got = exported.call(*_args())
    np.testing.assert_allclose(got["a"], want["a"], rtol=1e-6)
    np.testing.assert_allclose(got["b"][0], want["b"][0])
    got = jax.jit(exported.call)(*_args())  # inside jit too
    np.testing.assert_allclose(got["a"], want["a"], rtol=1e-6)


def test_serialize_round_trip(exported):
    blob = exported.serialize()
    assert isinstance(blob, bytearray) and blob.startswith(b"tinyxla-export\nversion 3\n")
    back = export.deserialize(blob)
    assert back.fun_name == "f" and back.in_tree == exported.in_tree
    assert back.out_tree == exported.out_tree
    assert back.in_avals == exported.in_avals and back.out_avals == exported.out_avals
    np.testing.assert_allclose(back.call(*_args())["a"], exported.call(*_args())["a"])
    assert export.deserialize(bytes(blob)).serialize() == blob


def test_folded_gather_round_trips():
    """An exported x[i] carries its gather's wrap_negative (format version 2): read back, it
    counts negative indices from the end, then clamps."""
    e = export.export(jax.jit(lambda x, i: x[i]))(jnp.arange(5.0), jnp.zeros(4, jnp.int32))
    assert "wrap_negative=1" in e.mlir_module()
    back = export.deserialize(e.serialize())
    got = back.call(np.arange(5, dtype=np.float32), np.array([-1, 2, 7, -6], np.int32))
    assert got.tolist() == [4.0, 2.0, 4.0, 0.0]


def test_folded_scatter_round_trips():
    """An exported x.at[i].add carries its scatter's wrap_negative (format version 3): read
    back, it counts negative indices from the end, then drops out-of-range ones."""
    e = export.export(jax.jit(lambda x, i: x.at[i].add(1.0)))(jnp.arange(5.0),
                                                               jnp.zeros(4, jnp.int32))
    assert "scatter_add" in e.mlir_module() and "wrap_negative=1" in e.mlir_module()
    back = export.deserialize(e.serialize())
    got = back.call(np.arange(5, dtype=np.float32), np.array([-1, 2, 7, -6], np.int32))
    assert got.tolist() == [0.0, 1.0, 3.0, 3.0, 5.0]  # pinned from jax 0.10.2


def test_older_versions_still_read(exported):
    """Files of versions 1 and 2 (no wrap_negative on a scatter, or on a gather for 1) read."""
    blob = bytes(exported.serialize())
    for version in (b"version 1\n", b"version 2\n"):
        back = export.deserialize(blob.replace(b"version 3\n", version, 1))
        np.testing.assert_allclose(back.call(*_args())["a"], exported.call(*_args())["a"])


def test_serialize_keeps_weak_types_and_dtypes():
    e = export.export(jax.jit(lambda x, n: (x * n).astype(jnp.bfloat16)))(
        jnp.ones(2, jnp.int8), 3)
    back = export.deserialize(e.serialize())
    assert back.in_avals[1].weak_type and back.in_avals[0].dtype == np.int8
    assert back.out_avals[0].dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(back.call(jnp.ones(2, jnp.int8), 3), np.float32),
                                  [3.0, 3.0])


def test_damaged_files_give_clear_errors(exported):
    blob = bytes(exported.serialize())
    with pytest.raises(ValueError, match=r"^not a tinyxla exported function: it does not "
                                         r"start with 'tinyxla-export'$"):
        export.deserialize(b"\x00garbage")
    with pytest.raises(ValueError, match=r"^the exported function is truncated or corrupt: its "
                                         r"header says \d+ bytes follow, the file has \d+$"):
        export.deserialize(blob[:len(blob) // 2])
    flipped = bytearray(blob)
    flipped[-5] ^= 0x20
    with pytest.raises(ValueError, match=r"^the exported function is truncated or corrupt: its "
                                         r"checksum does not match its contents$"):
        export.deserialize(flipped)
    with pytest.raises(ValueError, match=r"^the exported function has format version 7, but "
                                         r"this tinyxla reads versions 1 to 3; export it "
                                         r"again"):
        export.deserialize(blob.replace(b"version 3\n", b"version 7\n", 1))
    with pytest.raises(ValueError, match=r"'version' is not a number: 'one'"):
        export.deserialize(blob.replace(b"version 3\n", b"version one\n", 1))


def test_call_errors_as_jax(exported):
    y = {"y": np.float32(2)}
    with pytest.raises(ValueError, match=r"^Shape mismatch for args\[0\]\.shape\[0\] \(expected "
                                         r"same constant\): expected \(3,\) and called with "
                                         r"\(4,\)$"):
        exported.call(np.ones(4, np.float32), y)
    with pytest.raises(ValueError, match=r"^Rank mismatch for args\[0\]: expected \(3,\) and "
                                         r"called with \(3, 1\)$"):
        exported.call(np.ones((3, 1), np.float32), y)
    with pytest.raises(ValueError, match=r"^Dtype mismatch for args\[0\]: expected float32 and "
                                         r"called with int32$"):
        exported.call(np.ones(3, np.int32), y)
    with pytest.raises(ValueError) as e:
        exported.call(np.ones(3, np.float32))
    assert str(e.value) == (
        "The invocation args and kwargs must have the same pytree structure as when the "
        "function 'f' was exported, but they have the following structural differences:\n"
        "   - args is a tuple of length 1 in the invocation and a tuple of length 2 when "
        "exported, so the lengths do not match.\n")


def test_export_needs_jit():
    def g(x):
        return x
    with pytest.raises(ValueError, match=r"^Function to be exported must be the result of "
                                         r"`jit` but is: <function "):
        export.export(g)


def test_unserializable_trees():
    e = export.export(jax.jit(lambda d: d[1]))({1: jnp.ones(2)})
    with pytest.raises(TypeError, match=r"^Serialization is supported only for dictionaries "
                                        r"with string keys\. Found key 1 of type <class 'int'>\.$"):
        e.serialize()


def test_grad_in_the_exporting_process_only(exported):
    g = jax.grad(lambda x: exported.call(x, {"y": 1.0})["a"].sum())(jnp.arange(3.0))
    np.testing.assert_allclose(g, np.cos(np.arange(3.0)), rtol=1e-6)
    back = export.deserialize(exported.serialize())
    assert exported.has_vjp() and not back.has_vjp()
    with pytest.raises(ValueError, match=r"^No VJP is available$"):
        jax.grad(lambda x: back.call(x, {"y": 1.0})["a"].sum())(jnp.arange(3.0))


def test_forward_mode_and_vmap_of_a_call_as_jax(exported):
    """JAX 0.10.2: a call is a custom_vjp function (jvp refused, grad works) without a
    batching rule (vmap over a mapped argument refused, also under jit); unmapped
    arguments under vmap are fine."""
    x, y = jnp.arange(3.0), {"y": 1.0}
    with pytest.raises(TypeError, match=r"^can't apply forward-mode autodiff \(jvp\) to a "
                                        r"custom_vjp function\.$"):
        jax.jvp(lambda v: exported.call(v, y)["a"], (x,), (jnp.ones(3),))
    batched = lambda v: exported.call(v, y)["a"]
    for fn in (jax.vmap(batched), jax.jit(jax.vmap(batched)), jax.vmap(jax.jit(batched))):
        with pytest.raises(NotImplementedError,
                           match=r"^Batching rule for 'call_exported' not implemented$"):
            fn(jnp.ones((2, 3)))
    out = jax.vmap(lambda s: exported.call(x, y)["a"] * s)(jnp.arange(2.0))
    np.testing.assert_allclose(out, np.outer(np.arange(2.0), np.asarray(exported.call(x, y)["a"])),
                               rtol=1e-6)
    g = jax.jit(jax.grad(lambda v: exported.call(v, y)["a"].sum()))(x)
    np.testing.assert_allclose(g, np.cos(np.arange(3.0)), rtol=1e-6)


def test_call_under_jit_is_one_graph(exported):
    back = export.deserialize(exported.serialize())
    fn = jax.jit(lambda x, y: back.call(x, {"y": y})["b"][0] + 1)
    c = fn.lower(jnp.ones(3), jnp.float32(2)).compile()
    assert "parameter" in c.as_text() and c.tier in ("base", "upper")
    np.testing.assert_allclose(fn(jnp.arange(3.0), jnp.float32(2)), [1.0, 3.0, 5.0])
