"""The bound on compiled executables held in memory, across every cache that keeps them.

jit, vmap and the control-flow primitives keep each traced jaxpr's executable (on the jaxpr,
``lowering.executable_for``) as long as their caches keep the jaxpr, so a program that jits
many distinct functions would hold every compiled graph. The budget holds at most
``tinyxla_executable_cache_max_entries`` executables and about
``tinyxla_executable_cache_max_bytes`` bytes of them (config options; environment variables
of the same names in capitals). Past either, the least recently used executable releases
its compiled graph; its next call compiles it again (recency is approximated by the clock
algorithm: each call sets a flag, and the sweep spares, once, an executable whose flag it
finds set). JAX bounds its compilation caches in the same way (an LRU of compiled
executables); the traces themselves are small and follow their functions' lifetimes.
"""
from __future__ import annotations

import collections
import threading
import weakref
from typing import Protocol

from tinyxla._src.config import config

# Bytes counted per equation besides the constants: the graph, plan and kernel tables an
# equation adds to a compiled executable (measured: ~6 KiB for a two-equation graph).
BYTES_PER_EQUATION = 2048


class Releasable(Protocol):
    used: bool
    nbytes: int

    def release(self) -> None: ...


# Reentrant: a weak reference's callback (_forget) may run during a collection that an
# allocation under the lock triggers.
_lock = threading.RLock()
# id -> weak reference, in clock order (the sweep takes from the front, spared ones go to
# the back).
_held: collections.OrderedDict[int, weakref.ref] = collections.OrderedDict()
_bytes: dict[int, int] = {}
_total_bytes = 0
_evictions = 0


def _forget(key: int) -> None:
    global _total_bytes
    with _lock:
        if _held.pop(key, None) is not None:
            _total_bytes -= _bytes.pop(key)


def admit(exe: Releasable) -> None:
    """Counts a freshly compiled ``exe`` and releases the least recently used ones that
    the limits no longer allow."""
    global _total_bytes, _evictions
    key = id(exe)
    victims = []
    with _lock:
        if key in _held:
            return
        _held[key] = weakref.ref(exe, lambda _, key=key: _forget(key))
        _bytes[key] = exe.nbytes
        _total_bytes += exe.nbytes
        max_entries = max(1, config.tinyxla_executable_cache_max_entries)
        max_bytes = config.tinyxla_executable_cache_max_bytes
        # Each sweep step either evicts or spares (clearing the flag), so 2n steps suffice.
        steps = 2 * len(_held)
        while (len(_held) > max_entries or _total_bytes > max_bytes) and len(_held) > 1 and steps:
            steps -= 1
            k, ref = _held.popitem(last=False)
            held = ref()
            if held is None:
                _total_bytes -= _bytes.pop(k, 0)
                continue
            if held.used and k != key:
                held.used = False
                _held[k] = ref
                continue
            if k == key:  # the newcomer is kept: it is about to run
                _held[k] = ref
                continue
            _total_bytes -= _bytes.pop(k)
            _evictions += 1
            victims.append(held)
    for v in victims:  # outside the lock: releasing frees C++ objects
        v.release()


def stats() -> dict[str, int]:
    """Executables held, their counted bytes and evictions so far (for tests and tools)."""
    with _lock:
        return {"entries": len(_held), "bytes": _total_bytes, "evictions": _evictions}

