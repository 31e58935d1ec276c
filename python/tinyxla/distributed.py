"""``jax.distributed``: several processes over MPI (see ``_src/distributed.py``)."""
from tinyxla._src.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
