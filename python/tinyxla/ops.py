"""``jax.ops``: the segment reductions."""
from tinyxla._src.segment import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401
