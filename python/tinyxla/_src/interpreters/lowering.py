"""Lowering a closed jaxpr to the C++ graph IR, and running it: ``executable_for(closed)``.

``lower_jaxpr`` is the one function from Jaxpr to Graph: each equation becomes graph nodes
through its primitive's lowering rule (registered beside the primitive with
``register_lowering``); call primitives (``jit``, ``remat2``, custom derivatives) are
inlined. ``_core.compile`` then optimises (simplify, CSE, DCE, fusion, memory plan) and
the whole function runs as one task on a device stream. A jaxpr holding a primitive
without a lowering rule runs equation by equation eagerly instead (correct, slower).

Executables are cached on the jaxpr object, so a jit cache hit reuses its executable.
``TINYXLA_DUMP_DIR`` makes every lowering write the jaxpr and the graph before and after
optimisation there.
"""
from __future__ import annotations

import itertools
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np

from tinyxla import _core
from tinyxla._src import compile_log, core, devices, profiler
from tinyxla._src.array import _CODE, _DTYPES, Array, _to_array, _wrap
from tinyxla._src.interpreters import executable_budget

LoweringRule = Callable[..., Any]
_lowerings: dict[core.Primitive, LoweringRule] = {}
_inlined: dict[core.Primitive, str] = {}
# Elementwise primitives whose size-1 axes broadcast (as lax's do: vmap's broadcasting
# rule relies on it); the C++ ops want equal shapes, so lowering broadcasts explicitly.
_size1_broadcasting: set[core.Primitive] = set()


def register_lowering(prim: core.Primitive, rule: LoweringRule) -> None:
    """Registers ``rule(ctx, *operands, **params)`` as ``prim``'s lowering.

    ``operands`` are value ids in ``ctx.builder`` (a ``_core.GraphBuilder``); the rule
    returns one value id, or a list of them when ``prim.multiple_results``."""
    _lowerings[prim] = rule


def register_size1_broadcasting(prim: core.Primitive) -> None:
    """``prim``'s operands of its output's rank may have size-1 axes where the output does
    not; lowering broadcasts them to the output's shape first."""
    _size1_broadcasting.add(prim)


def register_inline(prim: core.Primitive, jaxpr_param: str) -> None:
    """``prim`` is a call of the (closed) jaxpr in its parameter ``jaxpr_param``: lowering
    inlines that jaxpr."""
    _inlined[prim] = jaxpr_param


class GraphOps:
    """The graph builder under the op interface an emitter writes to (``register_emitter``):
    the builder's methods, and ``full_like``."""

    __slots__ = ("builder",)

    def __init__(self, builder: Any):
        self.builder = builder

    def __getattr__(self, name: str) -> Any:
        return getattr(self.builder, name)

    def full_like(self, x: int, value: Any) -> int:
        """A constant of ``x``'s shape and dtype filled with ``value``."""
        b = self.builder
        s = b.constant(_core.scalar(value, b.dtype_code(x), 0))
        shape = b.shape(x)
        return s if not shape else b.broadcast_in_dim(s, list(shape), [])


def register_emitter(prim: core.Primitive, emit: Callable[..., Any]) -> None:
    """Registers ``emit(GraphOps(builder), *operands, **params)`` as ``prim``'s lowering.

    An emitter writes a primitive's C++ ops once, against the op interface that both the
    graph builder (``GraphOps``) and the eager runtime (``lax/eager.EAGER``: ``_core``'s
    functions under the builder's names) provide; the eager impl runs the same emitter on
    handles, so eager and jit cannot disagree."""
    register_lowering(prim, lambda ctx, *xs, **params: emit(GraphOps(ctx.builder), *xs, **params))


class LoweringContext:
    """What a lowering rule sees besides its operands."""

    __slots__ = ("builder", "avals_in", "avals_out", "used_out")

    def __init__(self, builder: Any, avals_in: Sequence[core.ShapedArray],
                 avals_out: Sequence[core.ShapedArray], used_out: Sequence[bool] | None = None):
        self.builder = builder
        self.avals_in = avals_in
        self.avals_out = avals_out
        # Which results anything reads (a rule may skip work for the others, as JAX's DCE).
        self.used_out = [True] * len(avals_out) if used_out is None else used_out

    def scalar(self, value: Any, dtype: np.dtype) -> int:
        """A 0-d constant of ``dtype``."""
        return self.builder.constant(_core.scalar(value, _CODE[np.dtype(dtype)], 0))

    def full(self, value: Any, aval: core.ShapedArray) -> int:
        """A constant of ``aval``'s shape filled with ``value`` (a broadcast scalar)."""
        s = self.scalar(value, aval.dtype)
        return s if not aval.shape else self.builder.broadcast_in_dim(s, list(aval.shape), [])


class LoweringUnsupported(Exception):
    """A primitive in the jaxpr has no lowering rule."""


def code(dtype: Any) -> int:
    """``_core``'s integer code of ``dtype``."""
    return _CODE[np.dtype(dtype)]


def _literal_value(lit: core.Literal) -> Any:
    v = lit.val
    return v.item() if isinstance(v, (np.ndarray, np.generic)) else v


def _constant(builder: Any, value: Any, aval: core.ShapedArray) -> int:
    if type(value) is Array:
        h = value._h
    elif isinstance(value, (bool, int, float, complex)) and not aval.shape:
        h = _core.scalar(value, code(aval.dtype), 0)
    else:
        h = _to_array(np.asarray(value, dtype=aval.dtype))._h
    if h.dtype_code != code(aval.dtype):
        h = _core.convert(h, code(aval.dtype))
    return builder.constant(h)


def _lower_eqns(builder: Any, jaxpr: core.Jaxpr, env: dict) -> None:
    """Appends ``jaxpr``'s equations to ``builder``; ``env`` maps its bound vars to value ids
    and receives the vars the equations define."""

    def read(x: Any) -> int:
        if type(x) is core.Literal:
            return _constant(builder, _literal_value(x), x.aval)
        return env[x]

    read_vars = {id(v) for e in jaxpr.eqns for v in e.invars}
    read_vars.update(id(v) for v in jaxpr.outvars)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        operands = [read(x) for x in eqn.invars]
        param = _inlined.get(prim)
        if param is not None:
            sub = eqn.params[param]
            outs = inline_jaxpr(builder, sub if isinstance(sub, core.ClosedJaxpr)
                                else core.ClosedJaxpr(sub, ()), operands)
        else:
            rule = _lowerings.get(prim)
            if rule is None:
                raise LoweringUnsupported(prim.name)
            avals_in = [x.aval for x in eqn.invars]
            avals_out = [v.aval for v in eqn.outvars]
            if prim in _size1_broadcasting:
                shape = avals_out[0].shape
                for i, a in enumerate(avals_in):
                    if a.shape and a.shape != shape:
                        operands[i] = builder.broadcast_in_dim(operands[i], list(shape),
                                                               list(range(len(shape))))
                        avals_in[i] = a.update(shape=shape)
            ctx = LoweringContext(builder, avals_in, avals_out,
                                  [id(v) in read_vars for v in eqn.outvars])
            outs = rule(ctx, *operands, **eqn.params)
            if not prim.multiple_results:
                outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o


def inline_jaxpr(builder: Any, closed: core.ClosedJaxpr, operands: Sequence[int]) -> list[int]:
    """Appends ``closed``'s equations to ``builder`` with ``operands`` (value ids) as its
    inputs; returns the value ids of its outputs. Call primitives and primitives defined
    by a composition of others (JAX's ``mlir.lower_fun``) lower this way."""
    jaxpr = closed.jaxpr
    env = {v: _constant(builder, c, v.aval) for v, c in zip(jaxpr.constvars, closed.consts)}
    env.update(zip(jaxpr.invars, operands))
    _lower_eqns(builder, jaxpr, env)
    return [env[v] if type(v) is not core.Literal else _constant(builder, _literal_value(v), v.aval)
            for v in jaxpr.outvars]


def lower_jaxpr(closed: core.ClosedJaxpr) -> Any:
    """The ``_core.GraphBuilder`` holding ``closed`` as one graph: a parameter per input,
    a constant per closed-over value. Raises LoweringUnsupported for a primitive without a
    rule."""
    jaxpr = closed.jaxpr
    b = _core.GraphBuilder()
    env = {v: b.parameter(list(v.aval.shape), code(v.aval.dtype)) for v in jaxpr.invars}
    for v, c in zip(jaxpr.constvars, closed.consts):
        env[v] = _constant(b, c, v.aval)
    _lower_eqns(b, jaxpr, env)
    b.set_outputs([env[v] if type(v) is not core.Literal
                   else _constant(b, _literal_value(v), v.aval) for v in jaxpr.outvars])
    return b


class GraphExecutable:
    """A jaxpr compiled by the C++ graph compiler; called with flat arguments, returns flat
    outputs as Arrays with the jaxpr's output dtypes and weak types. Counted by
    ``executable_budget``, which may release the compiled graph (``release``); the next
    call then compiles it again."""

    __slots__ = ("closed", "executable", "_out", "_in", "used", "nbytes", "__weakref__")

    def __init__(self, closed: core.ClosedJaxpr, executable: Any):
        self.closed = closed
        self.executable = executable
        self._in = [(v.aval.dtype, code(v.aval.dtype)) for v in closed.jaxpr.invars]
        self._out = [(a.weak_type, _DTYPES[code(a.dtype)]) for a in closed.out_avals]
        self.used = True
        self.nbytes = (sum(int(getattr(c, "nbytes", 0)) for c in closed.consts) +
                       executable_budget.BYTES_PER_EQUATION * (1 + len(closed.jaxpr.eqns)))

    def release(self) -> None:
        """Drops the compiled graph (runs in flight keep it until they finish)."""
        self.executable = _Released(self)

    def recompile(self) -> Any:
        """The compiled graph again, after ``release``."""
        self.executable = _core.compile(lower_jaxpr(self.closed))
        self.used = True
        executable_budget.admit(self)
        return self.executable

    def __call__(self, args: Sequence[Any], device: int | None = None,
                 donated: Sequence[bool] | None = None) -> list[Array]:
        """Runs on ``device`` (default: the committed arguments' device, else
        ``jax_default_device``'s). A
        ``donated`` argument is deleted and its buffer may become an output's."""
        handles = []
        committed = False
        for a, (dt, c) in zip(args, self._in):
            if type(a) is not Array:
                a = _to_array(a)
            h = a._h
            if h.dtype_code != c:
                h = _core.convert(h, c)
            if a._committed and not committed:
                committed = True
                if device is None:
                    device = h.device
            handles.append(h)
        # The loop's last handle would otherwise stay referenced through the run, and a
        # donated last argument could not give its buffer to an output.
        h = None
        self.used = True
        if device is None:
            device = devices.default_index()
        if donated is None:
            outs = self.executable.run(handles, device)
        else:
            for a, d in zip(args, donated):
                if d and type(a) is Array:
                    a.delete()
            outs = self.executable.run_donating(handles, device, list(donated))
        result = []
        for h, (weak, dt) in zip(outs, self._out):
            out = _wrap(h, weak, dt)
            out._committed = committed
            result.append(out)
        return result

    def scalar_argument(self, i: int, x: bool | int | float | complex) -> Array:
        """Python scalar argument ``i`` as an Array of its parameter's dtype (as ``self``
        converts it), for ``call_arrays``."""
        a = _to_array(x)
        dt, c = self._in[i]
        return a if a._h.dtype_code == c else _wrap(_core.convert(a._h, c), a.weak_type, dt)

    def call_arrays(self, args: Sequence[Array], donated: Sequence[bool] = ()) -> list[Array]:
        """``self(args, donated=donated)`` for Arrays already of the parameters' dtypes
        (jit's cached fast path, whose key guarantees it)."""
        self.used = True
        return self.executable.call_arrays(args, devices.default_index(), self._out, Array,
                                           donated)

    def text(self) -> str:
        return self.executable.text()

    @property
    def num_kernels(self) -> int:
        return self.executable.num_kernels

    @property
    def tier(self) -> str:
        """The CPU compiler tier running the fused kernels: ``"base"`` (the tiled
        interpreter) or ``"upper"`` (generated C, compiled and loaded); see
        ``TINYXLA_CODEGEN``."""
        return self.executable.tier

    @property
    def codegen_status(self) -> str:
        """``off``, ``none``, ``pending``, ``building``, ``loaded``, ``cached`` or
        ``failed: <why>``."""
        return self.executable.codegen_status

    @property
    def codegen_source(self) -> str:
        """The generated C source of the upper tier (for debugging)."""
        return self.executable.codegen_source

    @property
    def codegen_kernel_runs(self) -> int:
        """Fused-kernel runs done by the upper tier's generated code so far."""
        return self.executable.codegen_kernel_runs

    def wait_codegen(self) -> None:
        """Blocks until a started upper-tier build has finished (loaded or failed)."""
        self.executable.wait_codegen()


class _Released:
    """What a released GraphExecutable holds in place of its compiled graph: any use
    compiles it again."""

    __slots__ = ("owner",)

    def __init__(self, owner: GraphExecutable):
        self.owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.owner.recompile(), name)


class JaxprExecutable:
    """Runs a closed jaxpr by dispatching each equation eagerly (each op is asynchronous):
    the path of jaxprs holding a primitive without a lowering rule."""

    __slots__ = ("closed", "reason")
    tier = "eager"
    codegen_status = "none"
    codegen_source = ""
    codegen_kernel_runs = 0

    def __init__(self, closed: core.ClosedJaxpr, reason: str = ""):
        self.closed = closed
        self.reason = reason

    def __call__(self, args: Sequence[Any], device: int | None = None,
                 donated: Sequence[bool] | None = None) -> list[Any]:
        with core.set_current_trace(core.EVAL_TRACE):
            outs = core.eval_jaxpr(self.closed.jaxpr, self.closed.consts, *args)
        for a, d in zip(args, donated or ()):
            if d and type(a) is Array:
                a.delete()
        # An output that is an input or a literal is a Python or numpy value: make it an Array.
        return [x if isinstance(x, Array) else _to_array(x) for x in outs]

    def text(self) -> str:
        return str(self.closed)

    def wait_codegen(self) -> None:
        """Nothing to wait for: no graph is compiled."""


_dump_counter = itertools.count()
_dump_lock = threading.Lock()


def _dump(name: str, closed: core.ClosedJaxpr, builder: Any, executable: Any) -> None:
    directory = os.environ.get("TINYXLA_DUMP_DIR")
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    with _dump_lock:
        n = next(_dump_counter)
    stem = os.path.join(directory, f"{n:04d}.{name}")
    texts = {"jaxpr.txt": str(closed)}
    if builder is not None:
        texts["graph.txt"] = builder.text()
        texts["optimized.txt"] = executable.text()
    for suffix, text in texts.items():
        with open(f"{stem}.{suffix}", "w") as f:
            f.write(text)


def compile_jaxpr(closed: core.ClosedJaxpr, name: str = "jit") -> GraphExecutable | JaxprExecutable:
    """Lowers and compiles ``closed``; a jaxpr that cannot be lowered runs eagerly."""
    compile_log.log_compile(name, closed.in_avals)
    with compile_log.timed("Finished tinyxla compilation of jit(%s)", name):
        try:
            with profiler.phase("lower", f"jit({name})"):
                builder = lower_jaxpr(closed)
        except LoweringUnsupported as e:
            exe: Any = JaxprExecutable(closed, f"no lowering for {e.args[0]}")
            _dump(name, closed, None, None)
            return exe
        # TINYXLA_FUSE_EPILOGUES=0 keeps a conv's elementwise consumers out of its kernel
        # (to measure what the fusion gains).
        epilogues = os.environ.get("TINYXLA_FUSE_EPILOGUES", "1") != "0"
        exe = GraphExecutable(closed, _core.compile(builder, fuse_epilogues=epilogues,
                                                    name=f"jit({name})"))
    _dump(name, closed, builder, exe.executable)
    executable_budget.admit(exe)
    return exe


def executable_for(closed: core.ClosedJaxpr, name: str = "jit") -> GraphExecutable | JaxprExecutable:
    """The executable of ``closed``, built once and kept on the jaxpr."""
    exe = closed._executable
    if exe is None:
        exe = closed._executable = compile_jaxpr(closed, name)
    return exe
