"""vectorize, apply_along_axis, apply_over_axes, piecewise, select, choose, compress,
extract, packbits, unpackbits, gradient, interp, unwrap, sort_complex and the ufunc class
(reduce, accumulate, outer, at, reduceat; frompyfunc) against numpy and values pinned
from JAX; jit, vmap, grad and JAX's errors."""
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import errors

A = np.array
X = np.arange(12.0).reshape(3, 4).astype(np.float32)
_rng = np.random.RandomState(5)


def test_vectorize():
    np.testing.assert_array_equal(jnp.vectorize(lambda a, b: a + b)(A([1.0, 2]), A([[1.0], [2.0]])),
                                  [[2, 3], [3, 4]])
    np.testing.assert_array_equal(jnp.vectorize(jnp.sum, signature="(n)->()")(X), X.sum(1))
    np.testing.assert_array_equal(jnp.vectorize(jnp.dot, signature="(n),(n)->()")(X, A([1.0, 2, 3, 4])),
                                  X @ [1, 2, 3, 4])
    np.testing.assert_array_equal(jnp.vectorize(lambda a, s: a * s, excluded={1})(X[0], 3.0), X[0] * 3)
    a, b = jnp.vectorize(lambda a: (a, a * 2), signature="()->(),()")(X[0])
    np.testing.assert_array_equal(b, X[0] * 2)
    calls = []

    def once(v):
        calls.append(v.shape)
        return v * 2
    jnp.vectorize(once)(X)
    assert calls == [()]   # traced once, on a scalar
    with pytest.raises(ValueError, match="does not have enough dimensions for all core dimensions"):
        jnp.vectorize(lambda a: a, signature="(n)->(n)")(3.0)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 2 vs 4"):
        jnp.vectorize(lambda a: a[:2], signature="(n)->(n)")(X)
    with pytest.raises(ValueError, match=r"output shape \(\) does not match core dimensions"):
        jnp.vectorize(lambda a: a.sum(), signature="(n)->(n)")(X)
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda a: a, signature="(n)->(n")(X)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n': 1 vs 4"):
        jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(X, A([1.0]))
    with pytest.raises(TypeError, match="can only exclude integer or string arguments"):
        jnp.vectorize(lambda a: a, excluded={1.5})
    np.testing.assert_array_equal(jax.jit(jnp.vectorize(lambda a: a ** 2))(X), X ** 2)


def test_apply_along_over_axes_piecewise():
    np.testing.assert_array_equal(jnp.apply_along_axis(jnp.sum, 0, X), np.apply_along_axis(np.sum, 0, X))
    np.testing.assert_array_equal(jnp.apply_along_axis(lambda r: r[::-1], 1, X),
                                  np.apply_along_axis(lambda r: r[::-1], 1, X))
    np.testing.assert_array_equal(jnp.apply_along_axis(lambda r, k: r * k, -1, X, 2.0), X * 2)
    x3 = _rng.randn(2, 3, 4).astype(np.float32)
    np.testing.assert_allclose(jnp.apply_along_axis(jnp.cumsum, 1, x3), np.apply_along_axis(np.cumsum, 1, x3),
                               rtol=1e-6)
    np.testing.assert_array_equal(jnp.apply_over_axes(jnp.sum, X, [0, 1]), np.apply_over_axes(np.sum, X, [0, 1]))
    with pytest.raises(ValueError, match="function is not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda a, ax: a.sum(), x3, [0])
    v = A([-2.0, -1, 0, 1, 2])
    np.testing.assert_array_equal(jnp.piecewise(v, [v < 0, v > 0], [lambda t: -t, lambda t: t ** 2]),
                                  np.piecewise(v, [v < 0, v > 0], [lambda t: -t, lambda t: t ** 2]))
    np.testing.assert_array_equal(jnp.piecewise(v, [v < 0], [lambda t: -t, 7.0]),
                                  np.piecewise(v, [v < 0], [lambda t: -t, 7.0]))
    # JAX: the result keeps x's dtype (int), as numpy.
    np.testing.assert_array_equal(jnp.piecewise(A([1, 2, 3]), [A([True, False, True])], [lambda t: t * 2.5]),
                                  [2, 0, 7])
    np.testing.assert_array_equal(jnp.piecewise(A([1.0, 2]), [A([True, False]), A([True, True])], [1.0, 2, 3]),
                                  np.piecewise(A([1.0, 2]), [A([True, False]), A([True, True])], [1.0, 2, 3]))
    with pytest.raises(ValueError, match="with 2 condition"):
        jnp.piecewise(v, [v < 0, v > 0], [1.0])
    np.testing.assert_allclose(jax.grad(lambda t: jnp.piecewise(t, [t < 0], [lambda u: -u, lambda u: u ** 2]).sum())(v),
                               [-1, -1, 0, 2, 4])


def test_select_choose_compress_extract():
    np.testing.assert_array_equal(jnp.select([X > 3, X > 8], [X, -X], default=A(7.0)),
                                  np.select([X > 3, X > 8], [X, -X], default=7.0))
    np.testing.assert_array_equal(jnp.select([X > 3, A(True)], [A(1), 2.5]),
                                  np.select([X > 3, True], [1, 2.5]))
    with pytest.raises(ValueError, match=r"condlist must have length equal to choicelist \(1 vs 2\)"):
        jnp.select([X > 3], [X, X])
    with pytest.raises(ValueError, match="condlist must be non-empty"):
        jnp.select([], [])
    ch = [A([1, 2, 3, 4]), A([10, 20, 30, 40]), A([5.0, 6, 7, 8])]
    np.testing.assert_array_equal(jnp.choose(A([0, 1, 2, 1]), ch), np.choose([0, 1, 2, 1], ch))
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(jnp.choose(A([0, 3, -1]), [A([1, 2, 3]), A([10, 20, 30])], mode=mode),
                                      np.choose([0, 3, -1], [[1, 2, 3], [10, 20, 30]], mode=mode))
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        jnp.choose(A([0, 3]), [A([1, 2]), A([10, 20])])
    with pytest.raises(ValueError, match="`a` array must be integer typed"):
        jnp.choose(A([0.5]), [A([1])])
    with pytest.raises(errors.ConcretizationTypeError, match="mode='wrap' or mode='clip'"):
        jax.jit(lambda a: jnp.choose(a, [A([1, 2]), A([3, 4])]))(A([0, 1]))
    np.testing.assert_array_equal(jax.jit(lambda a: jnp.choose(a, [A([1, 2]), A([3, 4])], mode="clip"))(A([0, 1])),
                                  [1, 4])
    for cond, axis in [(A([True, False, True]), 0), (A([1, 0, 1, 1]), 1), (A([1, 0, 1, 1]), None)]:
        np.testing.assert_array_equal(jnp.compress(cond, X, axis=axis), np.compress(cond, X, axis=axis))
    np.testing.assert_array_equal(jnp.compress(A([True, False, True]), X, axis=0, size=3, fill_value=-1),
                                  [[0, 1, 2, 3], [8, 9, 10, 11], [-1, -1, -1, -1]])
    with pytest.raises(ValueError, match="size must be positive and not greater than"):
        jnp.compress(A([True, False, True]), X, axis=0, size=4)
    with pytest.raises(ValueError, match="condition contains entries that are out of bounds"):
        jnp.compress(A([1, 0, 1, 1, 0, 1]), X[0])
    np.testing.assert_array_equal(jnp.extract(X > 5, X), np.extract(X > 5, X))
    np.testing.assert_array_equal(jnp.extract(X > 5, X, size=8, fill_value=-2), [6, 7, 8, 9, 10, 11, -2, -2])
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.extract(x > 5, x, size=3))(X), [6, 7, 8])


def test_packbits_unpackbits():
    bits = _rng.randint(0, 2, size=(3, 13))
    for axis in (None, 0, 1):
        for order in ("big", "little"):
            np.testing.assert_array_equal(jnp.packbits(bits, axis=axis, bitorder=order),
                                          np.packbits(bits, axis=axis, bitorder=order))
            packed = np.packbits(bits, axis=axis, bitorder=order)
            np.testing.assert_array_equal(jnp.unpackbits(packed, axis=axis, bitorder=order),
                                          np.unpackbits(packed, axis=axis, bitorder=order))
    for count in (3, 10, 20):
        np.testing.assert_array_equal(jnp.unpackbits(A([3, 7], np.uint8), count=count),
                                      np.unpackbits(A([3, 7], np.uint8), count=count))
    with pytest.raises(TypeError, match="Expected an input array of integer or boolean data type"):
        jnp.packbits(A([1.5]))
    with pytest.raises(TypeError, match="Expected an input array of unsigned byte data type"):
        jnp.unpackbits(A([3]))
    with pytest.raises(ValueError, match="'order' must be either 'little' or 'big'"):
        jnp.packbits(A([1]), bitorder="middle")


def test_gradient_interp_unwrap_sort_complex():
    f = A([1.0, 2, 4, 7, 11])
    np.testing.assert_allclose(jnp.gradient(f), np.gradient(f))
    np.testing.assert_allclose(jnp.gradient(f, 2.0), np.gradient(f, 2.0))
    h = A([0.0, 1, 1.5, 3.5, 4])
    np.testing.assert_allclose(jnp.gradient(f, h), np.gradient(f, h), rtol=1e-6)
    for got, want in zip(jnp.gradient(X), np.gradient(X)):
        np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(jnp.gradient(X, axis=1), np.gradient(X, axis=1))
    for got, want in zip(jnp.gradient(X, 1.0, 2.0), np.gradient(X, 1.0, 2.0)):
        np.testing.assert_allclose(got, want)
    with pytest.raises(ValueError, match="at least 2 elements are required"):
        jnp.gradient(A([1.0]))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(f, edge_order=2)
    xs = A([0.0, 1.5, 2.5, 5, -1])
    xp, fp = A([1.0, 2, 3]), A([3.0, 2, 0])
    np.testing.assert_allclose(jnp.interp(xs, xp, fp), np.interp(xs, xp, fp))
    np.testing.assert_allclose(jnp.interp(xs, xp, fp, left=-9, right=99), np.interp(xs, xp, fp, left=-9, right=99))
    np.testing.assert_allclose(jnp.interp(xs, xp, fp, period=2), np.interp(xs, xp, fp, period=2), rtol=1e-6)
    # JAX: 'extrapolate' continues the end segments.
    np.testing.assert_allclose(jnp.interp(A([0.0, 5.0]), xp, fp, left="extrapolate", right="extrapolate"),
                               [4.0, -4.0])
    with pytest.raises(ValueError, match="xp and fp must be one-dimensional arrays of equal size"):
        jnp.interp(A([1.5]), xp, A([3.0, 2]))
    with pytest.raises(ValueError, match="the only valid string value of `left` is 'extrapolate'"):
        jnp.interp(A([1.5]), xp, fp, left="bad")
    np.testing.assert_allclose(jax.grad(lambda v: jnp.interp(1.5, xp, v))(fp), [0.5, 0.5, 0])
    np.testing.assert_allclose(jax.vmap(lambda t: jnp.interp(t, xp, fp))(xs), np.interp(xs, xp, fp))
    p = A([0.0, 1, 6, 7, 13, 2])
    np.testing.assert_allclose(jnp.unwrap(p), np.unwrap(p), rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(jnp.unwrap(A([0, 1, 6, 7, 13, 2]), period=6),
                                  np.unwrap(A([0, 1, 6, 7, 13, 2]), period=6))
    q = A([[0.0, 4], [6, 1]])
    np.testing.assert_allclose(jnp.unwrap(q, axis=0, discont=2), np.unwrap(q, axis=0, discont=2),
                               rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(jnp.sort_complex(A([3, 1, 2])), np.sort_complex([3, 1, 2]))
    assert jnp.sort_complex(A([3, 1, 2])).dtype == np.complex64
    c = A([[1 + 2j, 1 - 1j], [0j, 3]], np.complex64)
    np.testing.assert_array_equal(jnp.sort_complex(c), np.sort(c, axis=-1))


def test_builtin_ufuncs():
    assert isinstance(jnp.add, jnp.ufunc) and repr(jnp.add) == "<jnp.ufunc 'add'>"
    assert (jnp.add.nin, jnp.add.nout, jnp.add.identity, jnp.maximum.identity) == (2, 1, 0, None)
    assert jnp.add == jnp.add and hash(jnp.add) == hash(jnp.add) and jnp.add != jnp.multiply
    assert int(jnp.add(1, 2)) == 3
    np.testing.assert_array_equal(jnp.add.reduce(X), np.add.reduce(X))
    np.testing.assert_array_equal(jnp.add.reduce(X, axis=None, keepdims=True), np.add.reduce(X, axis=None, keepdims=True))
    np.testing.assert_array_equal(jnp.multiply.reduce(X + 1, axis=1, initial=2.0),
                                  np.multiply.reduce(X + 1, axis=1, initial=2.0))
    np.testing.assert_array_equal(jnp.maximum.reduce(X, axis=1), np.maximum.reduce(X, axis=1))
    np.testing.assert_array_equal(jnp.minimum.reduce(X, axis=0, where=X > 2, initial=100.0),
                                  np.minimum.reduce(X, axis=0, where=X > 2, initial=100.0))
    with pytest.raises(ValueError, match="does not have an identity"):
        jnp.maximum.reduce(X, where=X > 2)
    i = A([[7, 3, 12], [5, 1, 9]])
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        np.testing.assert_array_equal(getattr(jnp, name).reduce(i, axis=1), getattr(np, name).reduce(i, axis=1))
    b = A([[True, False, True], [True, True, True]])
    for name in ("logical_and", "logical_or", "logical_xor"):
        np.testing.assert_array_equal(getattr(jnp, name).reduce(b, axis=1), getattr(np, name).reduce(b, axis=1))
    v = A([1.0, 2, 3], np.float32)
    np.testing.assert_allclose(jnp.logaddexp.reduce(v), np.logaddexp.reduce(v), rtol=1e-6)
    np.testing.assert_allclose(jnp.logaddexp2.reduce(v), np.logaddexp2.reduce(v), rtol=1e-6)
    np.testing.assert_array_equal(jnp.add.accumulate(X, axis=1), np.add.accumulate(X, axis=1))
    np.testing.assert_array_equal(jnp.multiply.accumulate(A([1, 2, 3, 4])), [1, 2, 6, 24])
    np.testing.assert_array_equal(jnp.add.outer(A([1, 2]), A([10, 20, 30])), np.add.outer([1, 2], [10, 20, 30]))
    assert jnp.multiply.outer(X[0], X[:2]).shape == (4, 2, 4)
    np.testing.assert_array_equal(jnp.add.at(A([1.0, 2, 3, 4]), A([0, 0, 2]), 10.0, inplace=False), [21, 2, 13, 4])
    np.testing.assert_array_equal(jnp.multiply.at(A([1.0, 2, 3, 4]), A([0, 0, 2]), A([2.0, 3, 4]), inplace=False),
                                  [6, 2, 12, 4])
    np.testing.assert_array_equal(jnp.subtract.at(A([1.0, 2, 3, 4]), A([1]), 1.0, inplace=False), [1, 1, 3, 4])
    np.testing.assert_array_equal(jnp.add.at(A([True, False]), A([1]), True, inplace=False), [True, True])
    np.testing.assert_array_equal(jnp.maximum.at(A([1.0, 2, 3, 4]), A([0, 0, 2]), A([5.0, 0, 9]), inplace=False),
                                  [5, 2, 9, 4])
    with pytest.raises(NotImplementedError, match="cannot operate inplace"):
        jnp.add.at(A([1.0]), A([0]), 1.0)
    a6 = A([1.0, 7, 3, 4, 5, 6])
    np.testing.assert_array_equal(jnp.add.reduceat(a6, A([0, 2, 5])), np.add.reduceat(a6, [0, 2, 5]))
    np.testing.assert_array_equal(jnp.maximum.reduceat(a6, A([0, 3, 1])), np.maximum.reduceat(a6, [0, 3, 1]))
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        jnp.negative.reduce(X)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        jnp.maximum.reduce(jnp.zeros((0,)))
    np.testing.assert_array_equal(jax.jit(lambda x: jnp.add.reduce(x, axis=0))(X), X.sum(0))
    np.testing.assert_array_equal(jax.grad(lambda x: jnp.multiply.reduce(x))(A([1.0, 2, 3])), [6, 3, 2])
    np.testing.assert_array_equal(jax.vmap(lambda r: jnp.add.outer(r, r))(X[:2, :2]),
                                  [np.add.outer(r, r) for r in X[:2, :2]])


def test_frompyfunc():
    f = jnp.frompyfunc(lambda a, b: a * b + 1, nin=2, nout=1, identity=1)
    npf = np.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    assert repr(f) == "<jnp.ufunc '<lambda>'>"
    np.testing.assert_array_equal(f(A([1.0, 2]), A([[3.0], [4.0]])),
                                  npf(A([1.0, 2]), A([[3.0], [4.0]])).astype(float))
    # JAX folds from the identity: f(f(f(1, 1), 2), 3) = 16.
    np.testing.assert_array_equal(f.reduce(A([1.0, 2, 3])), 16.0)
    np.testing.assert_array_equal(f.reduce(A([[1.0, 2, 3]]), axis=1, initial=2.0), [22.0])
    np.testing.assert_array_equal(f.accumulate(A([1.0, 2, 3])), [1, 3, 10])
    np.testing.assert_array_equal(f.outer(A([1.0, 2]), A([1.0, 2, 3])), [[2, 3, 4], [3, 5, 7]])
    np.testing.assert_array_equal(f.at(A([1.0, 2, 3]), A([0, 0]), 2.0, inplace=False), [7, 2, 3])
    np.testing.assert_array_equal(f.reduceat(A([1.0, 2, 3, 4]), A([0, 2])), [3, 13])
    g = jnp.frompyfunc(lambda a: (a, -a), nin=1, nout=2)
    np.testing.assert_array_equal(g(A([1.0, 2]))[1], [-1, -2])
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        g.reduce(A([1.0]))


def test_argsort_dtype_issue19():
    # Issue 19: argsort(dtype=) raised; JAX returns indices of that dtype (any dtype).
    x = A([3, 1, 2])
    out = jnp.argsort(x, dtype=np.int8)
    assert out.dtype == np.int8 and out.tolist() == [1, 2, 0]
    out = jnp.argsort(x, dtype=np.float32)
    assert out.dtype == np.float32 and out.tolist() == [1.0, 2.0, 0.0]
    assert jnp.argsort(x, dtype=None).dtype == np.int32
    np.testing.assert_array_equal(jnp.argsort(X, axis=0, descending=True, dtype=np.int16),
                                  np.argsort(-X, axis=0, kind="stable"))
