"""``jax.stages``: the stages of a jitted function (``jit(f).trace/.lower/.compile``)."""
from tinyxla._src.stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "Lowered", "Traced"]
