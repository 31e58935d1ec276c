"""The modules of ``tinyxla._src`` import each other at module level only: a function-level
(deferred) import of a tinyxla module is how an import circle hides, so one that
reappears fails here. The allowlist names the few that remain, each with its reason."""
import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "python" / "tinyxla" / "_src"

# (module path under _src, imported module) -> why the import must be deferred.
ALLOWED: dict[tuple[str, str], str] = {}


def _imported_module(node: ast.AST, path: pathlib.Path) -> str | None:
    """The tinyxla module a function-level import statement names, or None."""
    if isinstance(node, ast.ImportFrom):
        if node.level:  # relative: resolve against the module's package
            package = path.relative_to(SRC.parent.parent).parent.parts
            base = package[:len(package) - node.level + 1]
            return ".".join((*base, *(node.module or "").split("."))).rstrip(".")
        if (node.module or "").startswith("tinyxla"):
            return node.module
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith("tinyxla"):
                return alias.name
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module" and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("tinyxla")):
        return node.args[0].value
    return None


def _deferred_imports() -> list[tuple[str, int, str]]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                module = _imported_module(node, path)
                if module is not None:
                    found.append((path.relative_to(SRC).as_posix(), node.lineno, module))
    return sorted(set(found))


def test_no_deferred_imports_of_tinyxla_modules():
    unexpected = [f"{path}:{line}: {module}" for path, line, module in _deferred_imports()
                  if (path, module) not in ALLOWED]
    assert not unexpected, (
        "function-level imports of tinyxla modules (an import circle held by a deferred "
        "import; import at module level, or invert the dependency):\n" + "\n".join(unexpected))


def test_the_allowlist_has_no_stale_entries():
    present = {(path, module) for path, _, module in _deferred_imports()}
    assert set(ALLOWED) <= present, sorted(set(ALLOWED) - present)


@pytest.mark.parametrize("source, expected", [
    ("def f():\n    from tinyxla._src import core\n", "tinyxla._src"),
    ("def f():\n    import tinyxla.numpy as jnp\n", "tinyxla.numpy"),
    ("def f():\n    from . import core\n", "tinyxla._src"),
    ("def f():\n    return importlib.import_module('tinyxla.numpy')\n", "tinyxla.numpy"),
])
def test_the_scan_sees_each_form(source, expected):
    tree = ast.parse(source)
    path = SRC / "api.py"
    found = [m for node in ast.walk(tree) if (m := _imported_module(node, path)) is not None]
    assert found == [expected]
