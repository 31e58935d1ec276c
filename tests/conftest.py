"""Shared pytest fixtures."""
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "cpp"


def pytest_configure(config):
    """Modules the upper tier builds during the tests (TINYXLA_CODEGEN=auto builds when a
    jitted function runs twice) go to a temporary cache, not the user's."""
    if "TINYXLA_CACHE_DIR" not in os.environ:
        import tempfile
        config._tinyxla_cache = tempfile.mkdtemp(prefix="tinyxla-test-cache-")
        os.environ["TINYXLA_CACHE_DIR"] = config._tinyxla_cache


def pytest_unconfigure(config):
    cache = getattr(config, "_tinyxla_cache", None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


@pytest.fixture
def x64():
    """Runs a test with jax_enable_x64 on, restoring the previous value after."""
    import tinyxla
    old = tinyxla.config.jax_enable_x64
    tinyxla.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        tinyxla.config.update("jax_enable_x64", old)


def _tool(name):
    """A build tool on PATH or in this interpreter's scripts folder (pip's cmake/ninja wheels
    land there, and a venv's scripts folder is not on PATH unless activated)."""
    found = shutil.which(name)
    if found:
        return found
    candidate = Path(sysconfig.get_path("scripts")) / name
    return str(candidate) if candidate.exists() else None


def run_checked(cmd, **kw) -> str:
    """Runs ``cmd`` and returns its stdout; fails the test with its output otherwise."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                    f"{proc.stdout}\n{proc.stderr}", pytrace=False)
    return proc.stdout


@pytest.fixture(scope="session")
def cpp_examples(tmp_path_factory) -> Path:
    """The build folder of examples/cpp, built once against the installed tinyxla
    (find_package); skips when cmake, a C++ compiler or a build tool is missing."""
    import tinyxla
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
    build = tmp_path_factory.mktemp("cpp-examples")
    run_checked([cmake, "-S", EXAMPLES, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
                 f"-Dtinyxla_DIR={config}"])
    run_checked([cmake, "--build", build])
    return build


@pytest.fixture
def clean_env() -> dict:
    """The environment for running an example: no LD_LIBRARY_PATH, so the installed
    libtinyxla must find its own dependencies."""
    return {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
