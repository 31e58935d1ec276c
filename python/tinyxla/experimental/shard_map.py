"""``jax.experimental.shard_map``: the older home of ``jax.shard_map``."""
from tinyxla._src.shard_map import shard_map

__all__ = ["shard_map"]
