"""Protocol buffers' wire format, written by hand (https://protobuf.dev/programming-guides/
encoding): the few field encodings tinyxla's profile files need (pprof, XSpace), so that
writing them needs no protobuf package."""
from __future__ import annotations


def varint(n: int) -> bytes:
    """``n`` as a base-128 varint; a negative int64 as its two's complement, as protobuf
    encodes it."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    """Field ``number`` of an integer type (int64, uint64, bool, enum)."""
    return varint(number << 3) + varint(value)


def field_bytes(number: int, value: bytes) -> bytes:
    """Field ``number`` of a length-delimited type (bytes, string, message, packed)."""
    return varint(number << 3 | 2) + varint(len(value)) + value


def field_string(number: int, value: str) -> bytes:
    return field_bytes(number, value.encode())


def packed(number: int, values: list[int]) -> bytes:
    """A packed repeated integer field."""
    return field_bytes(number, b"".join(varint(v) for v in values))
