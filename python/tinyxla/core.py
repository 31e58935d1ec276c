"""``jax.core``: the public names of the tracing core."""
from tinyxla._src.core import ShapedArray, Trace, Tracer, eval_jaxpr

__all__ = ["ShapedArray", "Trace", "Tracer", "eval_jaxpr"]
