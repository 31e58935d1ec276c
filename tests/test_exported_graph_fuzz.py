"""The exported-graph reader as Python reaches it (``_core.parse_graph``) on untrusted text:
malformed files are refused with a ValueError naming the line, never a crash; a fixed-seed
sample of random mutants of valid exports (tests/data/exported_graphs/) either is refused
that way or parses, prints back to itself and compiles. The long run is the C++ fuzzer
(cpp/tests/test_exported_graph_fuzz.cc, ``--runs 100000``) under scripts/sanitize.sh."""
import os
import random

import numpy as np
import pytest

from tinyxla import _core

SEEDS = os.path.join(os.path.dirname(__file__), "data", "exported_graphs")
CONV = ("%0 = parameter(0) : f32[1,5,5,2]\n%1 = parameter(1) : f32[3,3,2,3]\n"
        "%2 = conv(%0, %1) {window_strides=[1,1], padding_lo=[1,1], padding_hi=[1,1], "
        "lhs_dilation=[1,1], rhs_dilation=[1,1], feature_group_count=1, batch_group_count=1, "
        "preferred_element_type=PET} : f32[1,5,5,3]\nreturn %2\n")


def _seeds() -> list[str]:
    texts = []
    for name in sorted(os.listdir(SEEDS)):
        with open(os.path.join(SEEDS, name)) as f:
            texts.append(f.read())
    return texts


def test_seeds_round_trip_and_run():
    for text in _seeds():
        g = _core.parse_graph(text)
        assert g.text() == text
        _core.compile(g)


def test_absent_preferred_type_round_trips():
    # Printed as -1, it read back as dtype code 255 (printed past the dtype names' end).
    text = CONV.replace("PET", "-1")
    assert _core.parse_graph(text).text() == text
    x = np.arange(50, dtype=np.float32).reshape(1, 5, 5, 2)
    k = np.ones((3, 3, 2, 3), np.float32)
    out = _core.compile(_core.parse_graph(text)).run(
        [_core.from_numpy(x, 11, 0), _core.from_numpy(k, 11, 0)])[0].numpy(np.dtype(np.float32))
    # The centre output sums the 3x3x2 window around it.
    assert out[0, 2, 2, 0] == x[0, 1:4, 1:4, :].sum()


@pytest.mark.parametrize("text, message", [
    ("%0 = parameter(0) : f32[-3]\nreturn %0\n", "line 1: a negative dimension"),
    ("%0 = parameter(0) : f32[4294967296,4294967296]\nreturn %0\n", "more than 2\\^63 bytes"),
    ("%0 = parameter(0) : f32[" + ",".join(["1"] * 65) + "]\nreturn %0\n", "a rank above 64"),
    (CONV.replace("PET", "99"), "line 3: attribute 'preferred_element_type' has no dtype code 99"),
    ("%0 = parameter(0) : f32[3]\n%1 = cumsum(%0) {dimension=0, reverse=2} : f32[3]\nreturn %1\n",
     "attribute 'reverse' must be 0 or 1"),
    ("%0 = constant() {hex=0x00} : f32[1000000000000]\nreturn %0\n", "hex bytes"),
    ("%0 = constant() {value=[1]} : f32[1000000000000]\nreturn %0\n", "needs as many values"),
    ("%0 = parameter(0) : f32[3]\n%1 = exp(%4) : f32[3]\nreturn %1\n", "line 2: undefined value"),
    ("%0 = parameter(0) : f32[3]\n%1 = exp(%0) : f32[3]\nret", "line 3"),
    ("%0 = parameter(0) : f32[21]\n%1 = reshape(%0) : f32[2]\nreturn %1\n",
     r"line 3: \[reshape\] cannot reshape array of shape \(21,\)"),
])
def test_malformed_text_is_refused(text, message):
    with pytest.raises(ValueError, match=r"\[parse_graph\] .*" + message):
        _core.parse_graph(text)


def _nested_loops(depth: int) -> str:
    head = "%0 = parameter(0) : i32[]\n%1 = constant() {value=true} : bool[]\n"
    body = ("%2 = while_loop(%1, %0) {num_consts=0} {\n%0 = parameter(0) : i32[]\n"
            "%1 = constant() {value=false} : bool[]\n")
    return head + body * depth + "return %0, %1\n} : i32[]\n" * depth + "return %0\n"


def test_region_nesting_is_bounded():
    assert _core.parse_graph(_nested_loops(5)).text().count("while_loop") == 5
    with pytest.raises(ValueError, match="regions nest deeper than 1000"):
        _core.parse_graph(_nested_loops(1001))


def test_huge_result_from_the_builder_is_refused():
    b = _core.GraphBuilder()
    x = b.parameter([], 11)
    with pytest.raises(ValueError, match=r"\[broadcast_in_dim\] .*more than 2\^63 bytes"):
        b.broadcast_in_dim(x, [2**32, 2**32], [])


_TOKENS = ["-1", "0", "1", "64", "9223372036854775807", "4294967296", "%", "%0", "{", "}",
           "[", "]", ",", "\n", "return", "while_loop", "fused", "f32", "c128", "[-1]"]


def _mutate(text: str, rng: random.Random, seeds: list[str]) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        kind = rng.randrange(5)
        if kind == 0 and text:
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice("0123456789%,=[]{}()-:\n x") + text[i + 1:]
        elif kind == 1:
            text = text[:at] + rng.choice(_TOKENS) + text[at:]
        elif kind == 2:
            text = text[:at] + text[at + rng.randint(1, 16):]
        elif kind == 3:
            text = text[:at]
        else:
            other = rng.choice(seeds)
            start = rng.randrange(len(other))
            text = text[:at] + other[start:start + rng.randint(0, 200)]
    return text


def test_mutated_exports_are_refused_or_compile():
    seeds = _seeds()
    rng = random.Random(19)
    parsed = 0
    for _ in range(500):
        text = _mutate(rng.choice(seeds), rng, seeds)
        try:
            g = _core.parse_graph(text)
        except ValueError as e:
            assert str(e).startswith("["), str(e)
            continue
        parsed += 1
        assert _core.parse_graph(g.text()).text() == g.text()
        try:
            _core.compile(g)
        except (ValueError, TypeError, IndexError) as e:
            assert str(e).startswith("["), str(e)
    assert parsed > 0  # some mutants (a dropped output, a changed constant) stay valid
