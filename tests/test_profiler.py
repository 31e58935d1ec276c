"""jax.profiler: the trace files (TensorBoard's layout, Chrome trace JSON) and their spans,
annotations, the errors JAX gives (pinned from JAX 0.10.2), the device memory profile
(pprof, decoded here by hand) and ``python -m tinyxla.profile``."""
import gzip
import json
import pathlib
import socket
import subprocess
import sys

import numpy as np
import pytest

import tinyxla as jax
import tinyxla.numpy as jnp
from tinyxla import profile


def _trace_file(log_dir: pathlib.Path) -> pathlib.Path:
    (run,) = (log_dir / "plugins" / "profile").iterdir()
    return run / f"{socket.gethostname()}.trace.json.gz"


def _load(log_dir):
    with gzip.open(_trace_file(log_dir), "rt") as f:
        return json.load(f)


def _spans(trace, cat=None):
    return [e for e in trace["traceEvents"]
            if e["ph"] == "X" and (cat is None or e["cat"] == cat)]


@pytest.fixture
def mlp_trace(tmp_path):
    w1 = jnp.asarray(np.random.default_rng(0).standard_normal((64, 128)), jnp.float32)
    w2 = jnp.asarray(np.random.default_rng(1).standard_normal((128, 10)), jnp.float32)
    x = jnp.ones((32, 64))

    def step(x, w1, w2):
        return jnp.tanh(jnp.tanh(x @ w1) @ w2).sum()

    with jax.profiler.trace(tmp_path):
        f = jax.jit(step)
        for _ in range(3):
            f(x, w1, w2).block_until_ready()
        # Long enough to be waited for: it runs on the stream (or on the waiting thread).
        big = jax.jit(lambda y: jnp.sin(jnp.cos(y)) * 2)(jnp.ones(1 << 22))
        np.asarray(big)
    return _load(tmp_path)


def test_trace_file_layout_and_format(mlp_trace, tmp_path):
    path = _trace_file(tmp_path)
    assert path.exists()
    run = path.parent.name  # YYYY_MM_DD_HH_MM_SS, as TensorBoard's profile plugin names runs
    assert len(run.split("_")) == 6 and all(p.isdigit() for p in run.split("_"))
    assert mlp_trace["displayTimeUnit"] == "ns"
    for e in _spans(mlp_trace):
        assert e["dur"] >= 0 and e["ts"] >= 0 and {"pid", "tid", "name", "cat"} <= set(e)
    names = {e["args"]["name"] for e in mlp_trace["traceEvents"] if e["name"] == "thread_name"}
    assert "python main thread" in names


def test_trace_has_executable_kernel_and_compile_spans(mlp_trace):
    runs = [e for e in _spans(mlp_trace, "executable") if e["name"] == "jit(step)"]
    assert len(runs) == 3
    kernels = _spans(mlp_trace, "kernel")
    dots = [e for e in kernels if e["name"] == "dot_general"]
    assert {e["args"]["detail"] for e in dots} == {"f32[32,128]", "f32[32,10]"}
    fused = [e for e in kernels if e["name"].startswith("fusion: ")]
    assert any("tanh" in e["name"] and "reduce_sum" in e["name"] for e in fused)
    # Each kernel span lies inside a run of its executable on the same thread.
    for k in dots:
        assert any(r["tid"] == k["tid"] and r["ts"] <= k["ts"]
                   and k["ts"] + k["dur"] <= r["ts"] + r["dur"] + 1e-3 for r in runs)
    phases = {e["name"] for e in _spans(mlp_trace, "compile")}
    assert {"trace", "lower", "compile", "passes: simplify, cse, dce", "passes: fusion",
            "passes: memory plan and steps"} <= phases
    traced = [e for e in _spans(mlp_trace, "compile") if e["name"] == "trace"]
    assert any(e["args"]["detail"] == "jit(step)" for e in traced)


def test_trace_has_waits_and_stream_tasks(mlp_trace):
    assert any(e["name"] == "wait for device" for e in _spans(mlp_trace, "wait"))
    tasks = _spans(mlp_trace, "stream")
    assert tasks  # run by the stream's thread, or by the thread that waited for it
    sin = [e for e in _spans(mlp_trace, "kernel") if e["args"].get("detail") == "f32[4194304]"]
    assert sin and all(any(t["tid"] == s["tid"] and t["ts"] <= s["ts"] for t in tasks)
                       for s in sin)


def test_annotations(tmp_path):
    @jax.profiler.annotate_function
    def helper(x):
        return x + 1

    with jax.profiler.trace(tmp_path):
        with jax.profiler.TraceAnnotation("my_label", color="red"):
            helper(jnp.ones(3)).block_until_ready()
        for step in range(2):
            with jax.profiler.StepTraceAnnotation("train", step_num=step):
                pass
    trace = _load(tmp_path)
    by_name = {e["name"]: e for e in _spans(trace)}
    assert by_name["my_label"]["cat"] == "annotation"
    assert by_name["my_label"]["args"]["detail"] == "color=red"
    inner = by_name["test_annotations.<locals>.helper"]
    outer = by_name["my_label"]
    assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]
    assert {"train 0", "train 1"} <= {e["name"] for e in _spans(trace, "step")}


def test_annotations_cost_nothing_without_a_trace():
    with jax.profiler.TraceAnnotation("nobody records this"):
        pass
    assert jax.profiler.annotate_function(lambda: 3)() == 3


def test_start_and_stop_errors(tmp_path):
    with pytest.raises(RuntimeError, match=r"^No profile started$"):
        jax.profiler.stop_trace()
    jax.profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match=r"^Profile has already been started\. Only one "
                                               r"profile may be run at a time\.$"):
            jax.profiler.start_trace(tmp_path)
    finally:
        jax.profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()


def test_spans_of_an_earlier_session_are_dropped(tmp_path):
    with jax.profiler.trace(tmp_path / "a"):
        jax.jit(lambda x: x * 3)(jnp.ones(4)).block_until_ready()
    jax.jit(lambda x: x * 5)(jnp.ones(4)).block_until_ready()  # not traced
    with jax.profiler.trace(tmp_path / "b"):
        with jax.profiler.TraceAnnotation("only this"):
            pass
    assert {e["name"] for e in _spans(_load(tmp_path / "b"))} == {"only this"}


def test_perfetto_trace_has_no_metadata(tmp_path):
    with jax.profiler.trace(tmp_path, create_perfetto_trace=True):
        jnp.ones(3).block_until_ready()
    (run,) = (tmp_path / "plugins" / "profile").iterdir()
    with gzip.open(run / "perfetto_trace.json.gz", "rt") as f:
        perfetto = json.load(f)
    assert "metadata" not in perfetto and "metadata" in _load(tmp_path)
    assert perfetto["traceEvents"] == _load(tmp_path)["traceEvents"]


def _varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = _varint(b, i)
        if key & 7 == 0:
            v, i = _varint(b, i)
        else:
            assert key & 7 == 2
            n, i = _varint(b, i)
            v, i = b[i:i + n], i + n
        out.append((key >> 3, v))
    return out


def _packed(b):
    vals, i = [], 0
    while i < len(b):
        v, i = _varint(b, i)
        vals.append(v)
    return vals


def _xplane_spans(space: bytes) -> tuple[list, list, dict]:
    """The hostnames of a serialized XSpace, and the spans of its one plane as
    (thread id, name, category, detail, start ns, duration ns), decoded with the field
    numbers of tsl/profiler/protobuf/xplane.proto; also the plane's stat names."""
    fields = _fields(space)
    hostnames = [v.decode() for f, v in fields if f == 4]  # XSpace.hostnames = 4
    (plane,) = [_fields(v) for f, v in fields if f == 1]  # XSpace.planes = 1
    assert [v for f, v in plane if f == 2] == [b"/host:CPU"]  # XPlane.name = 2
    names, stats = {}, {}
    for f, v in plane:
        if f in (4, 5):  # event_metadata / stat_metadata: map<int64, ...> {key 1, value 2}
            entry = dict(_fields(v))
            meta = dict(_fields(entry[2]))
            assert meta[1] == entry[1]  # XEventMetadata.id / XStatMetadata.id = 1
            (names if f == 4 else stats)[entry[1]] = meta[2].decode()  # .name = 2
    spans = []
    for f, v in plane:
        if f != 3:  # XPlane.lines = 3
            continue
        line = _fields(v)
        head = {k: x for k, x in line if k != 4}
        # XLine: id 1, name 2, timestamp_ns 3, display_id 10, display_name 11
        assert head[10] == head[1] and head[11] == head[2]
        for k, ev in line:
            if k != 4:  # XLine.events = 4
                continue
            event = _fields(ev)
            fields_of = dict(event)  # XEvent: metadata_id 1, offset_ps 2, duration_ps 3
            stat = {stats[dict(_fields(x))[1]]: dict(_fields(x))[5].decode()  # XStat.str_value
                    for j, x in event if j == 4}
            spans.append((head[1], names[fields_of[1]], stat["category"], stat.get("long_name"),
                          head[3] + fields_of[2] // 1000, fields_of[3] // 1000))
    return hostnames, spans, stats


def test_xplane_pb_holds_the_trace_spans(mlp_trace, tmp_path):
    path = _trace_file(tmp_path).with_name(f"{socket.gethostname()}.xplane.pb")
    hostnames, spans, stats = _xplane_spans(path.read_bytes())
    assert hostnames == [socket.gethostname()]
    assert sorted(stats.values()) == ["category", "long_name"]
    threads = {e["tid"]: e["args"]["name"] for e in mlp_trace["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    json_spans = _spans(mlp_trace)
    assert len(spans) == len(json_spans) > 10
    origin = min(s[4] for s in spans)
    got = sorted((tid, name, cat, detail, round((t - origin) / 1e3, 3), round(d / 1e3, 3))
                 for tid, name, cat, detail, t, d in spans)
    want = sorted((e["tid"], e["name"], e["cat"], e.get("args", {}).get("detail"),
                   round(e["ts"], 3), round(e["dur"], 3)) for e in json_spans)
    assert got == want
    assert {tid for tid, *_ in spans} <= set(threads)
    assert any(name == "jit(step)" and cat == "executable" for _, name, cat, *_ in spans)
    import time
    assert abs(origin - time.time_ns()) < 600e9  # wall-clock times


def test_device_memory_profile_is_pprof(tmp_path):
    keep = jnp.ones((100, 10))  # 4000 bytes, as JAX's profile counts it
    keep2 = jnp.ones((100, 10))
    profile_bytes = jax.profiler.device_memory_profile()
    fields = _fields(gzip.decompress(profile_bytes))
    strings = [v.decode() for f, v in fields if f == 6]
    assert strings[0] == ""
    sample_types = [[strings[x] for _, x in _fields(v)] for f, v in fields if f == 1]
    assert sample_types == [["allocations", "count"], ["space", "bytes"]]
    functions = {dict(_fields(v))[1]: strings[dict(_fields(v))[2]]
                 for f, v in fields if f == 5}
    found = None
    for f, v in fields:
        if f != 2:
            continue
        sample = _fields(v)
        (locs,) = [_packed(x) for k, x in sample if k == 1]
        (values,) = [_packed(x) for k, x in sample if k == 2]
        labels = {strings[dict(_fields(x))[1]]: strings[dict(_fields(x))[2]]
                  for k, x in sample if k == 3}
        if [functions[i] for i in locs] == ["float32[100,10]"]:
            found = values, labels
    assert found is not None
    values, labels = found
    assert values[0] >= 2 and values[1] == 4000 * values[0]
    assert labels == {"kind": "buffer", "device": "cpu:0"}
    jax.profiler.save_device_memory_profile(tmp_path / "memory.prof")
    assert gzip.decompress((tmp_path / "memory.prof").read_bytes())[:2] == b"\x0a\x04"
    del keep, keep2


def test_profile_summary_command(tmp_path):
    trace = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "dot_general", "ts": 0, "dur": 30.0,
         "args": {"detail": "f32[8,8]"}},
        {"ph": "X", "cat": "kernel", "name": "dot_general", "ts": 40, "dur": 30.0,
         "args": {"detail": "f32[8,8]"}},
        {"ph": "X", "cat": "kernel", "name": "fusion: tanh", "ts": 80, "dur": 40.0},
        {"ph": "X", "cat": "executable", "name": "jit(f)", "ts": 0, "dur": 200.0}]}
    path = tmp_path / "t.trace.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump(trace, f)
    out = subprocess.run([sys.executable, "-m", "tinyxla.profile", str(path)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "3 kernel runs of 2 kernels, 0.100 ms in all"
    assert out[2].split() == ["0.060", "60.0%", "2", "30.00", "dot_general", "f32[8,8]"]
    assert out[3].split() == ["0.040", "40.0%", "1", "40.00", "fusion:", "tanh"]
    assert profile.summary(trace, top=1).splitlines()[-1].split() == [
        "0.040", "40.0%", "(1", "more", "kernels)"]
    bad = subprocess.run([sys.executable, "-m", "tinyxla.profile", str(tmp_path / "nope.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "cannot read" in bad.stderr


def test_profile_summary_of_a_real_trace(mlp_trace):
    rows = profile.kernel_times(mlp_trace)
    assert rows == sorted(rows, key=lambda r: -r[2])
    assert sum(r[3] for r in rows) == len(_spans(mlp_trace, "kernel"))
