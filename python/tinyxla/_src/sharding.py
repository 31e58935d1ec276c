"""Meshes and named shardings: ``jax.sharding.Mesh``, ``AxisType``, ``PartitionSpec``,
``NamedSharding``, the ``Sharding`` base, ``jax.make_mesh`` and the current mesh
(``jax.set_mesh``).

A ``NamedSharding`` says which block of an array each device of a mesh holds: array axis
``d`` is split over the mesh axes named by ``spec[d]`` (major to minor), every other mesh
axis replicates. The arithmetic (``devices_indices_map``, ``shard_shape``, replica ids) is
here; how an Array holds its shards is ``sharded_array.py``.

Differences from JAX: meshes of ``Explicit`` axes do not put shardings into types, so eager
operations on a sharded array give single-device results (under ``jit`` the results carry
the propagated sharding, see ``interpreters/spmd.py``); ``AbstractMesh`` is the mesh itself.
"""
from __future__ import annotations

import abc
import contextlib
import enum
import math
import threading
from typing import Any, Hashable, Iterator, Sequence

import numpy as np

from tinyxla._src import devices as devices_mod
from tinyxla._src.devices import CpuDevice, PmapSharding, SingleDeviceSharding


class AxisType(enum.Enum):
    """How a mesh axis is partitioned (``jax.sharding.AxisType``)."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class DuplicateSpecError(Exception):
    """A mesh axis named twice in one PartitionSpec (JAX's ``DuplicateSpecError``)."""


class IndivisibleError(ValueError):
    """A dimension that its mesh axes do not divide evenly (JAX's ``IndivisibleError``)."""


class PartitionSpec:
    """How each array axis maps to mesh axes (``jax.sharding.PartitionSpec``, ``P``): an
    entry is None (not split), a mesh axis name, or a tuple of names (split over their
    product, major first). Unlike a tuple, ``P('x') != P('x', None)``, as in JAX 0.10."""

    __slots__ = ("_parts",)

    def __init__(self, *partitions: Any):
        parts = []
        for p in partitions:
            if isinstance(p, (list, tuple)):
                p = tuple(p)
                if len(p) == 1:
                    p = p[0]
                elif not p:
                    p = None
            parts.append(p)
        self._parts = tuple(parts)

    def __iter__(self) -> Iterator:
        return iter(self._parts)

    def __len__(self) -> int:
        return len(self._parts)

    def __getitem__(self, i: Any) -> Any:
        return self._parts[i]

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, PartitionSpec) and other._parts == self._parts

    def __hash__(self) -> int:
        return hash(("P", self._parts))

    def __repr__(self) -> str:
        inner = ", ".join(repr(p) for p in self._parts)
        return f"P({inner},)" if len(self._parts) == 1 else f"P({inner})"

    def axes_of(self, dim: int) -> tuple:
        """The mesh axis names array axis ``dim`` is split over (empty when not split)."""
        if dim >= len(self._parts) or self._parts[dim] is None:
            return ()
        p = self._parts[dim]
        return p if isinstance(p, tuple) else (p,)

    def mesh_axes(self) -> list:
        return [a for d in range(len(self._parts)) for a in self.axes_of(d)]


P = PartitionSpec


class Mesh:
    """An n-d array of devices with named axes (``jax.sharding.Mesh``); usable as a
    context manager that makes it the current mesh (as ``jax.set_mesh``)."""

    def __init__(self, devices: Any, axis_names: str | Sequence[Hashable],
                 axis_types: Any = None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        devs = np.asarray(devices, dtype=object)
        axis_names = tuple(axis_names)
        if devs.ndim != len(axis_names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length "
                f"of its second argument (`axis_names`), but got devices.ndim == {devs.ndim} "
                f"and len(axis_names) == {len(axis_names)}.")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh axis names must be unique, got {axis_names}")
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(axis_names)
        self.devices = devs
        self.axis_names = axis_names
        self.axis_types = tuple(axis_types)
        self._shape = dict(zip(axis_names, devs.shape))

    @property
    def shape(self) -> dict:
        return self._shape

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[CpuDevice]:
        return [d for d in self.devices.flat if d.process_index == devices_mod.process_index()]

    local_mesh = property(lambda self: self)
    abstract_mesh = property(lambda self: self)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, Mesh) and other.axis_names == self.axis_names
                and other.axis_types == self.axis_types
                and other.devices.shape == self.devices.shape
                and all(a is b for a, b in zip(other.devices.flat, self.devices.flat)))

    def __hash__(self) -> int:
        return hash((self.axis_names, self.axis_types, self.devices.shape,
                     tuple(d.id for d in self.devices.flat)))

    def __enter__(self) -> "Mesh":
        _mesh_stack.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _mesh_stack.stack.pop()

    def _short(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.devices.shape))
        types = ", ".join(t.name for t in self.axis_types)
        return f"{axes}, axis_types=({types}{',' if len(self.axis_types) == 1 else ''})"

    def __str__(self) -> str:
        return f"Mesh({self._short()})"

    def __repr__(self) -> str:
        types = ", ".join(t.name for t in self.axis_types)
        comma = "," if len(self.axis_types) == 1 else ""
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types=({types}{comma}))")


class _MeshStack(threading.local):
    def __init__(self) -> None:
        self.stack: list[Mesh] = []


_mesh_stack = _MeshStack()


def get_mesh() -> Mesh | None:
    """The current mesh set by ``set_mesh`` / ``with mesh:`` (``jax.sharding.get_mesh``)."""
    return _mesh_stack.stack[-1] if _mesh_stack.stack else None


get_abstract_mesh = get_mesh


class _SetMesh:
    """What ``set_mesh`` returns: the mesh is already current; as a context manager it is
    undone at exit (JAX's ``set_mesh`` works both ways)."""

    def __init__(self, mesh: Mesh):
        self.mesh = mesh
        self.prev = list(_mesh_stack.stack)
        _mesh_stack.stack.append(mesh)

    def __enter__(self) -> Mesh:
        return self.mesh

    def __exit__(self, *exc: Any) -> None:
        _mesh_stack.stack[:] = self.prev


def set_mesh(mesh: Mesh) -> _SetMesh:
    """Makes ``mesh`` current, so a bare PartitionSpec names a sharding over it
    (``jax.set_mesh``)."""
    if not isinstance(mesh, Mesh):
        raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
    return _SetMesh(mesh)


@contextlib.contextmanager
def use_mesh(mesh: Mesh) -> Iterator[Mesh]:
    """``with use_mesh(mesh):`` makes ``mesh`` current inside the block (older JAX's
    ``jax.sharding.use_mesh``)."""
    with set_mesh(mesh):
        yield mesh


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[Hashable],
              axis_types: Any = None, *, devices: Sequence[CpuDevice] | None = None) -> Mesh:
    """A mesh of the first ``prod(axis_shapes)`` devices in id order (``jax.make_mesh``);
    axes are ``Explicit`` unless ``axis_types`` says otherwise, as in JAX 0.10."""
    axis_shapes = tuple(axis_shapes)
    axis_names = tuple(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError("Mesh requires the ndim of its first argument (`devices`) to equal "
                         "the length of its second argument (`axis_names`), but got "
                         f"devices.ndim == {len(axis_shapes)} and "
                         f"len(axis_names) == {len(axis_names)}.")
    devs = list(devices_mod.devices() if devices is None else devices)
    n = math.prod(axis_shapes)
    if n > len(devs):
        raise ValueError(f"Number of devices {len(devs)} must be >= the product of mesh_shape "
                         f"{axis_shapes}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    arr = np.empty(n, dtype=object)
    arr[:] = devs[:n]
    return Mesh(arr.reshape(axis_shapes), axis_names, axis_types)


class Sharding(abc.ABC):
    """The base of the shardings (``jax.sharding.Sharding``); the single-device and pmap
    shardings (in ``devices.py``, below this layer) are registered as subclasses."""


Sharding.register(SingleDeviceSharding)
Sharding.register(PmapSharding)


class NamedSharding(Sharding):
    """An array split over a mesh by a PartitionSpec (``jax.sharding.NamedSharding``)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None):
        if not isinstance(spec, PartitionSpec):
            if spec is None:
                spec = PartitionSpec()
            else:
                raise TypeError("NamedSharding expects a PartitionSpec as its spec, got "
                                f"{spec!r}")
        seen: set = set()
        for name in spec.mesh_axes():
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                                 f"{mesh.axis_names}.")
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at "
                    f"most one positional dimension, but {spec} has duplicate entries for "
                    f"`{name}`")
            seen.add(name)
        self.mesh = mesh
        self.spec = spec
        self._memory_kind = memory_kind or "device"

    memory_kind = property(lambda self: self._memory_kind)

    @property
    def device_set(self) -> set[CpuDevice]:
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self) -> tuple[CpuDevice, ...]:
        return tuple(self.mesh.devices.flat)

    @property
    def addressable_devices(self) -> set[CpuDevice]:
        return set(self.mesh.local_devices)

    num_devices = property(lambda self: self.mesh.size)
    is_fully_addressable = property(
        lambda self: len(self.mesh.local_devices) == self.mesh.size)
    has_addressable_devices = property(lambda self: bool(self.mesh.local_devices))

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[a] == 1 for a in self.spec.mesh_axes())

    def _splits(self, ndim: int) -> list[int]:
        """How many blocks each array axis is cut into."""
        sizes = self.mesh.shape
        return [math.prod(sizes[a] for a in self.spec.axes_of(d)) for d in range(ndim)]

    def check_shape(self, global_shape: Sequence[int]) -> None:
        """Raises JAX's IndivisibleError when a split does not divide its axis."""
        global_shape = tuple(global_shape)
        if len(self.spec) > len(global_shape):
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(global_shape)}.")
        splits = self._splits(len(global_shape))
        if any(n % s for n, s in zip(global_shape, splits)):
            raise IndivisibleError(
                f"Sharding {self} implies that array axis {_bad_axis(global_shape, splits)} "
                f"is partitioned {splits[_bad_axis(global_shape, splits)]} times, but the "
                f"dimension size is {global_shape[_bad_axis(global_shape, splits)]} (full "
                f"shape: {global_shape}, per-dimension tiling factors: {splits} should evenly "
                f"divide the shape)")

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        self.check_shape(global_shape)
        return tuple(n // s for n, s in zip(global_shape, self._splits(len(global_shape))))

    def _block(self, coords: dict, dim: int) -> int:
        """Which block of array axis ``dim`` the device at mesh ``coords`` holds."""
        idx = 0
        for a in self.spec.axes_of(dim):
            idx = idx * self.mesh.shape[a] + coords[a]
        return idx

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[CpuDevice, tuple]:
        shard = self.shard_shape(global_shape)
        out = {}
        for pos, dev in np.ndenumerate(self.mesh.devices):
            coords = dict(zip(self.mesh.axis_names, pos))
            index = []
            for d in range(len(shard)):
                if shard[d] != global_shape[d]:
                    b = self._block(coords, d)
                    index.append(slice(b * shard[d], (b + 1) * shard[d]))
                else:
                    index.append(slice(None))
            out[dev] = tuple(index)
        return out

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> dict:
        local = set(self.mesh.local_devices)
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in local}

    def replica_ids(self) -> dict[CpuDevice, int]:
        """Each device's replica id: its position along the mesh axes the spec leaves out."""
        used = set(self.spec.mesh_axes())
        out = {}
        for pos, dev in np.ndenumerate(self.mesh.devices):
            rid = 0
            for name, p, size in zip(self.mesh.axis_names, pos, self.mesh.devices.shape):
                if name not in used:
                    rid = rid * size + p
            out[dev] = rid
        return out

    def with_memory_kind(self, kind: str) -> "NamedSharding":
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def update(self, **kwargs: Any) -> "NamedSharding":
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec),
                             memory_kind=kwargs.get("memory_kind", self._memory_kind))

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and other.spec == self.spec and other._memory_kind == self._memory_kind)

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec, self._memory_kind))

    def __repr__(self) -> str:
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec}, "
                f"memory_kind={self._memory_kind})")


def _bad_axis(shape: tuple, splits: list[int]) -> int:
    return next(d for d, (n, s) in enumerate(zip(shape, splits)) if n % s)


def resolve(sharding: Any) -> Any:
    """A sharding argument as a Sharding: a bare PartitionSpec names one over the current
    mesh, as JAX does under ``set_mesh``."""
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                "Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed to "
                "device_put")
        return NamedSharding(mesh, sharding)
    return sharding
