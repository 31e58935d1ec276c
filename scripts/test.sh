#!/usr/bin/env bash
# Builds tinyxla into ./.venv (incrementally, build dir ./build) and runs the C++ and Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# The build requirements are installed up front so the editable build can reuse ./build.
.venv/bin/python -m pip install -q scikit-build-core pybind11 scipy-openblas32 numpy ninja cmake
.venv/bin/python -m pip install -q --no-build-isolation -Cbuild-dir=build -e '.[test,mpi]'
.venv/bin/ctest --test-dir build --output-on-failure
.venv/bin/python -m pytest -q -p no:cacheprovider tests
