"""Pictures of the compiled graph (tinyxla only): tools.graph_svg and Compiled.as_svg with
the built-in layout (valid SVG, no overlapping boxes, ops, types and buffer reuse shown)
and with Graphviz's dot (a stand-in dot program checks what it is given)."""
import os
import re
import stat
import xml.etree.ElementTree as ET

import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import tools

SVG = "{http://www.w3.org/2000/svg}"


def step(x, w):
    h = x @ w
    return jnp.tanh(h).sum(), h * 2


ARGS = (jnp.ones((8, 16)), jnp.ones((16, 32)))


def _boxes(root):
    return [(float(r.get("x")), float(r.get("y")), float(r.get("width")),
             float(r.get("height"))) for r in root.iter(SVG + "rect")]


def test_builtin_svg_is_valid_and_boxes_do_not_overlap():
    svg = tools.graph_svg(step, *ARGS, layout="builtin")
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    boxes = _boxes(root)
    # parameter x2, dot_general, fused (tanh, mul), reduce_sum
    assert len(boxes) == 5
    for i, (x0, y0, w0, h0) in enumerate(boxes):
        for x1, y1, w1, h1 in boxes[i + 1:]:
            assert x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0
    width, height = float(root.get("width")), float(root.get("height"))
    assert all(x >= 0 and y >= 0 and x + w <= width + 1 and y + h <= height + 1
               for x, y, w, h in boxes)
    text = [t.text for t in root.iter(SVG + "text")]
    assert "dot_general" in text and "fused:" in text and "tanh, mul" in text
    assert "%2: f32[8,32]  buf 0" in text
    # tanh's result is written over the product's dead buffer: the plan's reuse is shown.
    assert "%4: f32[8,32]  buf 0, in place of %2" in text
    assert "%3: f32[8,32]  -> output 1" in text
    assert len(list(root.iter(SVG + "path"))) >= 4  # edges (and the arrow marker)


def test_compiled_as_svg_matches_graph_svg():
    c = jax.jit(step).lower(*ARGS).compile()
    assert c.as_svg("builtin") == tools.graph_svg(jax.jit(step), *ARGS, layout="builtin")
    assert "jit(step)" in c.as_svg("builtin")


def test_builtin_layout_of_a_wider_graph():
    def f(x):
        parts = [jnp.sort(x * i) for i in range(1, 6)]
        return sum(parts)
    root = ET.fromstring(tools.graph_svg(f, jnp.ones(50), layout="builtin"))
    boxes = _boxes(root)
    assert len(boxes) >= 6
    for i, (x0, y0, w0, h0) in enumerate(boxes):
        for x1, y1, w1, h1 in boxes[i + 1:]:
            assert x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0


@pytest.fixture
def fake_dot(tmp_path, monkeypatch):
    """A dot on the PATH that saves its input and prints a small SVG."""
    script = tmp_path / "bin" / "dot"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\n[ \"$1\" = -Tsvg ] || exit 3\ncat > {tmp_path}/input.dot\n"
                      "echo '<svg xmlns=\"http://www.w3.org/2000/svg\"><g/></svg>'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "input.dot"


def test_dot_layout_when_dot_is_present(fake_dot):
    svg = tools.graph_svg(step, *ARGS)  # "auto" picks dot
    assert svg.strip() == '<svg xmlns="http://www.w3.org/2000/svg"><g/></svg>'
    dot = fake_dot.read_text()
    assert dot.startswith("digraph tinyxla {") and dot.rstrip().endswith("}")
    edges = re.findall(r"^  n(\d+) -> n(\d+) ", dot, re.M)
    assert edges == [("0", "2"), ("1", "2"), ("2", "3"), ("3", "4")]  # x, w -> dot -> fused
    # -> reduce
    assert 'label="fused:\\ltanh, mul\\l' in dot
    assert "in place of %2" in dot


def test_dot_layout_errors(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="dot program is not on the PATH"):
        tools.graph_svg(step, *ARGS, layout="dot")
    assert tools.graph_svg(step, *ARGS).startswith("<svg")  # auto falls back
    with pytest.raises(ValueError, match="layout must be 'auto', 'dot' or 'builtin'"):
        tools.graph_svg(step, *ARGS, layout="neato")
