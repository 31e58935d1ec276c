"""``jax_transfer_guard``: host-to-device transfers of numpy arrays and Python scalars
become Arrays are logged or refused, with JAX's messages, at the level the options set.

As in JAX: "log" and "disallow" act on implicit transfers (arguments of jitted functions
and operations, ``jnp.array``/``jnp.asarray``) and let explicit ones (``device_put``)
through; "log_explicit" and "disallow_explicit" act on both. Reading a CPU array on the
host is no transfer (its buffer is host memory), so, as JAX on CPU, device-to-host guards
never act; tinyxla's device-to-device guard does not act either.
"""
from __future__ import annotations

import contextlib
import logging
from typing import Iterator

from tinyxla._src import errors
from tinyxla._src.config import config

logger = logging.getLogger("tinyxla")

_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
# The host-to-device level's index in _LEVELS (0: allow, nothing to check).
host_to_device = 0
_explicit_depth = 0


def _refresh(name: str | None = None, value: object = None) -> None:
    global host_to_device
    level = config.jax_transfer_guard_host_to_device or config.jax_transfer_guard or "allow"
    host_to_device = _LEVELS.index(level)


_refresh()
config.add_update_hook(_refresh)


@contextlib.contextmanager
def explicit() -> Iterator[None]:
    """Transfers inside the block are explicit (``device_put``)."""
    global _explicit_depth
    _explicit_depth += 1
    try:
        yield
    finally:
        _explicit_depth -= 1


def check_host_to_device(shape: tuple, dtype_name: str, weak_type: bool, device: int) -> None:
    """Logs or refuses a host-to-device transfer as the level says (called only when the
    level is not "allow")."""
    level = _LEVELS[host_to_device]
    if _explicit_depth and level in ("log", "disallow"):
        return
    dims = ",".join(map(str, shape))
    weak = ", weak_type=True" if weak_type else ""
    what = (f"host-to-device transfer: aval=ShapedArray({dtype_name}[{dims}]{weak}), "
            f"dst_sharding=SingleDeviceSharding(device=CpuDevice(id={device}), "
            "memory_kind=device)")
    if level.startswith("disallow"):
        raise errors.JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {what}")
    logger.warning(what)
