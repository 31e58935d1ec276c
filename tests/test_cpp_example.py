"""Builds examples/cpp against the installed tinyxla (find_package) and checks its output."""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import tinyxla

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cpp"


def _tool(name):
    """A build tool on PATH or in this interpreter's scripts folder (pip's cmake/ninja wheels
    land there, and a venv's scripts folder is not on PATH unless activated)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sysconfig.get_path("scripts")) / name
    return str(candidate) if candidate.exists() else None


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                    f"{proc.stdout}\n{proc.stderr}", pytrace=False)
    return proc.stdout


def test_cpp_example_builds_and_runs(tmp_path):
    cmake = _tool("cmake")
    if cmake is None:
        pytest.skip("cmake is not installed")
    # CMake picks $CXX, else c++ / g++ / clang++ from PATH.
    cxx = os.environ.get("CXX", "").split()[-1:] or ["c++", "g++", "clang++"]
    if not any(shutil.which(c) for c in cxx):
        pytest.skip("no C++ compiler")
    ninja, make = _tool("ninja"), shutil.which("make")
    if ninja:
        generator = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    elif make:
        generator = ["-G", "Unix Makefiles"]
    else:
        pytest.skip("neither ninja nor make is installed")

    config = Path(tinyxla.cmake_dir())
    assert (config / "tinyxlaConfig.cmake").is_file(), f"no tinyxlaConfig.cmake in {config}"
    build = tmp_path / "build"
    _run([cmake, "-S", EXAMPLE, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
          f"-Dtinyxla_DIR={config}"])
    _run([cmake, "--build", build])

    exe = build / "eager_ops"
    # No LD_LIBRARY_PATH: the installed libtinyxla must find its own dependencies.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = _run([exe], env=env)
    print(out, file=sys.stderr)
    for line in [
        "add (2, 3) = [11, 22, 33, 14, 25, 36]",
        "exp (3,) = [1, 2.71828, 2]",
        "dot_general (2, 2) = [4, 5, 10, 11]",
        "reduce_sum (2,) = [6, 15]",
        "after errors: add (2,) = [12, 30]",
        "eager_ops: all checks passed",
    ]:
        assert line + "\n" in out, f"missing {line!r} in:\n{out}"
    assert ("dot_general (2,3)x(2,3) raised tinyxla::Error: [dot_general] dot_general requires "
            "contracting dimensions to have the same shape, got 3 and 2.") in out
    assert "add of 2^48 elements raised tinyxla::Error: " in out
    assert "RESOURCE_EXHAUSTED" in out
    assert "MISMATCH" not in out and "WRONG KIND" not in out
