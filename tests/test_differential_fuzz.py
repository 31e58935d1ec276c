"""Differential fuzzing: random programs (chains of jnp ops over random shapes with
broadcasting, reductions and indexing) run eagerly, under jit on the base tier and under
jit on the upper tier, each against the same program in numpy (float64); and grad of the
smooth ones against central differences.

CI runs a fixed-seed sample. A longer run:

    TINYXLA_FUZZ_EXAMPLES=5000 .venv/bin/python -m pytest -q tests/test_differential_fuzz.py
"""
import os
import shutil
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinyxla as jax
import tinyxla.numpy as jnp

EXAMPLES = int(os.environ.get("TINYXLA_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@dataclass(frozen=True)
class Op:
    """One step: ``fn(m, *operands)`` with ``m`` jnp or numpy, keeping values bounded;
    ``arity`` operands from the values so far; ``smooth`` where grad is checked."""
    name: str
    arity: int
    fn: Callable
    smooth: bool = True


def _axis(x, k: int) -> int:
    return k % x.ndim


OPS = [
    Op("sin", 1, lambda m, x: m.sin(x)),
    Op("tanh", 1, lambda m, x: m.tanh(x)),
    Op("exp_tanh", 1, lambda m, x: m.exp(m.tanh(x))),
    Op("log1p_sq", 1, lambda m, x: m.log1p(x * x)),
    Op("sqrt_1p_sq", 1, lambda m, x: m.sqrt(1 + x * x)),
    Op("square", 1, lambda m, x: x * x * 0.5),
    Op("neg", 1, lambda m, x: -x),
    Op("abs", 1, lambda m, x: m.abs(x), smooth=False),
    Op("add", 2, lambda m, x, y: x + y),
    Op("sub", 2, lambda m, x, y: x - y),
    Op("mul", 2, lambda m, x, y: m.tanh(x) * y),
    Op("div", 2, lambda m, x, y: x / (2 + m.sin(y))),
    Op("max", 2, lambda m, x, y: m.maximum(x, y), smooth=False),
    Op("where", 2, lambda m, x, y: m.where(x > y, x, y * 0.5), smooth=False),
    Op("sum_axis", 1, lambda m, x, k=0: m.sum(x, axis=_axis(x, k), keepdims=True)),
    Op("mean_axis", 1, lambda m, x, k=1: m.mean(x, axis=_axis(x, k), keepdims=True)),
    Op("max_axis", 1, lambda m, x, k=0: m.max(x, axis=_axis(x, k), keepdims=True),
       smooth=False),
    Op("reverse_last", 1, lambda m, x: x[..., ::-1]),
    Op("roll_first", 1, lambda m, x: m.concatenate([x[1:], x[:1]], axis=0)),
    Op("cumsum_last", 1, lambda m, x: m.cumsum(x, axis=-1)),
]


# What stands for a non-smooth op in the grad check: the same arity, smooth.
_SMOOTH = {1: next(op for op in OPS if op.name == "square"),
           2: next(op for op in OPS if op.name == "add")}


@st.composite
def programs(draw):
    """Inputs of broadcast-compatible shapes (rank 1 to 3) in [-2, 2] and 1 to 7 steps,
    each naming its op and operands (indices into the values so far)."""
    rank = draw(st.integers(1, 3))
    full = [draw(st.integers(1, 5)) for _ in range(rank)]
    n_inputs = draw(st.integers(1, 3))
    shapes = [tuple(d if draw(st.booleans()) else 1 for d in full) for _ in range(n_inputs)]
    shapes[0] = tuple(full)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, s).astype(np.float32) for s in shapes]
    steps = []
    for i in range(draw(st.integers(1, 7))):
        op = draw(st.sampled_from(OPS))
        avail = n_inputs + i
        operands = [draw(st.integers(0, avail - 1)) for _ in range(op.arity)]
        steps.append((op, operands))
    return inputs, steps


def _run(m, steps, *inputs):
    values = list(inputs)
    for op, operands in steps:
        values.append(op.fn(m, *[values[k] for k in operands]))
    # Every value broadcasts against the first input: the output covers them all.
    out = values[-1]
    for v in values[len(inputs):-1]:
        out = out + 0.25 * m.tanh(v)
    return out


def _tier(mode: str, steps, inputs):
    os.environ["TINYXLA_CODEGEN"] = mode
    try:
        compiled = jax.jit(lambda *a: _run(jnp, steps, *a)).lower(*inputs).compile()
        if mode == "1":
            compiled.wait_codegen()
        return compiled(*inputs)
    finally:
        del os.environ["TINYXLA_CODEGEN"]


def _describe(steps) -> str:
    return "; ".join(f"{op.name}{tuple(operands)}" for op, operands in steps)


@FUZZ
@given(programs())
def test_eager_jit_and_upper_tier_agree_with_numpy(program):
    inputs, steps = program
    want = _run(np, steps, *[x.astype(np.float64) for x in inputs])
    got = {"eager": _run(jnp, steps, *inputs), "jit": _tier("0", steps, inputs)}
    if shutil.which("cc") or os.environ.get("CC"):
        got["upper"] = _tier("1", steps, inputs)
    for name, value in got.items():
        np.testing.assert_allclose(np.asarray(value, np.float64), want, rtol=2e-4, atol=2e-4,
                                   err_msg=f"{name}: {_describe(steps)}")
    # The compiled tiers compute what eager computes, to rounding.
    np.testing.assert_allclose(np.asarray(got["jit"]), np.asarray(got["eager"]),
                               rtol=1e-5, atol=1e-5, err_msg=_describe(steps))


@FUZZ
@given(programs())
def test_grad_of_smooth_programs_matches_central_differences(program):
    inputs, steps = program
    steps = [(op if op.smooth else _SMOOTH[op.arity], operands) for op, operands in steps]
    loss = lambda m, *a: m.sum(_run(m, steps, *a))  # noqa: E731
    g = jax.grad(lambda *a: loss(jnp, *a))(*inputs)
    jg = jax.jit(jax.grad(lambda *a: loss(jnp, *a)))(*inputs)
    x64 = [x.astype(np.float64) for x in inputs]
    eps = 1e-6
    num = np.zeros_like(x64[0])
    for idx in np.ndindex(x64[0].shape):
        hi, lo = x64[0].copy(), x64[0].copy()
        hi[idx] += eps
        lo[idx] -= eps
        num[idx] = (loss(np, hi, *x64[1:]) - loss(np, lo, *x64[1:])) / (2 * eps)
    np.testing.assert_allclose(np.asarray(g, np.float64), num, rtol=2e-3, atol=2e-3,
                               err_msg=_describe(steps))
    np.testing.assert_allclose(np.asarray(jg), np.asarray(g), rtol=1e-5, atol=1e-5,
                               err_msg=_describe(steps))

