#!/usr/bin/env bash
# Runs the public Array API conformance suite (data-apis/array-api-tests) against
# tinyxla.numpy, and against numpy (and jax.numpy, where installed) in the same setup for
# comparison. On demand only, and never part of CI: it needs a checkout of the suite, which
# this script does not fetch, and takes several minutes per module on a 2-core machine.
#
# Usage: ARRAY_API_TESTS_DIR=/path/to/array-api-tests scripts/array_api_conformance.sh [pytest args...]
#   e.g. ... scripts/array_api_conformance.sh array_api_tests/test_manipulation_functions.py
#
# Environment:
#   ARRAY_API_TESTS_DIR      a checkout of array-api-tests with its array-api stubs (required)
#   ARRAY_API_TESTS_VERSION  the standard's version to test (default: each module's own)
#   PYTHON                   an interpreter with tinyxla, pytest, hypothesis and ndindex
#                            (default .venv/bin/python)
#   MODULES                  the namespaces to test (default "tinyxla.numpy numpy")
#   MAX_EXAMPLES             hypothesis examples per test (default 20)
#
# float64 is on (JAX_ENABLE_X64=1), as the suite assumes; the linalg and fft extensions are
# left out. Per module it prints the pytest summary line and leaves the report in
# $OUT_DIR/report-<module>.txt (OUT_DIR defaults to .array-api-tests/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE=${ARRAY_API_TESTS_DIR:?set ARRAY_API_TESTS_DIR to a checkout of data-apis/array-api-tests}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
MODULES=${MODULES:-"tinyxla.numpy numpy"}
MAX_EXAMPLES=${MAX_EXAMPLES:-20}
OUT_DIR=${OUT_DIR:-$ROOT/.array-api-tests}
mkdir -p "$OUT_DIR"

TESTS=("$@")
[ ${#TESTS[@]} -eq 0 ] && TESTS=(array_api_tests/)
for module in $MODULES; do
  report=$OUT_DIR/report-$module.txt
  echo "== $module"
  # --disable-extension takes several names, so it comes after the test paths.
  (cd "$SUITE" && ARRAY_API_TESTS_MODULE=$module JAX_ENABLE_X64=1 \
     "$PYTHON" -m pytest -q -p no:cacheprovider --max-examples="$MAX_EXAMPLES" \
       "${TESTS[@]}" --disable-extension linalg fft >"$report" 2>&1) || true
  tail -n 1 "$report"
done
