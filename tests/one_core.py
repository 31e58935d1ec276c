"""Runs a fixed set of computations in a process pinned to one core (the pool then has one
thread: every kernel runs serially) and here, for tests that results do not depend on the
number of threads."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest


def _run(cases_src: str) -> dict:
    scope = {}
    exec(cases_src, scope)  # noqa: S102 - a test's own fixed source
    return {k: np.asarray(f()) for k, f in scope["CASES"].items()}


def assert_same_on_one_core(cases_src: str, tmp_path) -> None:
    """`cases_src` defines CASES, a dict of name -> zero-argument function returning an
    array. Every result must be bit-identical between this process and one on one core."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores to compare against one")
    out = tmp_path / "one_core.npz"
    script = textwrap.dedent(f"""
        import os
        import numpy as np
        os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})  # before the pool starts
        scope = {{}}
        exec({cases_src!r}, scope)
        np.savez({str(out)!r}, **{{k: np.asarray(f()) for k, f in scope["CASES"].items()}})
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300)
    serial = np.load(out)
    for name, got in _run(cases_src).items():
        assert got.dtype == serial[name].dtype, name
        assert got.tobytes() == serial[name].tobytes(), name
