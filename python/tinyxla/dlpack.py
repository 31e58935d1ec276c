"""tinyxla.dlpack: JAX's ``jax.dlpack`` (DLPack exchange with numpy, torch and others)."""
from tinyxla._src.numpy.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
