"""The XSpace protobuf that ``jax.profiler.trace`` writes as ``<host>.xplane.pb`` (the
messages of tsl/profiler/protobuf/xplane.proto, which TensorBoard's profile plugin and
XProf read), written by hand in protobuf's wire format (``protobuf_wire``).

The recorded spans become one plane, ``/host:CPU`` (the name of JAX's host plane), with a
line per thread (its id and name) and an event per span: the event's metadata gives its
name, its stats the span's category and detail (``long_name``, as XProf calls an op's
full text). Times are wall-clock: a line starts at its first span (``timestamp_ns``) and
each event lies at ``offset_ps`` from there.
"""
from __future__ import annotations

import time
from typing import Sequence

from tinyxla._src.protobuf_wire import field_bytes, field_string, field_varint

HOST_PLANE = "/host:CPU"
# XStatMetadata ids of the stats each event carries.
_CATEGORY, _LONG_NAME = 1, 2


def _stat_str(metadata_id: int, value: str) -> bytes:
    """XStat {metadata_id = 1, str_value = 5}."""
    return field_varint(1, metadata_id) + field_string(5, value)


def _map_entry(number: int, key: int, value: bytes) -> bytes:
    """One entry of a ``map<int64, message>`` field: {key = 1, value = 2}."""
    return field_bytes(number, field_varint(1, key) + field_bytes(2, value))


def encode(events: Sequence[tuple], threads: dict[int, str], hostname: str,
           monotonic_to_wall_ns: int | None = None) -> bytes:
    """A serialized XSpace of recorded spans ``(name, category, detail, t0_ns, t1_ns,
    thread_id)`` (monotonic clock, as the recorder's), ``threads`` naming thread ids;
    ``monotonic_to_wall_ns`` is added to make times wall-clock (now's offset by default)."""
    if monotonic_to_wall_ns is None:
        monotonic_to_wall_ns = time.time_ns() - time.monotonic_ns()
    metadata_ids: dict[str, int] = {}
    by_thread: dict[int, list[tuple]] = {}
    for e in sorted(events, key=lambda e: (e[3], -e[4])):
        by_thread.setdefault(e[5], []).append(e)
        metadata_ids.setdefault(e[0], len(metadata_ids) + 1)
    plane = field_varint(1, 0) + field_string(2, HOST_PLANE)
    for tid, spans in sorted(by_thread.items()):
        start = spans[0][3]
        end = max(e[4] for e in spans)
        name = threads.get(tid, f"thread {tid}")
        # XLine {id = 1, name = 2, timestamp_ns = 3, events = 4, duration_ps = 9,
        #        display_id = 10, display_name = 11}
        line = (field_varint(1, tid) + field_string(2, name)
                + field_varint(3, start + monotonic_to_wall_ns)
                + field_varint(9, (end - start) * 1000)
                + field_varint(10, tid) + field_string(11, name))
        for span_name, cat, detail, t0, t1, _ in spans:
            # XEvent {metadata_id = 1, offset_ps = 2, duration_ps = 3, stats = 4}
            event = (field_varint(1, metadata_ids[span_name])
                     + field_varint(2, (t0 - start) * 1000) + field_varint(3, (t1 - t0) * 1000)
                     + field_bytes(4, _stat_str(_CATEGORY, cat)))
            if detail:
                event += field_bytes(4, _stat_str(_LONG_NAME, detail))
            line += field_bytes(4, event)
        plane += field_bytes(3, line)
    for span_name, mid in metadata_ids.items():  # XEventMetadata {id = 1, name = 2}
        plane += _map_entry(4, mid, field_varint(1, mid) + field_string(2, span_name))
    for mid, stat in ((_CATEGORY, "category"), (_LONG_NAME, "long_name")):
        plane += _map_entry(5, mid, field_varint(1, mid) + field_string(2, stat))  # XStatMetadata
    # XSpace {planes = 1, hostnames = 4}
    return field_bytes(1, plane) + field_string(4, hostname)
