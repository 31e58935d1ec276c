"""The C++ core's layers include only the layers below them (README.md, Architecture).

A file under cpp/src/<layer>/ may include headers of its own layer and of the layers
listed before it; an include reaching up a layer fails here, naming the file.
"""
import pathlib
import re

SRC = pathlib.Path(__file__).resolve().parent.parent / "cpp" / "src"
LAYERS = ["core", "cpu", "ops", "ir", "fused", "passes", "codegen", "compiler", "runtime",
          "python"]
_INCLUDE = re.compile(r'#include "\.\./(\w+)/')


def _upward_includes(path: pathlib.Path, text: str) -> list[str]:
    layer = path.relative_to(SRC).parts[0]
    return [f"{path.relative_to(SRC)} includes {dep}/" for dep in _INCLUDE.findall(text)
            if LAYERS.index(dep) > LAYERS.index(layer)]


def test_every_source_folder_is_a_known_layer():
    assert sorted(p.name for p in SRC.iterdir() if p.is_dir()) == sorted(LAYERS)


def test_no_layer_includes_a_layer_above_it():
    found = [line for p in sorted(SRC.rglob("*")) if p.suffix in (".h", ".cc", ".inc")
             for line in _upward_includes(p, p.read_text())]
    assert not found, "\n".join(found)


def test_an_upward_include_is_reported():
    assert _upward_includes(SRC / "cpu" / "x.cc", '#include "../ir/graph.h"\n') == \
        ["cpu/x.cc includes ir/"]
    assert _upward_includes(SRC / "ir" / "x.cc", '#include "../ops/op_def.h"\n') == []
