"""``jax.export``: a jitted function exported with its argument and result types, written
to bytes (``Exported.serialize``) and read back (``deserialize``) by Python or by a C++
program linked with libtinyxla alone (``tinyxla/export.h``; ``examples/cpp/run_exported``).

The file is tinyxla's own versioned format (``_core.EXPORT_VERSION``): a header with its
format version and a checksum, JSON metadata (name, trees, avals) and the optimised
graph's text. A file that is not one, one of a newer version, or a truncated or
corrupted one gives a ValueError naming the reason.

Differences from JAX: the module is tinyxla's graph text, not StableHLO (``mlir_module``
returns it); no shape polymorphism, multi-platform lowering or serialized VJPs
(``vjp_order`` must be 0): an exported function is differentiable in the process that
exported it, not once deserialized; no vmap of a call.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from tinyxla import _core
from tinyxla._src import api, compile_log, core, tree_util
from tinyxla._src.array import _DTYPES, _to_array, _wrap
from tinyxla._src.custom_derivatives import _JVP_OF_CUSTOM_VJP
from tinyxla._src.interpreters import ad, lowering
from tinyxla._src.tree_keys import SequenceKey, keystr
from tinyxla._src.tree_util import PyTreeDef, tree_flatten, tree_unflatten


def _tree_to_json(tree: PyTreeDef) -> Any:
    if tree.node is None:
        return "*"
    kids = [_tree_to_json(k) for k in tree_util.treedef_children(tree)]
    if tree.node is tuple:
        return {"tuple": kids}
    if tree.node is list:
        return {"list": kids}
    if tree.node is type(None):
        return {"none": []}
    if tree.node is dict:
        for k in tree.aux:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with string "
                                f"keys. Found key {k} of type {type(k)}.")
        return {"dict": kids, "keys": list(tree.aux)}
    raise ValueError(f"Cannot serialize PyTreeDef containing an unregistered type "
                     f"`{tree.node}`.")


def _tree_from_json(j: Any) -> PyTreeDef:
    if j == "*":
        return PyTreeDef(None, None, ())
    (kind,) = [k for k in j if k != "keys"]
    kids = tuple(_tree_from_json(k) for k in j[kind])
    node = {"tuple": tuple, "list": list, "none": type(None), "dict": dict}[kind]
    return PyTreeDef(node, tuple(j["keys"]) if kind == "dict" else None, kids)


def _aval_to_json(a: core.ShapedArray) -> list:
    return [list(a.shape), a.dtype.name, bool(a.weak_type)]


_DTYPE_NAMES = {d.name: d for d in _DTYPES}


def _aval_from_json(j: list) -> core.ShapedArray:
    return core.ShapedArray(tuple(j[0]), _DTYPE_NAMES[j[1]], j[2])


class Exported:
    """An exported function (``jax.export.Exported``): its name, argument and result trees
    and avals, and the graph. Call it with ``call``; write it with ``serialize``."""

    def __init__(self, fun_name: str, in_tree: PyTreeDef, in_avals: Sequence[core.ShapedArray],
                 out_tree: PyTreeDef, out_avals: Sequence[core.ShapedArray], graph_text: str,
                 calling_convention_version: int = _core.EXPORT_VERSION,
                 jaxpr: core.ClosedJaxpr | None = None):
        self.fun_name = fun_name
        self.in_tree = in_tree
        self.in_avals = tuple(in_avals)
        self.out_tree = out_tree
        self.out_avals = tuple(out_avals)
        self.calling_convention_version = calling_convention_version
        self.platforms = ("cpu",)
        self.nr_devices = 1
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        self.ordered_effects: tuple = ()
        self.unordered_effects: tuple = ()
        self.disabled_safety_checks: tuple = ()
        self.module_kept_var_idx = tuple(range(len(self.in_avals)))
        self.uses_global_constants = False
        self._graph_text = graph_text
        self._graph: Any = None
        self._executable: Any = None
        self._jaxpr = jaxpr  # the traced function, in the exporting process only

    def __str__(self) -> str:
        return f"Exported(fun_name={self.fun_name}, ...)"

    __repr__ = __str__

    def mlir_module(self) -> str:
        """The module's text: tinyxla's graph text (JAX's is StableHLO)."""
        return self._graph_text

    def has_vjp(self) -> bool:
        """Whether calls can be differentiated: in the process that exported it."""
        return self._jaxpr is not None

    def graph(self) -> Any:
        """The parsed graph (a ``_core.Graph``), parsed once."""
        if self._graph is None:
            self._graph = _core.parse_graph(self._graph_text)
        return self._graph

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The exported function as bytes, in tinyxla's versioned format."""
        if vjp_order:
            raise ValueError("tinyxla's export does not serialize VJPs (vjp_order must be 0)")
        metadata = {"fun_name": self.fun_name, "in_tree": _tree_to_json(self.in_tree),
                    "out_tree": _tree_to_json(self.out_tree),
                    "in_avals": [_aval_to_json(a) for a in self.in_avals],
                    "out_avals": [_aval_to_json(a) for a in self.out_avals],
                    "platforms": list(self.platforms), "nr_devices": self.nr_devices}
        return bytearray(_core.serialize_exported(json.dumps(metadata).encode(),
                                                  self._graph_text))

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the exported function (``Exported.call``), checking the arguments' tree
        and types against the exported ones with JAX's messages."""
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self.in_tree:
            now = tree_unflatten(in_tree, [0] * in_tree.num_leaves)
            then = tree_unflatten(self.in_tree, [0] * self.in_tree.num_leaves)
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{self.fun_name}' was exported, but they have the following "
                "structural differences:\n" + "\n".join(
                    f"   - {_args_path(path)} is a {a} in the invocation and a {b} when "
                    f"exported, so {why}.\n"
                    for path, a, b, why in compile_log._tree_differences((), now, then)))
        arrays = [x if isinstance(x, core.Tracer) else _to_array(x) for x in leaves]
        for i, (want, x) in enumerate(zip(self.in_avals, arrays)):
            self._check_argument(i, want, x)
        outs = call_exported_p.bind(*arrays, exported=self)
        return tree_unflatten(self.out_tree, outs)

    def _check_argument(self, i: int, want: core.ShapedArray, x: Any) -> None:
        where = _args_path(tree_util.tree_flatten_with_path(
            tree_unflatten(self.in_tree, [0] * self.in_tree.num_leaves))[0][i][0])
        if len(want.shape) != len(x.shape):
            raise ValueError(f"Rank mismatch for {where}: expected {want.shape} and called "
                             f"with {tuple(x.shape)}")
        if want.dtype != x.dtype:
            raise ValueError(f"Dtype mismatch for {where}: expected {want.dtype} and called "
                             f"with {x.dtype}")
        for d, (a, b) in enumerate(zip(want.shape, x.shape)):
            if a != b:
                raise ValueError(f"Shape mismatch for {where}.shape[{d}] (expected same "
                                 f"constant): expected {want.shape} and called with "
                                 f"{tuple(x.shape)}")

    def _run(self, arrays: Sequence[Any]) -> list[Any]:
        if self._executable is None:
            self._executable = _core.compile(self.graph(), name=f"exported({self.fun_name})")
        handles = [_to_array(a)._h for a in arrays]
        outs = self._executable.run(handles, 0)
        return [_wrap(h, a.weak_type, _DTYPES[lowering.code(a.dtype)])
                for h, a in zip(outs, self.out_avals)]


def _args_path(path: tuple) -> str:
    """JAX's name of a path into (args, kwargs): ``args[0]['y']``, ``kwargs['z']``."""
    head = "args" if path[0] == SequenceKey(0) else "kwargs"
    return head + keystr(tuple(path[1:]))


call_exported_p = core.Primitive("call_exported", multiple_results=True)


@call_exported_p.def_abstract_eval
def _call_exported_abstract_eval(*in_avals: core.ShapedArray, exported: Exported):
    return list(exported.out_avals)


@call_exported_p.def_impl
def _call_exported_impl(*args: Any, exported: Exported) -> list[Any]:
    return exported._run(args)


def _call_exported_lowering(ctx: Any, *args: int, exported: Exported) -> list[int]:
    return _core.inline_graph(ctx.builder, exported.graph(), list(args))


def _call_exported_jvp(primals, tangents, *, exported: Exported):
    """Forward mode is refused: JAX's exported calls are ``custom_vjp`` functions."""
    raise TypeError(_JVP_OF_CUSTOM_VJP)


def _call_exported_linearize(trace, primals, tangents, *, exported: Exported):
    """Reverse mode differentiates through the exported function's jaxpr, which only the
    exporting process has (JAX's error otherwise)."""
    if exported._jaxpr is None:
        raise ValueError("No VJP is available")
    return ad.primitive_linearizations[api.jit_p](trace, primals, tangents,
                                                  jaxpr=exported._jaxpr, name=exported.fun_name)


# No batching rule: vmap over a mapped argument raises JAX's NotImplementedError, as in JAX
# 0.10.2 (whose exported calls have none either, shape-polymorphic or not).
lowering.register_lowering(call_exported_p, _call_exported_lowering)
ad.primitive_jvps[call_exported_p] = _call_exported_jvp
ad.primitive_linearizations[call_exported_p] = _call_exported_linearize


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[Any] = ()) -> Callable[..., Exported]:
    """Exports a jitted function (``jax.export.export``): returns a function that traces
    it at given arguments (arrays or ShapeDtypeStructs) and returns an :class:`Exported`."""
    if not hasattr(fun_jit, "trace") or not hasattr(fun_jit, "lower"):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: "
                         f"{fun_jit}")
    if platforms is not None and tuple(platforms) != ("cpu",):
        raise NotImplementedError(f"tinyxla exports for the 'cpu' platform only, not "
                                  f"{tuple(platforms)}")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        traced = fun_jit.trace(*args, **kwargs)
        executable = lowering.executable_for(traced.jaxpr, traced.name)
        if not isinstance(executable, lowering.GraphExecutable):
            raise ValueError(f"Cannot export {traced.name}: it has no graph lowering "
                             f"({executable.reason})")
        in_leaves, in_tree = tree_flatten(traced.args_info,
                                          is_leaf=lambda x: hasattr(x, "donated"))
        in_avals = [core.ShapedArray(a.shape, a.dtype, a._aval.weak_type) for a in in_leaves]
        return Exported(traced.name, in_tree, in_avals, traced.out_tree,
                        traced.jaxpr.out_avals, executable.text(), jaxpr=traced.jaxpr)

    return do_export


def deserialize(blob: bytes | bytearray) -> Exported:
    """Reads an exported function written by ``Exported.serialize``
    (``jax.export.deserialize``); a ValueError for a file that is not one, is of a newer
    format version, or is truncated or corrupted."""
    try:
        version, metadata, graph = _core.deserialize_exported(bytes(blob))
    except ValueError as e:
        raise ValueError(str(e).removeprefix("[export] ")) from None
    try:
        m = json.loads(metadata)
        return Exported(m["fun_name"], _tree_from_json(m["in_tree"]),
                        [_aval_from_json(a) for a in m["in_avals"]],
                        _tree_from_json(m["out_tree"]),
                        [_aval_from_json(a) for a in m["out_avals"]], graph.text(), version)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"the exported function's metadata is corrupt: {e!r}") from None


minimum_supported_calling_convention_version = 1
maximum_supported_calling_convention_version = _core.EXPORT_VERSION
