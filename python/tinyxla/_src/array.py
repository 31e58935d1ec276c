"""``tinyxla.Array`` (JAX's ``jax.Array``): a future of an n-d array on a device.

An Array wraps a ``_core.Array`` handle whose shape, dtype and device are known at once and
whose buffer is filled asynchronously; anything that reads values (repr, ``np.asarray``,
``float``, ``.item()``, ``block_until_ready``) waits and raises a failed kernel's error.
Operators and most methods delegate to ``tinyxla.numpy``, which installs them here and on
``core.Tracer`` (``numpy/array_methods.py``), so traced values behave like arrays.

The class is named ``ArrayImpl`` at run time, as JAX's concrete array class is, so Python's
own error texts (``unhashable type: 'ArrayImpl'``, ``unsupported operand type(s) for +:
'ArrayImpl' and 'list'``) match JAX's. ``Array`` is an ABC: tracers are registered as
virtual subclasses, so ``isinstance(tracer, tinyxla.Array)`` holds as in JAX.
"""
from __future__ import annotations

import abc
import enum
import gc
import operator
from typing import Any, Callable

import numpy as np

from tinyxla import _core
from tinyxla._src import core, devices, dtypes, transfer_guard

# The runtime's dtype codes: _DTYPES[code] is the numpy dtype, _CODE[dtype] the code.
_DTYPES: tuple[np.dtype, ...] = (
    dtypes.bool_dtype, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
    dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.float16, dtypes.bfloat16,
    dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
_CODE: dict[np.dtype, int] = {dt: i for i, dt in enumerate(_DTYPES)}


class DLDeviceType(enum.IntEnum):
    """DLPack device types (``__dlpack_device__`` returns ``(kDLCPU, 0)``, as JAX does)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_SETITEM_ERROR = (
    "JAX arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


class Array(metaclass=abc.ABCMeta):
    """A JAX array (``jax.Array``, concretely ``jaxlib._jax.ArrayImpl``).

    Slots: ``_h`` (the ``_core.Array`` handle), ``dtype`` (kept here rather than read
    from the handle: it is on every dispatch path), ``weak_type``, ``_committed`` (set by
    ``device_put`` with a device), ``_aval`` (the abstract value, made on first use).
    Build instances with ``_wrap``; the class has no public constructor, as in JAX. Differences from JAX: ``.view``, ``.flat`` and the
    only sharding is pmap's (the leading axis split over devices).

    A pmap result holds its per-device buffers in ``_shards`` (a
    ``devices.ShardedBuffers``) and gets ``_h`` (all of it on one device) on first use.
    An array placed by a NamedSharding keeps its whole value in ``_h`` and its sharding and
    per-device shards in ``_layout`` (a ``sharded_array.ShardLayout``).
    """

    __slots__ = ("_h", "dtype", "weak_type", "_committed", "_shards", "_layout", "_aval",
                 "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, *args: Any, **kwargs: Any):
        raise TypeError("tinyxla.Array has no public constructor; use jnp.asarray, "
                        "jnp.array or jax.device_put")

    def __getattr__(self, attr: str) -> Any:
        # Only reached for unset slots: the gathered value of a pmap result, or no shards.
        if attr == "_h":
            sharded = self._shards
            if sharded is not None:
                h = self._h = devices.gather_shards(sharded)
                return h
            layout = self._layout
            if layout is not None:  # a sharded jit's result: assembled from its blocks
                h = self._h = layout.assemble()
                return h
        elif attr == "_shards" or attr == "_layout":
            return None
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    # -- metadata, known without waiting --------------------------------------------------

    # A sharded jit's result has its aval but no _h until read: its shape must not
    # assemble its blocks (a loop feeding results back in gathered every input).
    @property
    def shape(self) -> tuple[int, ...]:
        aval = self._aval
        return self._h.shape if aval is None else aval.shape

    @property
    def ndim(self) -> int:
        aval = self._aval
        return self._h.ndim if aval is None else len(aval.shape)

    @property
    def size(self) -> int:
        return self._h.size

    @property
    def nbytes(self) -> int:
        return self._h.nbytes

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def aval(self) -> core.ShapedArray:
        """The abstract value ``ShapedArray(shape, dtype, weak_type)``."""
        # Made once: tracing (vmap, at every call) reads closed-over arrays' avals.
        aval = self._aval
        if aval is None:
            aval = self._aval = core.ShapedArray(self.shape, self.dtype, self.weak_type)
        return aval

    @property
    def device(self) -> devices.CpuDevice:
        if self._shards is not None or self._layout is not None:  # JAX 0.10 answers a multi-device array's sharding
            return self.sharding
        return devices._device(self._h.device)

    def devices(self) -> set[devices.CpuDevice]:
        if self._shards is not None or self._layout is not None:
            return set(self.sharding.device_set)
        return {devices._device(self._h.device)}

    @property
    def sharding(self) -> Any:
        layout = self._layout
        if layout is not None:
            return layout.sharding
        sharded = self._shards
        if sharded is not None:
            return devices.PmapSharding([devices._device(d) for d in sharded.devices],
                                        (len(sharded.devices), *sharded.handles[0].shape))
        return devices._sharding(self._h.device)

    @property
    def addressable_shards(self) -> list:
        """The per-device pieces (``jax.Array.addressable_shards``): one per device of a
        pmap result (shape ``(1, ...)``), one block per device of a NamedSharding, else the
        whole array."""
        layout = self._layout
        if layout is not None:
            return layout.shards(self)
        sharded = self._shards
        if sharded is None:
            return [devices.Shard(self.device, (slice(None),) * self.ndim, self)]
        out = []
        for i, (h, d) in enumerate(zip(sharded.handles, sharded.devices)):
            data = _wrap(_core.reshape(h, [1, *h.shape]), self.weak_type, self.dtype)
            data._committed = True
            out.append(devices.Shard(devices._device(d),
                                     (slice(i, i + 1),) + (slice(None),) * len(h.shape), data))
        return out

    global_shards = addressable_shards

    @property
    def committed(self) -> bool:
        return self._committed

    is_fully_addressable = property(lambda self: self.sharding.is_fully_addressable)
    is_fully_replicated = property(lambda self: self.sharding.is_fully_replicated)

    # -- synchronisation and lifetime ----------------------------------------------------

    def block_until_ready(self) -> "Array":
        """Waits for the value; raises the error of a failed computation. Returns self."""
        try:
            handles = (_HANDLE.__get__(self),)
        except AttributeError:  # a pmap or sharded jit result not gathered: wait for every shard
            sharded = self._shards
            handles = sharded.handles if sharded is not None else self._layout.handles.values()
        # Outside the except block: a shard's error is not chained to the AttributeError.
        for h in handles:
            h.wait()
        return self

    def is_ready(self) -> bool:
        return self._h.is_ready()

    def unsafe_buffer_pointer(self) -> int:
        """Mirrors ``jax.Array.unsafe_buffer_pointer``: the address of the first element
        (after waiting for the value, since a donation may move storage when it runs)."""
        return self._h.unsafe_buffer_pointer()

    def copy_to_host_async(self) -> None:
        """Accepted for compatibility: buffers already live in host memory."""

    def delete(self) -> None:
        """Releases the buffer; later uses raise ``RuntimeError: Array has been deleted``."""
        _HANDLE.__set__(self, self._h.shape)
        self.__class__ = _DeletedArray

    def is_deleted(self) -> bool:
        return False

    def addressable_data(self, index: int) -> "Array":
        """The data on the ``index``-th local device: the array itself (one device)."""
        if self._shards is not None:
            return self.addressable_shards[index].data
        if index != 0:
            raise IndexError(f"addressable_data index {index} out of range for 1 shard")
        return self

    def on_device_size_in_bytes(self) -> int:
        return self._h.nbytes

    # -- host values (these wait) -------------------------------------------------------

    @property
    def _value(self) -> np.ndarray:
        """The values as a read-only numpy view of the buffer (waits)."""
        return self._h.numpy(self.dtype)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if dtype is None and copy is None:
            return self._value  # zero copy, read-only as in JAX
        if copy is None:
            return np.asarray(self._value, dtype=dtype)
        return np.array(self._value, dtype=dtype, copy=copy)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: bool | None = None) -> Any:
        """A DLPack capsule sharing the (dense) values; waits. A DLPack 1.0 capsule (what
        a consumer passing ``max_version >= (1, 0)`` gets) is marked read-only unless
        ``copy``; ``stream`` is ignored on CPU. Errors are the Array API's BufferErrors."""
        if dl_device is not None and tuple(dl_device) != (DLDeviceType.kDLCPU, 0):
            raise BufferError("The device specification passed to to_dlpack contains an "
                              f"unsupported device type (DLDeviceType: {dl_device[0]})")
        if max_version is not None and tuple(max_version) < (0, 5):
            raise BufferError("JAX does not support any version below (0, 5) but version "
                              f"({max_version}) was requested.")
        if copy is False and not self._h.is_contiguous:
            raise BufferError("to_dlpack: the array is a strided view, which needs a copy, "
                              "but copy=False")
        versioned = max_version is not None and tuple(max_version) >= (1, 0)
        return self._h.dlpack(versioned, bool(copy))

    def __dlpack_device__(self) -> tuple[DLDeviceType, int]:
        return DLDeviceType.kDLCPU, 0

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self._value.tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return self._value.tobytes(order)

    def __bool__(self) -> bool:
        size = self._h.size
        if size == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty.")
        if size > 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        return bool(self._value)

    def _check_scalar(self) -> np.ndarray:
        ndim = self._h.ndim
        if ndim:
            raise TypeError("Only scalar arrays can be converted to Python scalars; "
                            f"got arr.{ndim=}")
        return self._value

    def __float__(self) -> float:
        return self._check_scalar().__float__()

    def __int__(self) -> int:
        return self._check_scalar().__int__()

    def __complex__(self) -> complex:
        return self._check_scalar().__complex__()

    def __index__(self) -> int:
        if self._h.ndim or not dtypes.issubdtype(self.dtype, np.integer):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return operator.index(self._value)

    def __repr__(self) -> str:
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}"
        if self.weak_type:
            dtype_str += ", weak_type=True"
        line_width = np.get_printoptions()["linewidth"]
        if self._h.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(self._value, prefix=prefix, suffix=",", separator=", ",
                                max_line_width=line_width)
        last_line_len = len(s) - s.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 2 > line_width else " "
        return f"{prefix}{s},{sep}{dtype_str})"

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, format_spec: str) -> str:
        value = self._value
        return format(value if value.ndim else value[()], format_spec)

    def __reduce__(self) -> tuple[Callable[..., "Array"], tuple[np.ndarray, bool]]:
        return _unpickle, (np.array(self._value), self.weak_type)

    def __copy__(self) -> Any:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> Any:
        return self.copy()

    def to_device(self, device: Any, *, stream: Any = None) -> "Array":
        """A copy committed to ``device`` (``jax.Array.to_device``)."""
        if stream is not None:
            raise NotImplementedError("stream argument of array.to_device()")
        return _device_put_leaf(self, devices._device_index(device))


Array.__name__ = Array.__qualname__ = "ArrayImpl"
ArrayImpl = Array  # the run-time class name, so pickle finds it
Array.register(core.Tracer)

_HANDLE = Array.__dict__["_h"]  # the slot descriptor; _DeletedArray keeps metadata in it
_core.set_pytree_array_type(Array)
_new_array = object.__new__


def _wrap(handle: Any, weak_type: bool, dtype: np.dtype) -> Array:
    """An Array around a ``_core.Array`` handle: the constructor every impl uses.

    ``dtype`` must be the handle's dtype, taken from ``_DTYPES`` (callers know it without
    asking the handle).
    """
    a = _new_array(Array)
    a._h = handle
    a.dtype = dtype
    a.weak_type = weak_type
    a._committed = False
    a._aval = None
    return a


class _DeletedArray(Array):
    """What ``Array.delete()`` turns an array into: metadata stays, any use raises."""

    __slots__ = ()

    @property
    def _h(self) -> Any:
        raise RuntimeError(f"Array has been deleted with shape={self.dtype.name}"
                           f"[{','.join(map(str, self.shape))}].")

    shape = property(lambda self: _HANDLE.__get__(self))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    itemsize = property(lambda self: self.dtype.itemsize)

    def delete(self) -> None:
        pass

    def block_until_ready(self) -> Array:
        return self._h  # raises: deleted

    def is_deleted(self) -> bool:
        return True


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every Array alive in this process and not deleted (``jax.live_arrays``), found by
    walking the objects the garbage collector tracks (so it costs a heap walk, not a
    registry on every array's creation)."""
    devices._check_backend(platform)
    return [o for o in gc.get_objects() if type(o) is Array]


# ----------------------------------------------------------------------------------------
# Host values to Arrays.

def _invalid_type(x: Any) -> TypeError:
    return TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


def _from_numpy(x: Any, device: int | None = None, weak_type: bool = False) -> Array:
    """An Array holding a numpy array or scalar, strong unless ``weak_type`` (64-bit dtypes
    truncated with x64 off), on ``device`` (default: ``jax_default_device``'s)."""
    if device is None:
        device = devices.default_index()
    arr = np.asarray(x)
    dt = dtypes.canonicalize_dtype(arr.dtype)
    code = _CODE.get(dt)
    if code is None:
        raise TypeError(f"Dtype {arr.dtype} is not a valid JAX array type. Only arrays of "
                        "numeric types are supported by JAX.")
    if arr.dtype != dt:
        arr = arr.astype(dt)
    if transfer_guard.host_to_device:
        transfer_guard.check_host_to_device(arr.shape, dt.name, weak_type, device)
    return _wrap(_core.from_numpy(arr, code, device), weak_type, _DTYPES[code])


def _from_python_scalar(x: bool | int | float | complex, device: int | None = None) -> Array:
    """A 0-d Array of a Python scalar's default dtype; weak unless it is a bool."""
    if device is None:
        device = devices.default_index()
    code = _CODE[dtypes.scalar_type_to_dtype(type(x), x)]
    if transfer_guard.host_to_device:
        transfer_guard.check_host_to_device((), _DTYPES[code].name, type(x) is not bool, device)
    return _wrap(_core.scalar(x, code, device), type(x) is not bool, _DTYPES[code])


_PY_SCALARS = frozenset({bool, int, float, complex})


def _to_array(x: Any, device: int | None = None) -> Array:
    """A concrete value as an Array: Arrays pass, Python scalars become weak arrays,
    numpy values strong ones; anything else raises JAX's TypeError."""
    if type(x) is Array:
        return x
    if type(x) in _PY_SCALARS:
        return _from_python_scalar(x, device)
    jax_array = getattr(x, "__jax_array__", None)
    if jax_array is not None:
        return _to_array(jax_array(), device)
    if isinstance(x, (np.ndarray, np.generic)):
        return _from_numpy(x, device)
    raise _invalid_type(x)


def _device_put_leaf(x: Any, device: int | None) -> Any:
    """One leaf of ``device_put``: uncommitted without a device, committed with one."""
    if isinstance(x, core.Tracer):
        return x
    if type(x) is Array:
        if device is None:
            return x
        h = x._h
        if h.device != device:
            h = _core.from_numpy(np.ascontiguousarray(x._value), _CODE[x.dtype], device)
        out = _wrap(h, x.weak_type, x.dtype)
    else:
        with transfer_guard.explicit():
            out = _to_array(x, device)
    out._committed = device is not None
    return out


def _unpickle(value: np.ndarray, weak_type: bool) -> Array:
    return _from_numpy(value, weak_type=weak_type)
