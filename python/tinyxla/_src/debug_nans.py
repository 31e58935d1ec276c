"""``jax_debug_nans`` / ``jax_debug_infs``: after a jitted call returns a NaN (or an inf),
re-run its jaxpr one primitive at a time to name the primitive that made it, and raise
``FloatingPointError`` with JAX's message (mirrors ``jax._src.dispatch.check_special`` and
``jax._src.api_util.maybe_recursive_nan_check``).

Differences from JAX: JAX re-runs the whole Python function with jit disabled, so eager
operations are checked too; tinyxla checks jitted calls only and re-runs the traced jaxpr
(descending into nested jit calls), which names the same primitive without re-running the
function's Python side effects.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tinyxla._src import core
from tinyxla._src.config import config


def enabled() -> bool:
    """Whether jitted calls check their outputs."""
    return bool(config.jax_debug_nans or config.jax_debug_infs)


def _special(values: Sequence[Any]) -> str | None:
    """``"nan"`` or ``"inf"`` if one of the values holds one that is being checked for."""
    for x in values:
        a = np.asarray(x)
        if not np.issubdtype(a.dtype, np.inexact):
            continue
        if config.jax_debug_nans and np.isnan(a).any():
            return "nan"
        if config.jax_debug_infs and np.isinf(a).any():
            return "inf"
    return None


def check_outputs(jaxpr: core.ClosedJaxpr, args: Sequence[Any], outs: Sequence[Any]) -> None:
    """Raises JAX's ``FloatingPointError`` if ``outs`` (of ``jaxpr`` at ``args``) hold a
    checked special value, naming the primitive that first made one."""
    kind = _special(outs)
    if kind is None:
        return
    print("Invalid nan value encountered in the output of a jax.jit function. "
          "Calling the de-optimized version.")
    name = _first_special(jaxpr.jaxpr, jaxpr.consts, args)
    if name is not None:
        raise FloatingPointError(f"invalid value ({name[1]}) encountered in {name[0]}")
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in jit. Because "
        "jax_config.debug_nans.value and/or config.jax_debug_infs is set, the "
        "de-optimized function (i.e., the function as if the `jit` decorator were "
        "removed) was called in an attempt to get a more precise error message. However, "
        "the de-optimized function did not produce invalid values during its execution. "
        "This behavior can result from `jit` optimizations causing the invalid value to be "
        "produced. It may also arise from having nan/inf literals as inputs or outputs, "
        "like `jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid "
        "the invalid value by removing the `jit` decorator, at the cost of losing "
        "optimizations. \n\nIf you see this error, consider opening a bug report at "
        "https://github.com/jax-ml/jax.")


def _first_special(jaxpr: core.Jaxpr, consts: Sequence[Any],
                   args: Sequence[Any]) -> tuple[str, str] | None:
    """Runs ``jaxpr`` equation by equation; the first primitive (inside nested jit calls
    too) whose outputs hold a checked special value, and which value. Iterative: nested
    jaxprs are run from an explicit stack of frames."""
    # A frame: (jaxpr, env, next equation index, the calling equation's outvars).
    stack: list[tuple[core.Jaxpr, dict, int, list | None]] = [
        (jaxpr, {**dict(zip(jaxpr.constvars, consts)), **dict(zip(jaxpr.invars, args))},
         0, None)]
    while stack:
        jx, env, i, caller_outvars = stack.pop()
        read = lambda v, env=env: v.val if type(v) is core.Literal else env[v]  # noqa: E731
        if i == len(jx.eqns):
            if stack:
                env_up = stack[-1][1]
                env_up.update(zip(caller_outvars, [read(v) for v in jx.outvars]))
            continue
        eqn = jx.eqns[i]
        stack.append((jx, env, i + 1, caller_outvars))
        invals = [read(v) for v in eqn.invars]
        inner = eqn.params.get("jaxpr") if eqn.primitive.name == "jit" else None
        if isinstance(inner, core.ClosedJaxpr):
            ij = inner.jaxpr
            stack.append((ij, {**dict(zip(ij.constvars, inner.consts)),
                               **dict(zip(ij.invars, invals))}, 0, eqn.outvars))
            continue
        outs = eqn.primitive.bind(*invals, **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        kind = _special(outs)
        if kind is not None:
            return eqn.primitive.name, kind
        env.update(zip(eqn.outvars, outs))
    return None
