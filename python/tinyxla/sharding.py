"""``jax.sharding``: meshes, partition specs and shardings."""
from tinyxla._src.devices import PmapSharding, SingleDeviceSharding
from tinyxla._src.sharded_array import reshard
from tinyxla._src.sharding import (
    AxisType, Mesh, NamedSharding, PartitionSpec, Sharding, get_abstract_mesh, get_mesh,
    set_mesh, use_mesh)

AbstractMesh = Mesh

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec",
           "PmapSharding", "Sharding", "SingleDeviceSharding", "get_abstract_mesh", "get_mesh",
           "reshard", "set_mesh", "use_mesh"]
