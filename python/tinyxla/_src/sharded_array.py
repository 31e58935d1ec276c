"""Arrays laid out by a NamedSharding: ``jax.device_put(x, sharding)``,
``Array.addressable_shards``, ``jax.make_array_from_callback``,
``make_array_from_single_device_arrays``, ``make_array_from_process_local_data`` and
``jax.reshard``.

Such an Array keeps its whole value in ``_h`` (on the mesh's first device), so every
operation reads it as before, and a ``ShardLayout`` beside it: the sharding and one buffer
per device, each a copy of that device's block made on the device's own stream.
Sharded ``jit`` (``spmd.py``) reads the per-device buffers in place, and its results hold
only theirs: such a result assembles ``_h`` from its blocks when it is first read.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import core, devices as devices_mod, distributed
from tinyxla._src.array import Array, _CODE, _DTYPES, _to_array, _wrap
from tinyxla._src.devices import Shard
from tinyxla._src.sharding import AxisType, NamedSharding, resolve
from tinyxla._src.tree_util import tree_map


def copy_to_device(h: Any, dev: int) -> Any:
    """A dense copy of handle ``h`` (any view) owned by device ``dev`` (waits for ``h``).

    A compiled identity would hand back ``h`` itself, so the copy goes through the host.
    """
    # np.require, not np.ascontiguousarray, which makes a 0-d array 1-d.
    return _core.from_numpy(np.require(h.numpy(_DTYPES[h.dtype_code]), requirements="C"),
                            h.dtype_code, dev)


def _block_view(h: Any, index: tuple) -> Any:
    start = [0 if s.start is None else s.start for s in index]
    limit = [n if s.stop is None else s.stop for s, n in zip(index, h.shape)]
    if start == [0] * len(start) and limit == list(h.shape):
        return h
    return _core.slice(h, start, limit, [1] * len(start))


def _first_local(sharding: NamedSharding) -> int:
    """The runtime index of the first device of the sharding that this process holds."""
    local = sharding.mesh.local_devices
    if not local:
        raise ValueError(f"{sharding} has no device in this process")
    return local[0].local_hardware_id


_assemble_exes: dict = {}


def _assemble_blocks(sharding: NamedSharding, handles: dict) -> Any:
    """One handle, on the sharding's first local device, of the whole value whose blocks
    are ``handles`` (device id -> block; replicas hold equal blocks): an async copy."""
    some = next(iter(handles.values()))
    block, code = tuple(some.shape), some.dtype_code
    splits = sharding._splits(len(block))
    shape = tuple(n * k for n, k in zip(block, splits))
    firsts: dict = {}
    for d, idx in sharding.devices_indices_map(shape).items():
        start = tuple(0 if s.start is None or n == 0 else s.start // n
                      for s, n in zip(idx, block))
        firsts.setdefault(start, handles[d.id])
    ordered = [firsts[i] for i in np.ndindex(*splits)]
    if len(ordered) == 1:
        return ordered[0]
    key = (block, code, tuple(splits))
    exe = _assemble_exes.get(key)
    if exe is None:
        b = _core.GraphBuilder()
        grid = np.empty(len(ordered), dtype=object)
        for i in range(len(ordered)):
            grid[i] = b.parameter(list(block), code)
        grid = grid.reshape(splits)
        for d in reversed(range(len(block))):  # join the last dimension's blocks first
            moved = np.moveaxis(grid, d, -1)
            joined = np.empty(moved.shape[:-1], dtype=object)
            for i in np.ndindex(*joined.shape):
                parts = list(moved[i])
                joined[i] = parts[0] if len(parts) == 1 else b.concatenate(parts, d)
            grid = joined
        b.set_outputs([grid.item()])
        exe = _assemble_exes[key] = _core.compile(b)
    return exe.run(ordered, _first_local(sharding))[0]


class ShardLayout:
    """The sharding of an Array and its per-device buffers (made on first use)."""

    __slots__ = ("sharding", "handles")

    def __init__(self, sharding: NamedSharding, handles: dict | None = None):
        self.sharding = sharding
        self.handles = handles  # device id -> handle of that device's block

    def device_handles(self, a: Array) -> dict:
        if self.handles is None:
            h = a._h
            self.handles = {
                d.id: copy_to_device(_block_view(h, idx), d.local_hardware_id)
                for d, idx in self.sharding.addressable_devices_indices_map(a.shape).items()}
        return self.handles

    def assemble(self) -> Any:
        """The whole value, from the per-device buffers (for a result that has only
        those)."""
        return _assemble_blocks(self.sharding, self.handles)

    def shards(self, a: Array) -> list[Shard]:
        handles = self.device_handles(a)
        index_map = self.sharding.devices_indices_map(a.shape)
        replica = self.sharding.replica_ids()
        out = []
        for d in self.sharding.mesh.local_devices:
            data = _wrap(handles[d.id], a.weak_type, a.dtype)
            data._committed = True
            out.append(Shard(d, index_map[d], data, replica[d]))
        return out


# Lays out eager results of laid-out operands (``sharded_eager.py`` sets it); installed
# into ``Primitive.bind`` when the first laid-out array is made.
eager_layout_hook: Callable | None = None


def _lay_out(a: Array, layout: ShardLayout) -> None:
    """Gives ``a`` its layout. ``_committed`` holds the layout too (truthy, and not a bool,
    which keeps such arrays off jit's per-device fast path: ``_core.jit_signature``)."""
    a._layout = layout
    a._committed = layout
    if core.eager_layout_hook is None:
        core.eager_layout_hook = eager_layout_hook


def with_layout(a: Array, sharding: NamedSharding, handles: dict | None = None) -> Array:
    """An Array of ``a``'s value carrying ``sharding`` (the value must already be on the
    mesh's first device or be moved there)."""
    first = _first_local(sharding)
    h = a._h
    if h.device != first:
        h = copy_to_device(h, first)
    out = _wrap(h, a.weak_type, a.dtype)
    _lay_out(out, ShardLayout(sharding, handles))
    return out


def from_device_blocks(handles: dict, sharding: NamedSharding, aval: core.ShapedArray) -> Array:
    """An Array laid out by ``sharding`` from its per-device blocks (device id -> handle);
    its whole value is assembled when first read."""
    out = _wrap(None, aval.weak_type, aval.dtype)
    del out._h
    out._aval = aval
    _lay_out(out, ShardLayout(sharding, handles))
    return out


def _device_put_error(x_shape: tuple, sharding: NamedSharding) -> ValueError:
    splits = sharding._splits(len(x_shape))
    d = next(i for i, (n, s) in enumerate(zip(x_shape, splits)) if n % s)
    mesh = sharding.mesh
    return ValueError(
        f"Sharding spec {tuple(sharding.spec)} implies that array axis {d} is partitioned "
        f"{splits[d]} times, but does not evenly divide the dimension size {x_shape[d]}. "
        f"Got shape: {x_shape} and sharding NamedSharding(mesh=AbstractMesh({mesh._short()}, "
        f"device_kind=cpu, num_cores=None, platform=cpu), spec={sharding.spec})")


def put_sharded(x: Any, sharding: Any) -> Any:
    """One leaf of ``device_put(x, NamedSharding)``; tracers pass through (JAX inserts a
    device_put equation, which on one host is the identity)."""
    if isinstance(x, core.Tracer):
        return x
    a = _to_array(x) if type(x) is not Array else x
    if a._layout is not None and a._layout.sharding == sharding:
        return a  # already laid out (and so already checked)
    if len(sharding.spec) > a.ndim:
        raise ValueError(f"One of device_put args is incompatible with its sharding "
                         f"annotation {sharding}: Sharding {sharding} is only valid for values "
                         f"of rank at least {len(sharding.spec)}, but was applied to a value "
                         f"of rank {a.ndim}.")
    splits = sharding._splits(a.ndim)
    if any(n % s for n, s in zip(a.shape, splits)):
        if any(t is AxisType.Explicit for t in sharding.mesh.axis_types):
            raise _device_put_error(a.shape, sharding)
        sharding.check_shape(a.shape)
    return with_layout(a, sharding)


def device_put_leaf(x: Any, device: Any) -> Any:
    """``device_put``'s placement of one leaf when ``device`` is a sharding or spec."""
    sharding = resolve(device)
    if isinstance(sharding, NamedSharding):
        return put_sharded(x, sharding)
    return None


def reshard(x: Any, out_shardings: Any) -> Any:
    """Moves every leaf of ``x`` to ``out_shardings`` (``jax.reshard``); a bare
    PartitionSpec names a sharding over the current mesh."""
    return tree_map(lambda leaf: put_sharded(leaf, resolve(out_shardings)), x)


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[tuple], Any], dtype: Any = None) -> Array:
    """An array of ``shape`` whose block for each device is ``data_callback(index)``
    (``jax.make_array_from_callback``)."""
    shape = tuple(shape)
    sharding = resolve(sharding)
    if not isinstance(sharding, NamedSharding):
        data = np.asarray(data_callback((slice(None),) * len(shape)), dtype=dtype)
        return _to_array(data, devices_mod._device_index(sharding))
    index_map = sharding.devices_indices_map(shape)
    local = sharding.mesh.local_devices  # as JAX, the callback is asked for these only
    blocks = {d.id: np.asarray(data_callback(index_map[d]), dtype=dtype) for d in local}
    return _assemble(shape, sharding, blocks, index_map)


def _with_other_processes(sharding: NamedSharding, blocks: dict) -> dict:
    """``blocks`` (this process's devices' numpy blocks by device id) with every other
    process's, gathered over MPI: each process's blocks stacked in its mesh order, one
    all-gather of them all (every process must call this alike)."""
    devs = list(sharding.mesh.devices.flat)
    me = distributed.state.process_id
    mine = [d for d in devs if d.process_index == me]
    stacked = np.stack([blocks[d.id] for d in mine])
    every = distributed.allgather(stacked)
    out = {}
    for p in range(distributed.state.num_processes):
        for d, block in zip([d for d in devs if d.process_index == p], every[p]):
            out[d.id] = block
    return out


def _assemble(shape: tuple, sharding: NamedSharding, blocks: dict, index_map: dict) -> Array:
    """The global array from the numpy blocks of this process's devices. With several
    processes every process gets the whole value (its devices hold their blocks)."""
    local_blocks = blocks
    if distributed.state.num_processes > 1 and len(blocks) < len(index_map):
        blocks = _with_other_processes(sharding, blocks)
    first = next(iter(blocks.values()))
    full = np.empty(shape, dtype=first.dtype)
    for d, idx in index_map.items():
        full[idx] = blocks[d.id]
    blocks = local_blocks
    a = _to_array(full, _first_local(sharding))
    local = {d.id: d.local_hardware_id for d in sharding.mesh.local_devices}
    handles = {i: _core.from_numpy(np.require(b, requirements="C"), _CODE[a.dtype], local[i])
               for i, b in blocks.items() if i in local}
    return with_layout(a, sharding, handles)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Array], *,
                                         dtype: Any = None) -> Array:
    """The global array whose shards are ``arrays``, one per device in the sharding's
    addressable order (``jax.make_array_from_single_device_arrays``)."""
    shape = tuple(shape)
    sharding = resolve(sharding)
    index_map = sharding.devices_indices_map(shape)
    expected = sharding.shard_shape(shape)
    devs = sharding.mesh.local_devices  # the addressable ones, as in JAX
    if len(arrays) != len(devs):
        raise ValueError(f"Expected {len(devs)} single device arrays for sharding "
                         f"{sharding}, got {len(arrays)}")
    blocks = {}
    for d, arr in zip(devs, arrays):
        if tuple(arr.shape) != expected:
            dims = ",".join(f"{n}@{sharding.spec.axes_of(i)[0]}" if sharding.spec.axes_of(i)
                            else str(n) for i, n in enumerate(shape))
            raise ValueError(f"Expected shard shape {expected} doesn't match the single device "
                             f"array shape {tuple(arr.shape)}. Shape of Array is "
                             f"{np.dtype(arr.dtype).name}[{dims}] with sharding {sharding}")
        blocks[d.id] = np.asarray(arr)
    return _assemble(shape, sharding, blocks, index_map)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Array:
    """The global array from this process's data (``jax.make_array_from_process_local_data``).

    With one process the local data is the whole array. With several, ``local_data`` is the
    part of the global array that this process's devices hold (the box around their
    blocks), and ``global_shape`` defaults to the local shape scaled by how many
    processes' boxes lie along each dimension, as in JAX. Differs from JAX: every process
    then holds the whole value (gathered over MPI), not only its own blocks.
    """
    sharding = resolve(sharding)
    data = np.asarray(local_data)
    if distributed.state.num_processes > 1 and isinstance(sharding, NamedSharding):
        return _from_process_local(sharding, data, global_shape)
    if global_shape is not None and tuple(global_shape) != data.shape:
        raise ValueError(f"global_shape {tuple(global_shape)} does not match the local data "
                         f"shape {data.shape} of the only process")
    if not isinstance(sharding, NamedSharding):
        return _to_array(data, devices_mod._device_index(sharding))
    return make_array_from_callback(data.shape, sharding, lambda idx: data[idx])


def _process_boxes(sharding: NamedSharding, shape: tuple) -> dict:
    """Each process's box (start and stop per dimension) around its devices' blocks."""
    boxes: dict = {}
    for d, idx in sharding.devices_indices_map(shape).items():
        lo = [0 if s.start is None else s.start for s in idx]
        hi = [n if s.stop is None else s.stop for s, n in zip(idx, shape)]
        box = boxes.get(d.process_index)
        boxes[d.process_index] = (lo, hi) if box is None else (
            [min(a, b) for a, b in zip(box[0], lo)], [max(a, b) for a, b in zip(box[1], hi)])
    return boxes


def _from_process_local(sharding: NamedSharding, data: np.ndarray,
                        global_shape: Sequence[int] | None) -> Array:
    me = distributed.state.process_id
    if global_shape is None:
        # Along each dimension, the local size times the blocks there over this
        # process's blocks (its box on a shape of one element per block).
        splits = sharding._splits(data.ndim)
        lo, hi = _process_boxes(sharding, tuple(splits))[me]
        global_shape = tuple(n * s // (h - l) for n, s, l, h in zip(data.shape, splits, lo, hi))
    shape = tuple(global_shape)
    sharding.check_shape(shape)
    boxes = _process_boxes(sharding, shape)
    lo, hi = boxes[me]
    if tuple(h - l for l, h in zip(lo, hi)) != data.shape:
        raise ValueError(f"local_data of shape {data.shape} does not match the part of the "
                         f"global shape {shape} that process {me}'s devices hold "
                         f"({tuple(h - l for l, h in zip(lo, hi))})")
    index_map = sharding.devices_indices_map(shape)
    blocks = {}
    for d in sharding.mesh.local_devices:
        idx = tuple(slice((0 if s.start is None else s.start) - l,
                          (n if s.stop is None else s.stop) - l)
                    for s, l, n in zip(index_map[d], lo, shape))
        blocks[d.id] = np.require(data[idx], requirements="C")
    return _assemble(shape, sharding, blocks, index_map)
