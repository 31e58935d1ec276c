#!/usr/bin/env bash
# Runs the public Array API conformance suite (data-apis/array-api-tests) against
# tinyxla.numpy, and against numpy in the same setup for comparison. On demand only: it
# is slow (an hour or more for everything on a 2-core machine) and is not part of CI.
#
# Usage: scripts/array_api_conformance.sh [test files or pytest args...]
#   e.g. scripts/array_api_conformance.sh array_api_tests/test_manipulation_functions.py
#
# Environment:
#   ARRAY_API_TESTS_DIR  an existing checkout of array-api-tests (with its array-api
#                        submodule); otherwise it is cloned into .array-api-tests/
#   PYTHON               the interpreter that has tinyxla installed (default .venv/bin/python)
#   MODULES              the namespaces to test (default "tinyxla.numpy numpy")
#   MAX_EXAMPLES         hypothesis examples per test (default 20)
#
# float64 is on (JAX_ENABLE_X64=1), as the suite assumes. Per module it prints the
# pytest summary line and leaves the full report in .array-api-tests/report-<module>.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
MODULES=${MODULES:-"tinyxla.numpy numpy"}
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
SUITE=${ARRAY_API_TESTS_DIR:-$ROOT/.array-api-tests/array-api-tests}
OUT=$ROOT/.array-api-tests
mkdir -p "$OUT"

if [ ! -d "$SUITE/array_api_tests" ]; then
  git clone --depth 1 --recurse-submodules --shallow-submodules \
    https://github.com/data-apis/array-api-tests.git "$SUITE"
fi
# The suite's own requirements (pytest, hypothesis, ndindex, ...).
"$PYTHON" -m pip install -q -r "$SUITE/requirements.txt"

TESTS=("$@")
[ ${#TESTS[@]} -eq 0 ] && TESTS=(array_api_tests/)
for module in $MODULES; do
  report=$OUT/report-$module.txt
  echo "== $module"
  (cd "$SUITE" && ARRAY_API_TESTS_MODULE=$module JAX_ENABLE_X64=1 \
     "$PYTHON" -m pytest -q -p no:cacheprovider --max-examples="$MAX_EXAMPLES" \
       --disable-extension linalg --disable-extension fft "${TESTS[@]}" \
       >"$report" 2>&1) || true
  tail -n 1 "$report"
done
