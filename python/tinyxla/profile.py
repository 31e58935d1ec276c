"""``python -m tinyxla.profile TRACE.json[.gz] [--top N]``: the kernels that took the most
time in a trace written by ``tinyxla.profiler`` (or any Chrome trace whose kernel spans
have category "kernel"), with their share of all kernel time. tinyxla only (JAX has no
such command)."""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from typing import Any, Sequence


def load_trace(path: str) -> dict[str, Any]:
    """The trace JSON at ``path`` (gzipped when it ends in .gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def kernel_times(trace: dict[str, Any]) -> list[tuple[str, str, float, int]]:
    """(kernel, result types, total microseconds, calls) per kernel, longest first."""
    totals: dict[tuple[str, str], list[float]] = {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            key = (e["name"], e.get("args", {}).get("detail", ""))
            entry = totals.setdefault(key, [0.0, 0])
            entry[0] += float(e.get("dur", 0.0))
            entry[1] += 1
    return sorted(((n, d, t, int(c)) for (n, d), (t, c) in totals.items()),
                  key=lambda row: -row[2])


def summary(trace: dict[str, Any], top: int = 20) -> str:
    """The table ``python -m tinyxla.profile`` prints."""
    rows = kernel_times(trace)
    total = sum(r[2] for r in rows)
    calls = sum(r[3] for r in rows)
    lines = [f"{calls} kernel runs of {len(rows)} kernels, {total / 1e3:.3f} ms in all",
             f"{'time (ms)':>10} {'share':>7} {'calls':>7} {'mean (us)':>10}  kernel"]
    for name, detail, t, n in rows[:top]:
        share = 100.0 * t / total if total else 0.0
        lines.append(f"{t / 1e3:10.3f} {share:6.1f}% {n:7d} {t / n:10.2f}  {name}"
                     + (f"  {detail}" if detail else ""))
    if len(rows) > top:
        rest = sum(r[2] for r in rows[top:])
        lines.append(f"{rest / 1e3:10.3f} {100.0 * rest / total:6.1f}%  "
                     f"({len(rows) - top} more kernels)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinyxla.profile", description=__doc__)
    parser.add_argument("trace", help="a .trace.json.gz (or .json) written by the profiler")
    parser.add_argument("--top", type=int, default=20, help="kernels to list (20)")
    args = parser.parse_args(argv)
    try:
        trace = load_trace(args.trace)
    except (OSError, ValueError) as e:
        print(f"tinyxla.profile: cannot read {args.trace}: {e}", file=sys.stderr)
        return 1
    print(summary(trace, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
