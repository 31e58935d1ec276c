"""The stages of a jitted function (mirrors ``jax.stages``): ``jit(f).trace(*args)`` gives
a ``Traced`` (the jaxpr), ``.lower()`` a ``Lowered`` (the graph), ``.compile()`` a
``Compiled`` (the executable, callable). ``Compiled.cost_analysis()`` counts the graph's
work as XLA's cost analysis does for a fully fused graph.

Differences from JAX: the text forms are tinyxla's graph text, not StableHLO/HLO;
``cost_analysis``'s "bytes accessed" counts the arguments and outputs (XLA's figure for a
graph fused into one kernel), not the traffic between tinyxla's fused kernels.
"""
from __future__ import annotations

import math
from typing import Any

from tinyxla import _core
from tinyxla._src import core, devices, graph_picture
from tinyxla._src.interpreters import lowering
from tinyxla._src.tree_util import tree_flatten, tree_unflatten

# Primitives XLA's cost analysis counts as transcendentals (one per element), not flops.
_TRANSCENDENTAL = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic", "sqrt",
    "rsqrt", "cbrt", "pow", "atan2", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "erf", "erfc", "erf_inv", "lgamma", "digamma"})
# Elementwise arithmetic: one flop per output element.
_ARITHMETIC = frozenset({
    "add", "add_any", "sub", "mul", "div", "rem", "max", "min", "neg", "abs", "sign",
    "floor", "ceil", "round", "square", "integer_pow", "reduce_sum", "reduce_max",
    "reduce_min", "reduce_prod"})


def _nbytes(aval: core.ShapedArray) -> int:
    return math.prod(aval.shape) * aval.dtype.itemsize


def cost_of(closed: core.ClosedJaxpr) -> dict[str, float]:
    """``flops``, ``transcendentals`` and ``bytes accessed`` of a jaxpr (nested jit calls
    included), counted as XLA counts them."""
    flops = transcendentals = 0
    stack = [closed.jaxpr]
    while stack:
        for eqn in stack.pop().eqns:
            name = eqn.primitive.name
            inner = eqn.params.get("jaxpr")
            if name == "jit" and isinstance(inner, core.ClosedJaxpr):
                stack.append(inner.jaxpr)
                continue
            out = eqn.outvars[0].aval
            if name == "dot_general":
                (lc, _), _ = eqn.params["dimension_numbers"]
                lhs = eqn.invars[0].aval.shape
                flops += 2 * math.prod(out.shape) * math.prod(lhs[d] for d in lc)
            elif name in _TRANSCENDENTAL:
                transcendentals += math.prod(out.shape)
            elif name in _ARITHMETIC:
                size = eqn.invars[0].aval if name.startswith("reduce") else out
                flops += math.prod(size.shape)
    bytes_accessed = (sum(_nbytes(v.aval) for v in closed.jaxpr.invars)
                      + sum(_nbytes(a) for a in closed.out_avals))
    cost = {"flops": float(flops), "bytes accessed": float(bytes_accessed)}
    if transcendentals:
        cost["transcendentals"] = float(transcendentals)
    return cost


class CompiledMemoryStats:
    """Sizes in bytes from the memory plan (``Compiled.memory_analysis()``, as XLA's
    ``CompiledMemoryStats``): arguments, outputs, outputs that take a donated argument's
    buffer (alias), and the peak of intermediates alive at once (temp). Differences: the
    output size has no tuple index table (XLA adds 8 bytes per output of a tuple), and
    generated code and host sizes are 0."""

    __slots__ = ("argument_size_in_bytes", "output_size_in_bytes", "alias_size_in_bytes",
                 "temp_size_in_bytes", "generated_code_size_in_bytes",
                 "host_argument_size_in_bytes", "host_output_size_in_bytes",
                 "host_alias_size_in_bytes", "host_temp_size_in_bytes",
                 "host_generated_code_size_in_bytes")

    def __init__(self, argument: int, output: int, alias: int, temp: int):
        self.argument_size_in_bytes = argument
        self.output_size_in_bytes = output
        self.alias_size_in_bytes = alias
        self.temp_size_in_bytes = temp
        self.generated_code_size_in_bytes = 0
        self.host_argument_size_in_bytes = self.host_output_size_in_bytes = 0
        self.host_alias_size_in_bytes = self.host_temp_size_in_bytes = 0
        self.host_generated_code_size_in_bytes = 0

    @property
    def peak_memory_in_bytes(self) -> int:
        return (self.argument_size_in_bytes + self.output_size_in_bytes
                + self.temp_size_in_bytes - self.alias_size_in_bytes)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)}" for k in (
            "generated_code_size_in_bytes", "argument_size_in_bytes", "output_size_in_bytes",
            "alias_size_in_bytes", "temp_size_in_bytes"))
        return f"CompiledMemoryStats({fields})"


class ArgInfo:
    """An argument's abstract value and whether it is donated (``jax.stages.ArgInfo``)."""

    __slots__ = ("_aval", "donated")

    def __init__(self, aval: core.ShapedArray, donated: bool):
        self._aval = aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class Traced:
    """A traced jitted function at given arguments (``jax.stages.Traced``)."""

    def __init__(self, jaxpr: core.ClosedJaxpr, out_tree: Any, name: str, args_info: Any):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.name = name
        self.args_info = args_info

    @property
    def out_info(self) -> Any:
        """The outputs' shapes and dtypes as a pytree of ShapedArrays."""
        return tree_unflatten(self.out_tree, list(self.jaxpr.out_avals))

    def lower(self) -> "Lowered":
        return Lowered(self.jaxpr, self.out_tree, self.name, self.args_info)


class Lowered:
    """The result of ``jit(f).lower(*args)`` (``jax.stages.Lowered``)."""

    def __init__(self, jaxpr: core.ClosedJaxpr, out_tree: Any, name: str,
                 args_info: Any = None):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.name = name
        self.args_info = args_info

    def as_text(self) -> str:
        """Our optimised graph's text form (JAX prints StableHLO here)."""
        return lowering.executable_for(self.jaxpr).text()

    def compile(self) -> "Compiled":
        return Compiled(lowering.executable_for(self.jaxpr, self.name), self.out_tree,
                        self.jaxpr, self.args_info, f"jit({self.name})")

    def cost_analysis(self) -> dict[str, float]:
        """As ``Compiled.cost_analysis`` (``Lowered.cost_analysis``)."""
        return cost_of(self.jaxpr)


class Compiled:
    """A compiled function of flat arrays (``jax.stages.Compiled``)."""

    def __init__(self, executable: Any, out_tree: Any, jaxpr: core.ClosedJaxpr,
                 args_info: Any = None, name: str = "jit"):
        self._executable = executable
        self._name = name
        self._out_tree = out_tree
        self.jaxpr = jaxpr
        self.args_info = args_info

    def as_text(self) -> str:
        """The graph after simplification, CSE, DCE and fusion (``fused`` nodes hold their
        bodies), in tinyxla's text form (JAX prints optimised HLO here)."""
        return self._executable.text()

    def _graph_executable(self) -> Any:
        """The compiled graph (compiled again if the executable budget released it), or
        None for a function that runs op by op."""
        graph = getattr(self._executable, "executable", None)
        if graph is not None and not isinstance(graph, _core.Executable):
            graph = self._executable.recompile()
        return graph

    def as_svg(self, layout: str = "auto") -> str:
        """tinyxla only: a picture of the optimised graph as SVG (see ``tools.graph_svg``);
        ``layout`` is "auto", "dot" (Graphviz) or "builtin"."""
        graph = self._graph_executable()
        if graph is None:
            raise ValueError(f"{self._executable.reason}: this function runs op by op and "
                             "has no graph to draw")
        return graph_picture.svg(graph_picture.describe(graph, self._name), layout)

    def memory_analysis(self) -> CompiledMemoryStats:
        """Argument, output, alias and temporary sizes from the memory plan
        (``Compiled.memory_analysis``)."""
        donated = [False] * len(self.jaxpr.jaxpr.invars)
        if self.args_info is not None:
            infos = tree_flatten(self.args_info, is_leaf=lambda x: isinstance(x, ArgInfo))[0]
            donated = [i.donated for i in infos]
        graph = self._graph_executable()
        if graph is None:  # runs op by op: no plan, intermediates counted by nobody
            size = lambda avals: sum(_nbytes(a) for a in avals)  # noqa: E731
            return CompiledMemoryStats(size(self.jaxpr.in_avals), size(self.jaxpr.out_avals),
                                       0, 0)
        m = _core.memory_analysis(graph, donated)
        return CompiledMemoryStats(m["argument_size_in_bytes"], m["output_size_in_bytes"],
                                   m["alias_size_in_bytes"], m["temp_size_in_bytes"])

    def cost_analysis(self) -> dict[str, float]:
        """``flops``, ``bytes accessed`` and (when nonzero) ``transcendentals``, as XLA's
        cost analysis counts them for a graph fused into one kernel."""
        return cost_of(self.jaxpr)

    @property
    def input_shardings(self) -> tuple:
        """One single-device sharding per flat argument, as (args, kwargs)."""
        sharding = devices.SingleDeviceSharding(devices.devices()[0])
        if self.args_info is None:
            return tuple(sharding for _ in self.jaxpr.jaxpr.invars)
        leaves, tree = tree_flatten(self.args_info, is_leaf=lambda x: isinstance(x, ArgInfo))
        return tree_unflatten(tree, [sharding] * len(leaves))

    @property
    def output_shardings(self) -> Any:
        """One single-device sharding per output, in the outputs' tree."""
        sharding = devices.SingleDeviceSharding(devices.devices()[0])
        return tree_unflatten(self._out_tree, [sharding] * len(self.jaxpr.out_avals))

    @property
    def tier(self) -> str:
        """tinyxla only: ``"base"`` or ``"upper"``, the CPU compiler tier now running the
        fused kernels (``"eager"`` for a function without a graph lowering)."""
        return self._executable.tier

    @property
    def codegen_source(self) -> str:
        """tinyxla only: the C source the upper tier generated for this graph."""
        return self._executable.codegen_source

    @property
    def codegen_status(self) -> str:
        """tinyxla only: the upper tier's build status (see ``TINYXLA_CODEGEN``)."""
        return self._executable.codegen_status

    def wait_codegen(self) -> None:
        """tinyxla only: blocks until the upper tier's build of this graph has finished."""
        self._executable.wait_codegen()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, _ = tree_flatten((args, kwargs))
        return tree_unflatten(self._out_tree, self._executable(leaves))
