"""Programs using jax.debug and the host callbacks, written against a ``jax`` module passed
in, so that the same code runs under JAX 0.10.2 (to pin its outputs) and under tinyxla
(tests/test_callbacks.py compares). Each case returns what it printed or computed.

Regenerate the pinned outputs with the oracle:
    /work/oracle/bin/python tests/debug_callback_cases.py > tests/data/debug_callbacks_jax_0.10.2.json
"""
import contextlib
import io
import json
import logging

import numpy as np


def print_cases(jax, jnp, lax):
    out = {}
    def case(name, fn):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            fn()
            jax.effects_barrier()
        out[name] = buf.getvalue()
    P = jax.debug.print
    case("eager_pos", lambda: P("x = {}", jnp.float32(1.5)))
    case("eager_kw", lambda: P("x = {x}, y = {y}", x=jnp.arange(3), y=2.0))
    case("eager_spec", lambda: P("{x:.3f} {y:>5}", x=jnp.float32(3.14159), y=jnp.int32(7)))
    case("no_placeholder", lambda: P("hello", jnp.arange(2), 3, skip_format_check=True))
    case("plain", lambda: P("just text"))
    case("static_args", lambda: P("{} {} {}", "text", None, jnp.ones(2)))
    case("jit", lambda: jax.jit(lambda x: P("in jit {}", x * 2))(jnp.arange(4.0)))
    case("jit_two", lambda: jax.jit(lambda x: (P("a {}", x), P("b {}", x + 1)))(1.0))
    case("vmap", lambda: jax.vmap(lambda x: P("v {}", x))(jnp.arange(3)))
    case("vmap_two_prints", lambda: jax.vmap(lambda x: (P("first {}", x), P("second {}", x)))(jnp.arange(2)))
    case("vmap_unbatched_arg", lambda: jax.vmap(lambda x, y: P("x={} y={}", x, y), in_axes=(0, None))(jnp.arange(2), 5))
    case("nested_vmap", lambda: jax.vmap(jax.vmap(lambda x: P("n {}", x)))(jnp.arange(4).reshape(2, 2)))
    case("jit_vmap", lambda: jax.jit(jax.vmap(lambda x: P("jv {}", x)))(jnp.arange(3.0)))
    def g(x):
        P("primal {x}", x=x)
        return x ** 2
    case("grad", lambda: print(jax.grad(g)(3.0)))
    case("jit_grad", lambda: print(jax.jit(jax.grad(g))(3.0)))
    case("fori", lambda: jax.jit(lambda n: lax.fori_loop(0, 3, lambda i, c: (P("i={} c={}", i, c), c + 1)[1], n))(10))
    case("while", lambda: jax.jit(lambda x: lax.while_loop(lambda c: c < 3, lambda c: (P("w {}", c), c + 1)[1], x))(0))
    case("scan", lambda: jax.jit(lambda xs: lax.scan(lambda c, x: (P("s {} {}", c, x), (c + x, None))[1], 0.0, xs))(jnp.arange(3.0)))
    case("cond_true", lambda: jax.jit(lambda p, x: lax.cond(p, lambda x: (P("T {}", x), x)[1], lambda x: (P("F {}", x), x)[1], x))(True, 1.0))
    case("cond_false", lambda: jax.jit(lambda p, x: lax.cond(p, lambda x: (P("T {}", x), x)[1], lambda x: (P("F {}", x), x)[1], x))(False, 1.0))
    case("vmap_cond", lambda: jax.vmap(lambda p, x: lax.cond(p, lambda x: (P("T {}", x), x)[1], lambda x: (P("F {}", x), x)[1], x))(jnp.array([True, False]), jnp.arange(2.0)))
    def printopts():
        with np.printoptions(precision=2):
            P("{}", jnp.array([1.23456, 2.0]))
    case("printoptions", printopts)
    case("ordered", lambda: [jax.jit(lambda x: P("o {}", x, ordered=True))(i) for i in range(4)])
    case("two_call", lambda: P(ordered=True)("tc {a}", a=jnp.arange(2)))
    case("callback", lambda: jax.jit(lambda x: jax.debug.callback(lambda v: print("cb", v, type(v).__name__), x))(jnp.arange(2)))
    case("callback_vmap", lambda: jax.vmap(lambda x: jax.debug.callback(lambda v: print("cbv", v), x))(jnp.arange(3)))
    case("bool_and_complex", lambda: P("{} {}", jnp.array([True, False]), jnp.complex64(1 + 2j)))
    case("matrix", lambda: P("{}", jnp.arange(6.0).reshape(2, 3)))
    case("scalar_int", lambda: P("{x}", x=jnp.int32(3)))
    case("python_scalars", lambda: P("{} {} {}", 1, 2.5, True))
    case("conversions", lambda: jax.jit(lambda x, y: P("{0!r} {0!s} {0!a} {0:>5} {0:{w}} {1!r} {1}", x, y, w=3))(3, jnp.float32(1.1)))
    def dtypes_body(i, c):
        P("i={} c={} {:.3f} even={} u8={} v={} {!s}", i, c, c, i % 2 == 0, (i * 100).astype(jnp.uint8),
          jnp.stack([c, -c]), c.astype(jnp.float16))
        return c * 1.1
    case("fori_dtypes", lambda: jax.jit(lambda x: lax.fori_loop(0, 4, dtypes_body, x))(jnp.float32(1.0)))
    return out

def print_errors(jax, jnp):
    res = {}
    for name, fn in [
        ("unused_pos", lambda: jax.debug.print("{}", 1, 2)),
        ("no_placeholder_checked", lambda: jax.debug.print("hello", jnp.arange(2), 3)),
        ("unused_kw", lambda: jax.debug.print("{x}", x=1, y=2)),
        ("missing", lambda: jax.debug.print("{} {}", 1)),
        ("two_call_args", lambda: jax.debug.print(None, 1)),
        ("callback_not_callable", lambda: jax.debug.callback(3)),
    ]:
        try:
            fn()
            res[name] = None
        except Exception as e:
            res[name] = (type(e).__name__, str(e))
    return res


def callback_cases(jax, jnp, lax):
    out = {}
    sds = jax.ShapeDtypeStruct
    def cb(x, y):
        out.setdefault("shapes", []).append((tuple(np.shape(x)), tuple(np.shape(y))))
        return np.asarray(x) + np.asarray(y)
    def fun(x, y, vm):
        return jax.pure_callback(cb, sds(jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y)), jnp.result_type(x, y)), x, y, vmap_method=vm)
    for vm in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all"]:
        out["shapes"] = []
        r = jax.vmap(lambda x, y: fun(x, y, vm), in_axes=(0, None))(jnp.arange(4), 1.0)
        out[vm] = (np.asarray(r).tolist(), str(r.dtype), out.pop("shapes"))
    out["shapes"] = []
    r = jax.vmap(lambda x: jax.pure_callback(lambda v: (out["shapes"].append(np.shape(v)), np.asarray(v) * 2)[1], sds((), jnp.float32), x, vmap_method="legacy_vectorized"))(jnp.arange(3.0))
    out["legacy"] = (np.asarray(r).tolist(), out.pop("shapes"))
    # pytree results
    r = jax.jit(lambda x: jax.pure_callback(lambda v: {"a": np.asarray(v) + 1, "b": (np.asarray(v) * 2).astype(np.int32)},
        {"a": sds((2,), jnp.float32), "b": sds((2,), jnp.int32)}, x))(jnp.arange(2.0))
    out["tree"] = {k: (np.asarray(v).tolist(), str(v.dtype)) for k, v in r.items()}
    # kwargs
    r = jax.pure_callback(lambda x, scale: np.asarray(x) * scale, sds((), jnp.float32), 2.0, scale=3.0)
    out["kwargs"] = float(r)
    # custom_jvp with pure callback under grad
    @jax.custom_jvp
    def f(x):
        return jax.pure_callback(lambda v: np.sin(v), sds((), jnp.float32), x)
    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0]))
    out["grad_custom_jvp"] = float(jax.grad(f)(1.0))
    out["jit_grad_custom_jvp"] = float(jax.jit(jax.grad(f))(1.0))
    # io_callback
    log = []
    r = jax.jit(lambda x: jax.experimental.io_callback(lambda v: (log.append(float(v)), np.float32(v) + 1)[1], sds((), jnp.float32), x, ordered=True))(1.0)
    out["io"] = (float(r), log)
    log2 = []
    jax.vmap(lambda x: jax.experimental.io_callback(lambda v: log2.append(int(v)), None, x))(jnp.arange(3))
    jax.effects_barrier()
    out["io_vmap"] = log2
    # scalar 64-bit canonicalization: callback returns float64
    out["f64_result"] = float(jax.pure_callback(lambda: np.float64(1.5), sds((), jnp.float32)))
    return out

def callback_errors(jax, jnp):
    sds = jax.ShapeDtypeStruct
    res = {}
    def rec(name, fn):
        try:
            r = fn()
            if hasattr(r, "block_until_ready"): r.block_until_ready()
            res[name] = None
        except Exception as e:
            res[name] = (type(e).__name__, str(e).split("\n")[0])
    rec("bad_vmap_method", lambda: jax.pure_callback(lambda x: x, sds((), jnp.float32), 1.0, vmap_method="foo"))
    rec("vmap_none", lambda: jax.vmap(lambda x: jax.pure_callback(lambda v: v, sds((), jnp.float32), x))(jnp.arange(2.0)))
    rec("jvp", lambda: jax.jvp(lambda x: jax.pure_callback(lambda v: v, sds((), jnp.float32), x), (1.0,), (1.0,)))
    rec("grad", lambda: jax.grad(lambda x: jax.pure_callback(lambda v: v, sds((), jnp.float32), x))(1.0))
    rec("io_jvp", lambda: jax.jvp(lambda x: jax.experimental.io_callback(lambda v: v, sds((), jnp.float32), x), (1.0,), (1.0,)))
    rec("io_vmap_ordered", lambda: jax.vmap(lambda x: jax.experimental.io_callback(lambda v: v, sds((), jnp.float32), x, ordered=True))(jnp.arange(2.0)))
    rec("x64_result", lambda: jax.pure_callback(lambda: 1.0, sds((), np.float64)))
    rec("vectorized_kw", lambda: jax.pure_callback(lambda x: x, sds((), jnp.float32), 1.0, vectorized=True))
    rec("wrong_shape", lambda: jax.jit(lambda x: jax.pure_callback(lambda v: np.zeros(3, np.float32), sds((), jnp.float32), x))(1.0))
    rec("wrong_dtype", lambda: jax.jit(lambda x: jax.pure_callback(lambda v: np.zeros((), np.int32), sds((), jnp.float32), x))(1.0))
    rec("wrong_count", lambda: jax.jit(lambda x: jax.pure_callback(lambda v: (v, v), (sds((), jnp.float32),), x))(1.0))
    return res


if __name__ == "__main__":
    logging.disable(logging.CRITICAL)
    import jax
    import jax.experimental  # noqa: F401
    import jax.numpy as jnp
    from jax import lax
    print(json.dumps({"print_cases": print_cases(jax, jnp, lax),
                      "print_errors": print_errors(jax, jnp),
                      "callback_cases": callback_cases(jax, jnp, lax),
                      "callback_errors": callback_errors(jax, jnp)}, indent=1))
