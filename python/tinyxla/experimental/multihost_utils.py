"""``jax.experimental.multihost_utils``: host-level collectives between processes."""
from tinyxla._src.multihost_utils import (
    assert_equal, broadcast_one_to_all, process_allgather, sync_global_devices)

__all__ = ["assert_equal", "broadcast_one_to_all", "process_allgather", "sync_global_devices"]
