"""The ``pprof`` profile format (github.com/google/pprof, proto/profile.proto), written by
hand: the few message fields a heap profile needs, in protobuf's wire format
(``protobuf_wire``)."""
from __future__ import annotations

import dataclasses
import time

from tinyxla._src.protobuf_wire import field_bytes, field_varint, packed


@dataclasses.dataclass
class Sample:
    """One sample: its stack (innermost frame first) as (function, file) pairs, one value
    per sample type, and string labels."""
    frames: list[tuple[str, str]]
    values: list[int]
    labels: dict[str, str]


class _Strings:
    """The string table: index 0 is the empty string, as the format requires."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {"": 0}

    def __call__(self, s: str) -> int:
        return self.index.setdefault(s, len(self.index))


def encode(sample_types: list[tuple[str, str]], samples: list[Sample]) -> bytes:
    """A serialized ``perftools.profiles.Profile`` (not compressed)."""
    strings = _Strings()
    out = bytearray()
    for kind, unit in sample_types:  # field 1: ValueType {type = 1, unit = 2}
        out += field_bytes(1, field_varint(1, strings(kind)) + field_varint(2, strings(unit)))
    functions: dict[tuple[str, str], int] = {}
    locations: list[bytes] = []
    for sample in samples:
        ids = []
        for frame in sample.frames:
            if frame not in functions:
                functions[frame] = len(functions) + 1
                # Location {id = 1, line = 4: Line {function_id = 1}}
                locations.append(field_varint(1, functions[frame])
                                 + field_bytes(4, field_varint(1, functions[frame])))
            ids.append(functions[frame])
        message = packed(1, ids) + packed(2, sample.values)
        for key, value in sample.labels.items():  # Label {key = 1, str = 2}
            message += field_bytes(3, field_varint(1, strings(key))
                                    + field_varint(2, strings(value)))
        out += field_bytes(2, message)
    for location in locations:
        out += field_bytes(4, location)
    for (name, filename), fid in functions.items():
        # Function {id = 1, name = 2, system_name = 3, filename = 4}
        out += field_bytes(5, field_varint(1, fid) + field_varint(2, strings(name))
                            + field_varint(3, strings(name)) + field_varint(4, strings(filename)))
    table = list(strings.index)  # insertion order is index order
    for s in table:
        out += field_bytes(6, s.encode())
    out += field_varint(9, time.time_ns())
    return bytes(out)
