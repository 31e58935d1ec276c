"""The array API surface (namespace, version, inspection namespace), DLPack exchange with
numpy (and torch where installed) both ways, printing, save/load, the from* constructors,
logspace/geomspace, the narrow ml_dtypes scalar types and numpy's re-exported names."""
from __future__ import annotations

import gc
import io
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from jnp_reference import assert_grad_numeric, assert_jit_matches, assert_same


def test_namespace_and_version():
    assert jnp.__array_api_version__ == "2024.12"
    x = jnp.ones(2)
    assert x.__array_namespace__() is jnp
    assert x.__array_namespace__(api_version="2024.12") is jnp
    assert jnp.__array_namespace__() is jnp
    with pytest.raises(ValueError, match=r"api_version='2023.12' is not available; "
                                         r"available versions are: \['2024.12'\]"):
        x.__array_namespace__(api_version="2023.12")
    seen = []
    jax.jit(lambda v: seen.append(v.__array_namespace__()) or v)(x)
    assert seen == [jnp]


def test_inspection_namespace(x64):
    info = jnp.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                   "max dimensions": 64}
    assert info.default_device() is None
    assert info.devices() == [None, *jax.devices()]
    assert info.default_dtypes() == {"real floating": np.dtype("float64"),
                                     "complex floating": np.dtype("complex128"),
                                     "integral": np.dtype("int64"),
                                     "indexing": np.dtype("int64")}
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64", "float32", "float64", "complex64",
                                  "complex128"}
    assert info.dtypes(kind="signed integer") == {n: np.dtype(n) for n in
                                                  ["int8", "int16", "int32", "int64"]}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64",
                                                                   "complex128"}


def test_inspection_namespace_x32():
    info = jnp.__array_namespace_info__()
    assert info.default_dtypes()["integral"] == np.dtype("int32")
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16",
                                  "uint32", "float32", "complex64"}
    assert set(info.dtypes(kind="real floating")) == {"float32"}


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float16", "float32",
                                   "complex64"])
def test_dlpack_with_numpy_is_zero_copy(dtype):
    dt = np.dtype(dtype)
    host = (np.arange(12) % 3).astype(dt).reshape(3, 4)
    x = jnp.from_dlpack(host)
    assert x.dtype == dt and x.shape == (3, 4)
    assert x.unsafe_buffer_pointer() == host.ctypes.data
    assert_same(x, host)
    back = np.from_dlpack(x)
    assert back.ctypes.data == x.unsafe_buffer_pointer()
    assert not back.flags.writeable  # tinyxla buffers are immutable
    assert_same(back, host)


def test_dlpack_lifetimes():
    host = np.arange(1000, dtype=np.float32)
    x = jnp.from_dlpack(host)
    del host
    gc.collect()
    assert float(jnp.sum(x)) == 499500.0  # the borrowed memory outlives the producer
    y = jnp.arange(6.0)
    back = np.from_dlpack(y)
    del y
    gc.collect()
    assert_same(back, np.arange(6.0, dtype=np.float32))  # the capsule keeps the buffer
    # The producer is released once no array uses its memory (also when the last user is
    # a computation finishing on a device thread).
    host = np.ones(100_000, np.float32)
    baseline = sys.getrefcount(host)
    results = [jax.jit(lambda v: (v * 2).sum())(jnp.from_dlpack(host)) for _ in range(20)]
    assert [float(r) for r in results] == [200_000.0] * 20
    for _ in range(100):
        gc.collect()
        if sys.getrefcount(host) == baseline:
            break
    assert sys.getrefcount(host) == baseline
    # A borrowed buffer is never reused for a donated result: the producer keeps its data.
    host = np.ones(512, np.float32)
    out = jax.jit(lambda v: v * 3, donate_argnums=0)(jnp.from_dlpack(host))
    assert_same(out, np.full(512, 3.0, np.float32))
    assert_same(host, np.ones(512, np.float32))


def test_dlpack_copies():
    host = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    assert_same(jnp.from_dlpack(host[::-1, ::2]), host[::-1, ::2])  # strided: copied
    with pytest.raises(ValueError, match="copy=False"):
        jnp.from_dlpack(host[:, ::2], copy=False)
    copied = jnp.from_dlpack(host, copy=True)
    assert copied.unsafe_buffer_pointer() != host.ctypes.data
    assert_same(jnp.from_dlpack(np.ones((0, 3), np.int8)), np.ones((0, 3), np.int8))
    wide = jnp.from_dlpack(np.arange(4, dtype=np.float64))  # x64 off: float32, as in JAX
    assert wide.dtype == np.float32
    assert np.from_dlpack(jnp.arange(3.0), copy=True).flags.writeable
    assert_same(jnp.from_dlpack(jnp.arange(3.0).__dlpack__()), np.arange(3.0))
    assert jnp.ones(2).__dlpack_device__() == (1, 0)  # (kDLCPU, 0)
    assert_same(jnp.from_dlpack(np.arange(3.0), copy=None, device=jax.devices()[0]),
                np.arange(3.0, dtype=np.float32))
    with pytest.raises(BufferError):
        jnp.ones(2).__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        jnp.from_dlpack([1, 2])
    assert jax.dlpack.is_supported_dtype(np.float32)
    assert not jax.dlpack.is_supported_dtype(np.dtype("S3"))


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    x = jnp.from_dlpack(t)
    assert x.unsafe_buffer_pointer() == t.data_ptr()
    assert_same(x, t.numpy())
    y = jnp.arange(6.0).reshape(2, 3) * 2
    back = torch.from_dlpack(y)
    assert back.data_ptr() == y.unsafe_buffer_pointer()
    assert_same(back.numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3) * 2)
    assert_same(jnp.from_dlpack(torch.arange(10)[::3]), np.arange(10)[::3].astype(np.int32))
    half = jnp.from_dlpack(torch.full((3,), 1.5, dtype=torch.bfloat16))
    assert half.dtype == jnp.bfloat16 and float(half[0]) == 1.5


def test_printing_save_load():
    assert jnp.array_repr(jnp.ones(2)) == "ArrayImpl([1., 1.], dtype=float32)"
    assert jnp.array_str(jnp.ones(2)) == "[1. 1.]"
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert str(jnp.array([1.23456])) == "[1.23]"
    old = jnp.get_printoptions()
    jnp.set_printoptions(precision=3)
    try:
        assert "1.235" in repr(jnp.array([1.23456]))
    finally:
        jnp.set_printoptions(**old)
    for x in [jnp.array([2, 4], dtype=jnp.bfloat16), jnp.arange(6).reshape(2, 3)]:
        f = io.BytesIO()
        jnp.save(f, x)
        f.seek(0)
        loaded = jnp.load(f)
        assert isinstance(loaded, jax.Array) and loaded.dtype == x.dtype
        assert_same(loaded, x)
    f = io.BytesIO()
    jnp.savez(f, a=np.ones(2))
    f.seek(0)
    assert_same(jnp.load(f)["a"], np.ones(2))


def test_constructors():
    assert_same(jnp.fromfunction(lambda i, j: i + 2 * j, (2, 3)),
                np.fromfunction(lambda i, j: i + 2 * j, (2, 3)).astype(np.float32))
    assert_same(jnp.fromfunction(lambda i: i * i, (4,), dtype=int), np.arange(4) ** 2,
                dtype="int32")
    assert_same(jnp.frombuffer(b"\x01\x02\x03\x04", dtype=jnp.uint8), np.arange(1, 5),
                dtype="uint8")
    assert_same(jnp.frombuffer(b"\x01\x02\x03\x04", dtype=np.int16, offset=2, count=1),
                np.frombuffer(b"\x01\x02\x03\x04", dtype=np.int16, offset=2, count=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_same(jnp.fromstring("1 2 3", sep=" "), np.array([1.0, 2.0, 3.0], np.float32))
    assert_same(jnp.fromstring("1,2,3", dtype=int, sep=","), np.array([1, 2, 3]), dtype="int32")
    with pytest.raises(NotImplementedError, match="jnp.fromiter"):
        jnp.fromiter(range(3), int)


@pytest.mark.parametrize("args,kwargs", [
    ((0, 2, 3), {}), ((0, 2, 3), dict(base=2.0, endpoint=False)),
    ((np.array([0.0, 1.0]), 2, 3), dict(axis=1)), ((1, -1, 5), dict(base=3)),
    ((0, 2, 0), {}),
], ids=str)
def test_logspace(args, kwargs):
    assert_same(jnp.logspace(*args, **kwargs), np.logspace(*args, **kwargs).astype(np.float32),
                rtol=1e-6)


@pytest.mark.parametrize("args,kwargs", [
    ((1, 1000, 4), {}), ((-1, -1000, 4), dict(endpoint=False)),
    ((np.array([1.0, 2.0]), 1000, 3), dict(axis=1)), ((2, 5, 1), {}), ((0.5, 8, 5), {}),
], ids=str)
def test_geomspace(args, kwargs):
    assert_same(jnp.geomspace(*args, **kwargs),
                np.geomspace(*args, **kwargs).astype(np.float32), rtol=1e-5)


def test_ranges_pinned_from_jax():
    assert_same(jnp.logspace(0, 2, 3, dtype=int), np.array([1, 10, 100]), dtype="int32")
    assert_same(jnp.geomspace(1, 1000, 4, dtype=int), np.array([1, 10, 100, 1000]))
    assert np.isnan(np.asarray(jnp.geomspace(0, 10, 3))).all()  # numpy raises
    assert jnp.geomspace(1j, 1000j, 4).dtype == np.complex64
    assert_jit_matches(lambda a, b: jnp.geomspace(a, b, 5), jnp.float32(2), jnp.float32(50))
    assert_grad_numeric(lambda v: jnp.logspace(v[0], v[1], 4, base=2.0), np.array([0.5, 2.0]))


def test_reexported_names_and_dtypes():
    assert jnp.iterable([1]) and not jnp.iterable(1)
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning
    assert jnp.character is np.character and jnp.flexible is np.flexible
    assert jnp.object_ is np.object_
    for name in ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                 "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                 "int2", "int4", "uint2", "uint4"]:
        scalar_type = getattr(jnp, name)
        assert np.dtype(scalar_type) == np.dtype(getattr(ml_dtypes, name))
        assert scalar_type == getattr(ml_dtypes, name)
    assert float(jnp.finfo(jnp.float8_e5m2).max) == 57344.0
    assert jnp.iinfo(jnp.int4).min == -8
    assert jnp.issubdtype(jnp.float8_e4m3fn, jnp.floating)
