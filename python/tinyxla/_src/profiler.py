"""The profiler (mirrors ``jax.profiler``): ``start_trace`` / ``stop_trace`` / ``trace``
write, in the TensorBoard profile plugin's layout JAX uses (``log_dir/plugins/profile/
<run>/``), the XSpace protobuf ``<host>.xplane.pb`` that TensorBoard and XProf read
(``xplane.py``) and a Chrome / Perfetto trace ``<host>.trace.json.gz``, from the spans
tinyxla's C++ runtime records per thread (every executable run and kernel, device stream
tasks, pool workers, compile passes and codegen, waits and transfers between host and
device) and the Python layer's (tracing, lowering, ``TraceAnnotation``).

Differences from JAX: the XSpace holds one host plane of the spans (no device planes or
XLA op metadata); ``create_perfetto_link`` writes the Perfetto
trace and prints its path instead of serving it; ``profiler_options`` is accepted and
ignored; the profiler server functions are absent. ``device_memory_profile`` lists the
live arrays by shape and dtype (tinyxla records no allocation stack traces).
"""
from __future__ import annotations

import contextlib
import datetime
import functools
import gc
import gzip
import json
import os
import pathlib
import socket
import threading
import time
from typing import Any, Callable, Iterator

from tinyxla import _core
from tinyxla._src import pprof, xplane
from tinyxla._src.array import Array


class _ProfileState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        self.active = False
        self.log_dir: str | None = None
        self.create_perfetto_link = False
        self.create_perfetto_trace = False


_state = _ProfileState()


class ProfileOptions:
    """Accepted for compatibility with ``jax.profiler.ProfileOptions``; tinyxla's trace
    has no options."""

    def __init__(self) -> None:
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = True


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Starts a profiler trace, saved to ``log_dir`` by :func:`stop_trace`
    (``jax.profiler.start_trace``); a RuntimeError while another trace runs."""
    with _state.lock:
        if _state.active or not _core.profiler_start():
            raise RuntimeError("Profile has already been started. "
                               "Only one profile may be run at a time.")
        _state.active = True
        _state.log_dir = str(log_dir)
        _state.create_perfetto_link = create_perfetto_link
        _state.create_perfetto_trace = create_perfetto_trace or create_perfetto_link


def stop_trace() -> None:
    """Stops the running trace and writes it (``jax.profiler.stop_trace``); a
    RuntimeError when none was started."""
    with _state.lock:
        if not _state.active:
            raise RuntimeError("No profile started")
        # Work already started belongs to the trace: its stream tasks end after the
        # results they set are ready.
        for device in range(_core.num_devices()):
            _core.synchronize(device)
        recorded = _core.profiler_stop()
        log_dir, perfetto, link = (_state.log_dir, _state.create_perfetto_trace,
                                   _state.create_perfetto_link)
        _state.reset()
    events, threads = recorded
    run_dir = _run_directory(log_dir)
    trace = chrome_trace(events, threads)
    host = socket.gethostname()
    with gzip.open(run_dir / f"{host}.trace.json.gz", "wt", encoding="utf-8") as f:
        json.dump(trace, f)
    (run_dir / f"{host}.xplane.pb").write_bytes(xplane.encode(events, threads, host))
    if perfetto:
        del trace["metadata"]  # the Perfetto UI refuses the metadata field, as JAX notes
        path = run_dir / "perfetto_trace.json.gz"
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(trace, f)
        if link:
            print(f"Perfetto trace written to {path}; open it at https://ui.perfetto.dev")


def _run_directory(log_dir: str) -> pathlib.Path:
    """A fresh ``log_dir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>`` (as TensorBoard's profile
    plugin names runs; a suffix keeps two runs within a second apart)."""
    base = pathlib.Path(log_dir) / "plugins" / "profile"
    base.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    run, n = base / stamp, 1
    while run.exists():
        run, n = base / f"{stamp}_{n}", n + 1
    run.mkdir()
    return run


def chrome_trace(events: list[tuple], threads: dict[int, str]) -> dict[str, Any]:
    """The Chrome trace-event JSON of recorded spans: one complete ("X") event per span,
    timestamps in microseconds from the first span, a thread-name record per thread."""
    pid = os.getpid()
    origin = min((e[3] for e in events), default=0)
    trace_events: list[dict[str, Any]] = [
        {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "tinyxla (CPU)"}}]
    used = {e[5] for e in events}
    for tid, name in sorted(threads.items()):
        if tid in used:
            trace_events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                                 "args": {"name": name}})
    for name, cat, detail, t0, t1, tid in sorted(events, key=lambda e: (e[3], -e[4])):
        event = {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat,
                 "ts": (t0 - origin) / 1e3, "dur": (t1 - t0) / 1e3}
        if detail:
            event["args"] = {"detail": detail}
        trace_events.append(event)
    return {"displayTimeUnit": "ns", "traceEvents": trace_events,
            "metadata": {"tinyxla_profiler": "1", "origin_monotonic_ns": origin}}


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """Traces the block (``jax.profiler.trace``)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A span named ``name`` in the trace around the block (``jax.profiler.TraceAnnotation``);
    keyword arguments are shown as the span's details. Costs one check when no trace runs."""

    __slots__ = ("name", "kwargs", "_t0")
    _category = "annotation"

    def __init__(self, name: str, **kwargs: Any):
        self.name = name
        self.kwargs = kwargs
        self._t0 = 0

    def __enter__(self) -> "TraceAnnotation":
        if _core.profiler_on():
            self._t0 = time.monotonic_ns()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._t0:
            detail = ",".join(f"{k}={v}" for k, v in self.kwargs.items())
            _core.profiler_record(self._label(), self._category, self._t0,
                                  time.monotonic_ns(), detail)
            self._t0 = 0

    def _label(self) -> str:
        return self.name


class StepTraceAnnotation(TraceAnnotation):
    """A training step's span (``jax.profiler.StepTraceAnnotation``), named "name step_num"
    when ``step_num`` is given."""

    __slots__ = ()
    _category = "step"

    def _label(self) -> str:
        step = self.kwargs.get("step_num")
        return self.name if step is None else f"{self.name} {step}"


def annotate_function(func: Callable, name: str | None = None,
                      **decorator_kwargs: Any) -> Callable:
    """Wraps ``func`` so that each call is a span (``jax.profiler.annotate_function``)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


@contextlib.contextmanager
def phase(name: str, detail: str = "") -> Iterator[None]:
    """A compile phase's span (tracing, lowering) when a trace is running."""
    if not _core.profiler_on():
        yield
        return
    t0 = time.monotonic_ns()
    try:
        yield
    finally:
        _core.profiler_record(name, "compile", t0, time.monotonic_ns(), detail)


_HANDLE = Array.__dict__["_h"]


def _live_buffers() -> list[tuple[Array, Any]]:
    """The live arrays that hold a buffer, with their ``_core`` handles (read from the
    slot, so that a pmap result's shards are not gathered)."""
    found = []
    for o in gc.get_objects():
        if type(o) is Array:
            try:
                found.append((o, _HANDLE.__get__(o)))
            except AttributeError:  # shards only: their own arrays are listed
                pass
    return found


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device buffers as a gzipped ``pprof`` protocol buffer
    (``jax.profiler.device_memory_profile``): sample types ("allocations", "count") and
    ("space", "bytes"), one sample per shape and dtype with labels ``kind=buffer`` and
    ``device=cpu:N``, located at a frame named by the shape and dtype (JAX's locations
    are the Python stack of each allocation)."""
    groups: dict[tuple[str, int], list[int]] = {}
    for a, h in _live_buffers():
        key = (f"{a.dtype.name}[{','.join(map(str, h.shape))}]", h.device)
        nbytes = h.nbytes
        count_bytes = groups.setdefault(key, [0, 0])
        count_bytes[0] += 1
        count_bytes[1] += nbytes
    samples = [pprof.Sample(frames=[(label, "<live array>")], values=[count, nbytes],
                            labels={"kind": "buffer", "device": f"cpu:{device}"})
               for (label, device), (count, nbytes) in sorted(groups.items())]
    profile = pprof.encode(sample_types=[("allocations", "count"), ("space", "bytes")],
                           samples=samples)
    return gzip.compress(profile)


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Writes :func:`device_memory_profile` to ``filename``
    (``jax.profiler.save_device_memory_profile``)."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
