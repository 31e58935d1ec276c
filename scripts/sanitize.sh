#!/usr/bin/env bash
# Builds tinyxla with sanitizers into its own build directory (build-address/, build-thread/)
# and runs the C++ tests and a Python subset (eager, jit, grad, vmap, pmap, threads) under
# them:
#
#   scripts/sanitize.sh address [PYTEST ARGS...]   # ASan + UBSan (and LeakSanitizer for C++)
#   scripts/sanitize.sh thread  [PYTEST ARGS...]   # TSan
#
# PYTEST ARGS replace the default Python subset (e.g. `tests/test_jit.py -k cache`); with
# SANITIZE_CPP_ONLY=1 only the C++ tests run; SANITIZE_CTEST_ARGS are passed to ctest
# (CI's job excludes the slowest C++ tests with -E). Needs ./.venv as scripts/test.sh makes it
# (cmake, ninja, pybind11, scipy-openblas32, numpy, pytest). Suppressions, for third-party
# code only, are in scripts/sanitizers/.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/sanitize.sh address|thread [pytest args...]}
shift
case "$kind" in
  address) sanitize=address,undefined runtime=libasan.so ;;
  thread) sanitize=thread runtime=libtsan.so ;;
  *) echo "usage: scripts/sanitize.sh address|thread [pytest args...]" >&2; exit 2 ;;
esac
root=$PWD
build=$root/build-$kind
venv=$root/.venv
supp=$root/scripts/sanitizers

PATH="$venv/bin:$PATH" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DTINYXLA_SANITIZE="$sanitize" -DPython_EXECUTABLE="$venv/bin/python" >/dev/null
PATH="$venv/bin:$PATH" cmake --build "$build" -j "${SANITIZE_JOBS:-2}"

# A finding fails the run; reports keep their stacks.
export ASAN_OPTIONS="abort_on_error=0:halt_on_error=1:detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp"
# die_after_fork=0: the tests fork with the runtime started (a child that works is the
# point); the child starts its own threads, which TSan refuses by default.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:suppressions=$supp/tsan.supp"
# The upper tier's generated modules are built by the system compiler, uninstrumented;
# running them is covered by the normal test run, so the sanitized runs stay on the
# instrumented base tier unless a test turns codegen on itself.
export TINYXLA_CACHE_DIR="$build/codegen-cache"

# shellcheck disable=SC2086  # word splitting of the ctest arguments is intended
"$venv/bin/ctest" --test-dir "$build" --output-on-failure ${SANITIZE_CTEST_ARGS:-}
[ "${SANITIZE_CPP_ONLY:-0}" = 1 ] && exit 0

# Python: the sources from python/tinyxla with the instrumented _core beside them, in an
# interpreter of its own (a venv whose .pth puts them before the main venv's packages, so
# the editable install's finder, which only a site directory's .pth installs, never brings
# in the uninstrumented _core; the tests' subprocesses run this interpreter too), with the
# sanitizer's runtime preloaded (CPython is not built with it, and the runtime must come
# first among the loaded libraries).
overlay=$build/python/tinyxla
rm -rf "$build/python"
mkdir -p "$overlay"
for f in "$root"/python/tinyxla/*; do ln -s "$f" "$overlay/"; done
ln -s "$build"/_core*.so "$overlay/"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
pyenv=$build/pyenv
[ -x "$pyenv/bin/python" ] || "$venv/bin/python" -m venv --without-pip "$pyenv"
pyenv_site=$("$pyenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n%s\n' "$build/python" "$site" > "$pyenv_site/tinyxla_sanitized.pth"
# CPython's own allocations live until exit by design: leaks are checked on the C++ tests.
export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
if [ $# -eq 0 ]; then
  set -- tests/test_array.py tests/test_jit.py tests/test_jit_cache.py tests/test_autodiff.py \
    tests/test_vmap.py tests/test_pmap.py tests/test_async.py tests/test_concurrency_stress.py \
    tests/test_control_flow.py tests/test_graph_text_compat.py tests/test_exported_graph_fuzz.py
fi
# libstdc++ is preloaded too: the sanitizer resolves its __cxa_throw interceptor when it
# starts, and without libstdc++ loaded by then every C++ throw fails its CHECK.
# Under TSan, the Python fork test is left out: TSan itself cannot follow a child that
# starts threads after a multi-threaded fork ("dup thread with used id"); the C++ fork
# test (test_runtime) runs under it.
[ "$kind" = thread ] && set -- "$@" --deselect \
  tests/test_concurrency_stress.py::test_fork_after_the_runtime_started
LD_PRELOAD="$(gcc -print-file-name=$runtime) $(gcc -print-file-name=libstdc++.so.6)" \
  "$pyenv/bin/python" -m pytest -q -p no:cacheprovider -x "$@"
