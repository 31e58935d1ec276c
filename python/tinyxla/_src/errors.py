"""JAX's error classes, hierarchy and messages (mirrors ``jax.errors``)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

from tinyxla import _core

_DOCS = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class JAXTypeError(TypeError):
    """Base of the tracer errors that are TypeErrors (``jax.errors.JAXTypeError``)."""


class JAXIndexError(IndexError):
    """``jax.errors.JAXIndexError``."""


class _WithDocs:
    def __init__(self, message: str):
        super().__init__(f"{message}\nSee {_DOCS}{type(self).__name__}")


class ConcretizationTypeError(_WithDocs, JAXTypeError):
    """A concrete value was needed from a traced one (``jax.errors.ConcretizationTypeError``)."""

    def __init__(self, tracer: Any, context: str = ""):
        super().__init__(f"Abstract tracer value encountered where concrete value is expected: "
                         f"{_traced_array(tracer)}\n{context}{_origin(tracer)}\n")


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of a traced array (``jax.errors.TracerBoolConversionError``)."""

    def __init__(self, tracer: Any):
        _WithDocs.__init__(self, f"Attempted boolean conversion of {_traced_array(tracer)}."
                           f"{_origin(tracer)}")


class TracerArrayConversionError(_WithDocs, JAXTypeError):
    """``np.asarray`` of a traced array (``jax.errors.TracerArrayConversionError``)."""

    def __init__(self, tracer: Any):
        super().__init__("The numpy.ndarray conversion method __array__() was called on "
                         f"{_traced_array(tracer)}{_origin(tracer)}")


class TracerIntegerConversionError(_WithDocs, JAXTypeError):
    """``__index__`` of a traced array (``jax.errors.TracerIntegerConversionError``)."""

    def __init__(self, tracer: Any):
        super().__init__(f"The __index__() method was called on {_traced_array(tracer)}"
                         f"{_origin(tracer)}")


class NonConcreteBooleanIndexError(_WithDocs, JAXIndexError):
    """Boolean mask indexing with a traced mask (``jax.errors.NonConcreteBooleanIndexError``)."""

    def __init__(self, tracer: Any):
        super().__init__("Array boolean indices must be concrete; got "
                         f"{_aval_str(tracer)}\n")


class UnexpectedTracerError(_WithDocs, JAXTypeError):
    """A tracer used after its transformation finished (``jax.errors.UnexpectedTracerError``)."""


class KeyReuseError(_WithDocs, JAXTypeError):
    """A PRNG key consumed twice (``jax.errors.KeyReuseError``). tinyxla does not check key
    reuse (JAX's ``jax_debug_key_reuse``), so nothing raises it yet; it exists for
    ``except`` clauses."""


class JaxprTypeError(TypeError):
    """A jaxpr that fails the type checker (``jax.errors.JaxprTypeError``)."""


# An error of the runtime while running a computation (``jax.errors.JaxRuntimeError``), a
# RuntimeError; the C++ runtime raises it, and its ResourceExhaustedError (also a
# MemoryError) when the allocator is exhausted.
JaxRuntimeError = _core.JaxRuntimeError
ResourceExhaustedError = _core.ResourceExhaustedError


class InconclusiveDimensionOperation(Exception):
    """A symbolic-shape comparison without a definite answer
    (``jax.errors.InconclusiveDimensionOperation``); tinyxla has no symbolic shapes."""


class DebugInfo:
    """Where a traced function came from, for error messages (``jax.api_util.debug_info``)."""

    __slots__ = ("traced_for", "func_src_info", "arg_names")

    def __init__(self, traced_for: str, fun: Callable, arg_names: Sequence[str]):
        self.traced_for = traced_for
        self.func_src_info = _fun_source_info(fun)
        self.arg_names = tuple(arg_names)


def _fun_source_info(fun: Callable) -> str:
    name = getattr(fun, "__name__", type(fun).__name__)
    try:
        code = inspect.unwrap(fun).__code__
        return f"{name} at {code.co_filename}:{code.co_firstlineno}"
    except (AttributeError, ValueError):
        return name


def arg_names(fun: Callable, args: Sequence[Any], kwargs: dict) -> list[str]:
    """Names of the flat arguments, as JAX reports them (``x``, ``params['w']``)."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        names = list(bound.arguments)
    except (TypeError, ValueError):
        names = [f"args[{i}]" for i in range(len(args))]
    return names


def _long_dtype(aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _traced_array(tracer: Any) -> str:
    return f"traced array with shape {_long_dtype(tracer.aval)}"


def _aval_str(tracer: Any) -> str:
    return f"{tracer.aval.str_short()}"


def _origin(tracer: Any) -> str:
    """The 'error occurred while tracing' paragraph JAX appends."""
    origin_msg = getattr(tracer, "_origin_msg", None)
    if origin_msg is not None:  # a tracer that describes its own origin (BatchTracer)
        return origin_msg()
    trace = getattr(tracer, "_trace", None)
    info: DebugInfo | None = getattr(trace, "debug_info", None)
    if info is None:
        return ""
    text = (f"\nThe error occurred while tracing the function {info.func_src_info} for "
            f"{info.traced_for}.")
    arg = getattr(tracer, "_arg_name", None)
    deps = getattr(trace, "arg_dependence", None)
    names = deps(tracer) if deps else ([arg] if arg else [])
    if names:
        if len(names) == 1:
            text += (" This concrete value was not available in Python because it depends on "
                     f"the value of the argument {names[0]}.")
        else:
            text += (" This concrete value was not available in Python because it depends on "
                     f"the values of the arguments {', '.join(names[:-1])} and {names[-1]}.")
    return text


def unexpected_tracer_error(tracer: Any) -> UnexpectedTracerError:
    trace = getattr(tracer, "_trace", None)
    info: DebugInfo | None = getattr(trace, "debug_info", None)
    where = (f"\nThe function being traced when the value leaked was {info.func_src_info} "
             f"traced for {info.traced_for}.") if info else ""
    return UnexpectedTracerError(
        "Encountered an unexpected tracer. A function transformed by JAX had a side effect, "
        f"allowing for a reference to an intermediate value with type {_long_dtype(tracer.aval)} "
        f"wrapped in a {type(tracer).__name__} to escape the scope of the transformation.\n"
        "JAX transformations require that functions explicitly return their outputs, and "
        "disallow saving intermediate values to global state." + where +
        "\nTo catch the leak earlier, try setting the environment variable "
        "JAX_CHECK_TRACER_LEAKS or using the `jax.checking_leaks` context manager.")
