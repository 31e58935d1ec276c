"""The generic op binding: _core.make_op runs any registered C++ op eagerly (a one-node
graph through the op's definition) and GraphBuilder.op adds it to a graph, both with
attributes marshalled by the op's definition."""
import numpy as np
import pytest

from tinyxla import _core

F32, I32 = 11, 3


def _f32(a):
    return _core.from_numpy(np.asarray(a, np.float32), F32, 0)


def test_binary_add_with_a_python_scalar():
    add = _core.make_op("binary", {"op": "add"})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(add(_f32(x), 1).numpy(np.dtype(np.float32)), x + 1)
    np.testing.assert_array_equal(add(2.5, _f32(x)).numpy(np.dtype(np.float32)), 2.5 + x)


def test_handles_are_cached_by_name_and_attributes():
    assert _core.make_op("binary", {"op": "mul"}) is _core.make_op("binary", {"op": "mul"})
    assert _core.make_op("binary", {"op": "mul"}) is not _core.make_op("binary", {"op": "sub"})
    # An enum by name or by code is the same op.
    code = _core.BINARY_OPS.index("mul")
    assert _core.make_op("binary", {"op": code}) is _core.make_op("binary", {"op": "mul"})


def test_attributes_read_back():
    op = _core.make_op("reduce", {"op": "max", "axes": [1]})
    assert op.name == "reduce" and op.attrs == {"op": "max", "axes": [1]}
    assert not op.multiple_results
    assert _core.op_attrs("cumulative") == {"op": "sum", "dimension": 0, "reverse": 0}
    assert "gather" in _core.op_kinds() and "cholesky" in _core.op_kinds()


def test_reduce_and_cumulative_match_numpy():
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    red = _core.make_op("reduce", {"op": "sum", "axes": [-1]})(_f32(x))
    np.testing.assert_allclose(red.numpy(np.dtype(np.float32)), x.sum(-1), rtol=1e-6)
    cum = _core.make_op("cumulative", {"op": "max", "dimension": 1, "reverse": True})(_f32(x))
    want = np.flip(np.maximum.accumulate(np.flip(x, 1), 1), 1)
    np.testing.assert_array_equal(cum.numpy(np.dtype(np.float32)), want)


def test_multiple_results_come_as_a_list():
    keys = np.array([[3, 1, 2]], np.float32)
    vals = np.array([[10, 20, 30]], np.float32)
    out = _core.make_op("sort", {"dimension": 1, "num_keys": 1})(_f32(keys), _f32(vals))
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[1].numpy(np.dtype(np.float32)), [[20, 30, 10]])


def test_an_op_without_operands_runs_on_a_device():
    iota = _core.make_op("iota", {"dimension": 1, "shape": [2, 3], "dtype": I32})
    got = iota.run([], 0).numpy(np.dtype(np.int32))
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))


def test_views_are_views_eagerly():
    x = _f32(np.arange(6).reshape(2, 3))
    t = _core.make_op("transpose", {"perm": [1, 0]})(x)
    assert not t.is_contiguous
    np.testing.assert_array_equal(t.numpy(np.dtype(np.float32)), np.arange(6).reshape(2, 3).T)


def test_builder_op_makes_the_same_node_as_the_typed_method():
    a, b = _core.GraphBuilder(), _core.GraphBuilder()
    for bld in (a, b):
        x = bld.parameter([5, 3], F32)
        i = bld.parameter([2, 1], I32)
    ga = a.gather(0, 1, [1], [0], [0], [], [], [1, 3], 0, -1)
    gb = b.op("gather", {"offset_dims": [1], "collapsed_slice_dims": [0], "start_index_map": [0],
                         "slice_sizes": [1, 3], "mode": "clip"}, [x, i])
    a.set_outputs([ga])
    b.set_outputs([gb])
    assert a.text() == b.text()
    results = b.op("eigh", {"lower": 1}, [b.op("dot_general", {"lhs_contracting": [0], "rhs_contracting": [0],
                                                               "lhs_batch": [], "rhs_batch": []}, [x, x])])
    assert isinstance(results, list) and len(results) == 2


def test_errors_name_the_op():
    with pytest.raises(ValueError, match=r"\[nonesuch\] no op of this name"):
        _core.make_op("nonesuch")
    with pytest.raises(ValueError, match=r"\[reduce\] attribute 'axis' is unknown"):
        _core.make_op("reduce", {"axis": 0})
    with pytest.raises(ValueError, match=r"\[binary\] attribute 'op' has no value 'plus'"):
        _core.make_op("binary", {"op": "plus"})
    with pytest.raises(ValueError, match=r"\[reduce\] attribute 'axes' expects a list"):
        _core.make_op("reduce", {"axes": 1})
    with pytest.raises(ValueError, match=r"\[parameter\] does not run"):
        _core.make_op("parameter")
    with pytest.raises(TypeError, match=r"\[add\] lax.add requires arguments to have the same dtypes"):
        _core.make_op("binary", {"op": "add"})(_f32([1.0]), _core.from_numpy(np.array([1], np.int32), I32, 0))
    b = _core.GraphBuilder()
    x = b.parameter([2], F32)
    with pytest.raises(ValueError, match=r"\[unary\] unary takes 1 operands, got 2"):
        b.op("unary", {"op": "exp"}, [x, x])
