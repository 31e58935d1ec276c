"""Pictures of a compiled graph (tinyxla only; JAX has none): every node of the optimised
graph is a box (a fused kernel lists its ops; results show their shapes and dtypes), every
value an edge labelled with its type and the buffer the memory plan gives it. A result
that the plan writes over a dead operand's buffer says so ("in place of %2"), and edges
of one buffer share a colour. Graphviz's ``dot`` draws it when present; otherwise a
built-in layered layout does (boxes in rows by depth, never overlapping).
"""
from __future__ import annotations

import dataclasses
import html
import shutil
import subprocess
import textwrap
from typing import Any

from tinyxla import _core

_CHAR_W, _LINE_H, _PAD = 7.2, 15.0, 8.0
_GAP_X, _GAP_Y = 30.0, 56.0
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
            "#17becf", "#7f7f7f", "#bcbd22")


@dataclasses.dataclass
class Box:
    node: int
    lines: list[str]
    kind: str
    output: bool
    layer: int = 0
    x: float = 0.0
    y: float = 0.0

    @property
    def width(self) -> float:
        return max(len(s) for s in self.lines) * _CHAR_W + 2 * _PAD

    @property
    def height(self) -> float:
        return len(self.lines) * _LINE_H + _PAD


@dataclasses.dataclass
class Edge:
    src: int
    dst: int
    label: str
    buffer: int


@dataclasses.dataclass
class Picture:
    name: str
    boxes: list[Box]
    edges: list[Edge]


def describe(executable: Any, name: str = "jit") -> Picture:
    """The boxes and edges of a ``_core.Executable``'s optimised graph."""
    desc = _core.graph_description(executable)
    buffers: list[int] = desc["buffers"]
    outputs = {v: k for k, v in enumerate(desc["outputs"])}
    producer: dict[int, int] = {}
    boxes, edges = [], []
    for i, n in enumerate(desc["nodes"]):
        results = n["results"]
        for v, _ in results:
            producer[v] = i
        if n["kind"] == "parameter":
            lines = [n["op"]]
        elif n["op"] == "fused":
            lines = ["fused:"] + textwrap.wrap(", ".join(n["body"]), 40)
        elif n["body"]:
            lines = [n["op"] + " (" + str(len(n["body"])) + " ops in its body)"]
        else:
            lines = [n["op"]]
        for v, t in results:
            note = ""
            b = buffers[v]
            reused = [u for u in n["inputs"] if b >= 0 and buffers[u] == b]
            if n["kind"] == "view" and b >= 0:
                note = f"  view of buf {b}"
            elif reused:
                note = f"  buf {b}, in place of %{reused[0]}"
            elif b >= 0:
                note = f"  buf {b}"
            if v in outputs:
                note += f"  -> output {outputs[v]}"
            lines.append(f"%{v}: {t}{note}")
        boxes.append(Box(i, lines, n["kind"], any(v in outputs for v, _ in results)))
        for u in dict.fromkeys(n["inputs"]):
            src = producer[u]
            types = dict(desc["nodes"][src]["results"])
            label = f"%{u} {types[u]}" + (f" buf {buffers[u]}" if buffers[u] >= 0 else "")
            edges.append(Edge(src, i, label, buffers[u]))
    return Picture(name, boxes, edges)


def layout(picture: Picture) -> tuple[float, float]:
    """Places the boxes in rows by depth (a node one row below its deepest operand), left
    to right in graph order; returns the drawing's width and height."""
    by_node = {b.node: b for b in picture.boxes}
    operands: dict[int, list[int]] = {}
    for e in picture.edges:
        operands.setdefault(e.dst, []).append(e.src)
    for b in picture.boxes:  # nodes come in topological order
        b.layer = max((by_node[s].layer + 1 for s in operands.get(b.node, ())), default=0)
    rows: dict[int, list[Box]] = {}
    for b in picture.boxes:
        rows.setdefault(b.layer, []).append(b)
    widths = {r: sum(b.width for b in bs) + _GAP_X * (len(bs) - 1) for r, bs in rows.items()}
    total_w = max(widths.values(), default=0.0) + 2 * _GAP_X
    y = _GAP_Y / 2 + _LINE_H
    for r in sorted(rows):
        x = (total_w - widths[r]) / 2
        for b in rows[r]:
            b.x, b.y = x, y
            x += b.width + _GAP_X
        y += max(b.height for b in rows[r]) + _GAP_Y
    return total_w, y - _GAP_Y / 2


def builtin_svg(picture: Picture) -> str:
    """The picture as SVG from the built-in layout."""
    width, height = layout(picture)
    by_node = {b.node: b for b in picture.boxes}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.1f} {height:.1f}" '
           'font-family="monospace" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
           '</defs>',
           f'<text x="{_PAD}" y="{_LINE_H}" font-weight="bold">'
           f'{html.escape(picture.name)}</text>']
    for e in picture.edges:
        s, d = by_node[e.src], by_node[e.dst]
        x0, y0 = s.x + s.width / 2, s.y + s.height
        x1, y1 = d.x + d.width / 2, d.y
        colour = _COLOURS[e.buffer % len(_COLOURS)] if e.buffer >= 0 else "#555"
        mid = (y0 + y1) / 2
        out.append(f'<path d="M{x0:.1f},{y0:.1f} C{x0:.1f},{mid:.1f} {x1:.1f},{mid:.1f} '
                   f'{x1:.1f},{y1:.1f}" fill="none" stroke="{colour}" stroke-width="1.5" '
                   'marker-end="url(#arrow)"/>')
        out.append(f'<text x="{(x0 + x1) / 2 + 4:.1f}" y="{mid + 4:.1f}" fill="{colour}" '
                   f'font-size="10">{html.escape(e.label)}</text>')
    fills = {"parameter": "#e8f0fe", "constant": "#f1f3f4", "view": "#fef7e0",
             "kernel": "#e6f4ea"}
    for b in picture.boxes:
        stroke = 'stroke="#000" stroke-width="2.5"' if b.output else 'stroke="#555"'
        out.append(f'<rect x="{b.x:.1f}" y="{b.y:.1f}" width="{b.width:.1f}" '
                   f'height="{b.height:.1f}" rx="4" fill="{fills[b.kind]}" {stroke}/>')
        for k, line in enumerate(b.lines):
            weight = ' font-weight="bold"' if k == 0 else ""
            out.append(f'<text x="{b.x + _PAD:.1f}" y="{b.y + _LINE_H * (k + 1) - 2:.1f}"'
                       f'{weight}>{html.escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _dot_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(picture: Picture) -> str:
    """The picture in Graphviz's DOT language."""
    lines = ["digraph tinyxla {", f"  label={_dot_quote(picture.name)}; labelloc=t;",
             '  node [shape=box, style="rounded,filled", fontname=monospace, fontsize=11];',
             "  edge [fontname=monospace, fontsize=9];"]
    fills = {"parameter": "#e8f0fe", "constant": "#f1f3f4", "view": "#fef7e0",
             "kernel": "#e6f4ea"}
    for b in picture.boxes:
        label = "\\l".join(s.replace("\\", "\\\\").replace('"', '\\"') for s in b.lines) + "\\l"
        width = ", penwidth=2.5" if b.output else ""
        lines.append(f'  n{b.node} [label="{label}", fillcolor="{fills[b.kind]}"{width}];')
    for e in picture.edges:
        colour = _COLOURS[e.buffer % len(_COLOURS)] if e.buffer >= 0 else "#555555"
        lines.append(f"  n{e.src} -> n{e.dst} [label={_dot_quote(e.label)}, "
                     f'color="{colour}", fontcolor="{colour}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def svg(picture: Picture, layout_engine: str = "auto") -> str:
    """The picture as SVG: by Graphviz's ``dot`` ("dot"), the built-in layout
    ("builtin"), or ``dot`` when it is on the PATH and the built-in layout otherwise
    ("auto")."""
    if layout_engine not in ("auto", "dot", "builtin"):
        raise ValueError(f"layout must be 'auto', 'dot' or 'builtin', got {layout_engine!r}")
    dot = shutil.which("dot") if layout_engine != "builtin" else None
    if dot is None:
        if layout_engine == "dot":
            raise FileNotFoundError("Graphviz's dot program is not on the PATH")
        return builtin_svg(picture)
    proc = subprocess.run([dot, "-Tsvg"], input=to_dot(picture), capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"dot failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout
