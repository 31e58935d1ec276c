"""Builds examples/cpp against the installed tinyxla (find_package) and checks its output."""
import sys

from conftest import run_checked


def test_cpp_example_builds_and_runs(cpp_examples, clean_env):
    exe = cpp_examples / "eager_ops"
    out = run_checked([exe], env=clean_env)
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
            "contracting dimensions to have the same shape, got (3,) and (2,).") in out
    assert "add of 2^48 elements raised tinyxla::Error: " in out
    assert "RESOURCE_EXHAUSTED" in out
    assert "MISMATCH" not in out and "WRONG KIND" not in out
