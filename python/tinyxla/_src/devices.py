"""CPU devices, shardings, and the per-device buffers of a value split over devices.

Mirrors ``jax.devices``, ``jax.Device`` (as ``CpuDevice``) and
``jax.sharding.SingleDeviceSharding`` (``device_put`` and friends are in ``api.py``). Each
device is a host thread with an in-order stream in the C++ runtime; their number is fixed
when the runtime first starts, from ``jax_num_cpu_devices`` or the environment
(``TINYXLA_NUM_CPU_DEVICES``, ``XLA_FLAGS=--xla_force_host_platform_device_count=N``, read
by the C++ side).
"""
from __future__ import annotations

import atexit
import os
from typing import Any

import numpy as np

from tinyxla import _core
from tinyxla._src import distributed
from tinyxla._src.config import config


class CpuDevice:
    """One CPU device (``jax.Device`` of platform ``'cpu'``); one instance per id. With
    several processes (``distributed.py``) the id is global and ``local_hardware_id`` is
    the index of the device in its own process's runtime."""

    __slots__ = ("id", "process_index", "local_hardware_id")
    platform = "cpu"
    device_kind = "cpu"

    def __init__(self, id: int, process_index: int = 0, local_hardware_id: int | None = None):
        self.id = id
        self.process_index = process_index
        self.local_hardware_id = id if local_hardware_id is None else local_hardware_id

    host_id = property(lambda self: self.process_index)
    task_id = property(lambda self: self.process_index)

    def memory_stats(self) -> dict[str, int]:
        """The runtime allocator's statistics (bytes_in_use, peak_bytes_in_use, ...).

        JAX returns None for CPU devices; tinyxla reports its allocator, which all
        devices share.
        """
        return _core.memory_stats()

    def synchronize_all_activity(self) -> None:
        """Blocks until every operation dispatched to this device has finished."""
        _core.synchronize(self.local_hardware_id)

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"

    def __str__(self) -> str:
        return f"cpu:{self.id}"


class SingleDeviceSharding:
    """The placement of an array on one device (``jax.sharding.SingleDeviceSharding``)."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: CpuDevice, *, memory_kind: str | None = None):
        self._device = device
        self._memory_kind = memory_kind or "device"

    @property
    def device_set(self) -> set[CpuDevice]:
        return {self._device}

    @property
    def _device_assignment(self) -> tuple[CpuDevice, ...]:
        return (self._device,)

    addressable_devices = device_set
    memory_kind = property(lambda self: self._memory_kind)
    num_devices = property(lambda self: 1)
    is_fully_replicated = property(lambda self: True)
    is_fully_addressable = property(lambda self: True)
    has_addressable_devices = property(lambda self: True)

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[CpuDevice, tuple]:
        return {self._device: (slice(None),) * len(global_shape)}

    addressable_devices_indices_map = devices_indices_map

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, SingleDeviceSharding) and other._device is self._device
                and other._memory_kind == self._memory_kind)

    def __hash__(self) -> int:
        return hash((self._device, self._memory_kind))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"


class PmapSharding:
    """The placement of a pmap result: index ``i`` of the leading axis on device ``i`` of
    the map (``jax.sharding.PmapSharding``; JAX 0.10 reports a NamedSharding over a
    one-axis mesh, which places the shards the same way)."""

    __slots__ = ("_devices", "_shape")

    def __init__(self, devices: list[CpuDevice], global_shape: tuple[int, ...]):
        self._devices = tuple(devices)
        self._shape = tuple(global_shape)

    @property
    def device_set(self) -> set[CpuDevice]:
        return set(self._devices)

    @property
    def _device_assignment(self) -> tuple[CpuDevice, ...]:
        return self._devices

    addressable_devices = device_set
    devices = property(lambda self: np.array(self._devices, dtype=object))
    memory_kind = property(lambda self: "device")
    num_devices = property(lambda self: len(self._devices))
    is_fully_replicated = property(lambda self: len(self._devices) == 1)
    is_fully_addressable = property(lambda self: True)

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        return (1, *tuple(global_shape)[1:])

    def devices_indices_map(self, global_shape: tuple[int, ...]) -> dict[CpuDevice, tuple]:
        rest = (slice(None),) * (len(global_shape) - 1)
        return {d: (slice(i, i + 1), *rest) for i, d in enumerate(self._devices)}

    addressable_devices_indices_map = devices_indices_map

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PmapSharding) and other._devices == self._devices

    def __hash__(self) -> int:
        return hash(self._devices)

    def __repr__(self) -> str:
        return (f"PmapSharding(device_ids={[d.id for d in self._devices]}, "
                f"device_platform=CPU, device_shape=({len(self._devices)},))")


class Shard:
    """One device's piece of an array (``jax.Shard``): its device, its index into the
    global array and its data."""

    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device: CpuDevice, index: tuple, data: Any, replica_id: int = 0):
        self.device = device
        self.index = index
        self.data = data
        self.replica_id = replica_id

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


# Filled on first use; the runtime fixes its device count at the same moment.
# _DEVICES: this process's devices by runtime index; _GLOBAL: every process's devices.
_DEVICES: list[CpuDevice] = []
_GLOBAL: list[CpuDevice] = []
_SHARDINGS: list[SingleDeviceSharding] = []

_LATE_DEVICE_COUNT = (
    "jax_num_cpu_devices config should be updated before backends are initialized i.e. "
    "before any JAX operation is executed. You should initialize this config immediately "
    "after `import jax`.")


def _set_num_devices(n: int) -> None:
    try:
        _core.set_num_devices(n)
    except RuntimeError:  # the runtime already runs with another count
        raise RuntimeError(_LATE_DEVICE_COUNT) from None


def _init_devices() -> list[CpuDevice]:
    n = config.jax_num_cpu_devices
    if n is not None and n > 0:
        _set_num_devices(n)
    n = _core.num_devices()
    me, procs = distributed.state.process_id, distributed.state.num_processes
    if procs > 1:
        counts = distributed.allgather(np.array([n], np.int64))[:, 0]
        if len(set(counts.tolist())) != 1:
            raise RuntimeError(f"every process must have the same number of local devices, "
                               f"got {counts.tolist()}")
    devs = [CpuDevice(me * n + i, me, i) for i in range(n)]
    _SHARDINGS[:] = [SingleDeviceSharding(d) for d in devs]
    _GLOBAL[:] = [d for p in range(procs) for d in (
        devs if p == me else [CpuDevice(p * n + i, p, i) for i in range(n)])]
    _DEVICES[:] = devs
    distributed.state.devices_listed = True
    return _DEVICES


def _device(i: int) -> CpuDevice:
    """The CpuDevice with id ``i`` (the runtime's device index)."""
    return (_DEVICES or _init_devices())[i]


def _sharding(i: int) -> SingleDeviceSharding:
    """The SingleDeviceSharding of device ``i``; one shared instance per device."""
    if not _SHARDINGS:
        _init_devices()
    return _SHARDINGS[i]


_default_index = 0  # the runtime index of jax_default_device
_default_error: str | None = None  # why jax_default_device names no device of ours


def default_index() -> int:
    """The runtime index of ``jax_default_device`` (0 when unset): where arrays made from
    host values go, and where jit runs without committed arguments."""
    if _default_error is not None:
        raise RuntimeError(_default_error)
    return _default_index


def _set_default_device(value: Any) -> None:
    global _default_index, _default_error
    _default_index, _default_error = 0, None
    if isinstance(value, str):
        try:
            _check_backend(value)
        except RuntimeError as e:
            _default_error = str(e)
    elif value is not None:
        try:
            _default_index = _device_index(value)
        except ValueError as e:
            _default_error = str(e)


def _on_config_update(name: str, value: Any) -> None:
    if name == "jax_default_device":
        _set_default_device(value)
    # The runtime fixes its device count when it starts, as JAX's backend does.
    if name == "jax_num_cpu_devices" and value is not None and value > 0:
        if _DEVICES and value != len(_DEVICES):
            raise RuntimeError(_LATE_DEVICE_COUNT)
        _set_num_devices(value)


config.add_update_hook(_on_config_update)


def _check_backend(backend: Any) -> None:
    if backend is None or backend == "cpu":
        return
    if backend in ("gpu", "cuda", "rocm", "tpu"):
        raise RuntimeError(
            f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
            f"{backend} are present. Platforms present are: cpu")
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['cpu']")


def devices(backend: str | None = None) -> list[CpuDevice]:
    """All devices of all processes (``jax.devices``); the first call starts the runtime."""
    _check_backend(backend)
    if not _DEVICES:
        _init_devices()
    return list(_GLOBAL)


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list[CpuDevice]:
    """Devices of a process, this one by default (``jax.local_devices``)."""
    p = process_index if process_index is not None else host_id
    if p is None or p == distributed.state.process_id:
        _check_backend(backend)
        return list(_DEVICES or _init_devices())
    return [d for d in devices(backend) if d.process_index == p]


def device_count(backend: str | None = None) -> int:
    """Number of devices of all processes (``jax.device_count``)."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """Number of devices of this process (``jax.local_device_count``)."""
    return len(local_devices(backend=backend))


def process_index(backend: str | None = None) -> int:
    """This process's index (``jax.process_index``): its MPI rank, 0 without
    ``jax.distributed.initialize``."""
    return distributed.state.process_id


def process_count(backend: str | None = None) -> int:
    """Number of processes (``jax.process_count``)."""
    return distributed.state.num_processes


def process_indices(backend: str | None = None) -> list[int]:
    """Every process's index (``jax.process_indices``)."""
    return list(range(distributed.state.num_processes))


def default_backend() -> str:
    """The platform of the default device (``jax.default_backend``): ``'cpu'``."""
    return "cpu"


def _device_index(device: Any) -> int:
    """The runtime index of a device_put target (a CpuDevice or a SingleDeviceSharding)."""
    if isinstance(device, SingleDeviceSharding):
        device = device._device
    if isinstance(device, CpuDevice):
        if device.process_index != distributed.state.process_id:
            raise ValueError(f"{device!r} belongs to process {device.process_index}, not to "
                             f"this process ({distributed.state.process_id})")
        return device.local_hardware_id
    raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                     "`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these values. "
                     f"Received invalid value: {device!r}")


# --------------------------------------------------------------------------------------
# Values split over devices.

class ShardedBuffers:
    """The per-device buffers of an Array sharded along axis 0 (one index per device)."""

    __slots__ = ("handles", "devices", "key")

    def __init__(self, handles: list, devices: list[int]):
        self.handles = handles
        self.devices = devices
        self.key = (tuple(devices), handles[0].shape)  # what a pmap's cache key needs


_stack_exes: dict[Any, Any] = {}


def gather_shards(sharded: ShardedBuffers) -> Any:
    """One handle on device 0 stacking the shards along a new axis 0 (an async copy)."""
    h0 = sharded.handles[0]
    key = (tuple(h0.shape), h0.dtype_code, len(sharded.handles))
    exe = _stack_exes.get(key)
    if exe is None:
        b = _core.GraphBuilder()
        params = [b.parameter(list(h0.shape), h0.dtype_code) for _ in sharded.handles]
        rows = [b.reshape(p, [1, *h0.shape]) for p in params]
        b.set_outputs([rows[0] if len(rows) == 1 else b.concatenate(rows, 0)])
        exe = _stack_exes[key] = _core.compile(b)
    return exe.run(list(sharded.handles), sharded.devices[0])[0]


def _drain() -> None:
    """Waits for every device's queued work (the GIL released meanwhile)."""
    for i in range(_core.num_devices()):
        _core.synchronize(i)


def _drain_before_fork() -> None:
    """os.fork(): the child has none of the device threads, so the work in flight is
    finished first and the child starts from idle devices (it starts threads of its own).
    Not from inside a host callback, whose own device task could then never finish."""
    if not _core.in_host_call():
        _drain()


# At exit: device threads are never joined, and one still running a kernel while the
# process tears down its static state and unloads generated modules crashes it.
atexit.register(_drain)
os.register_at_fork(before=_drain_before_fork)
