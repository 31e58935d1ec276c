"""``jax.typing``: the annotations ``ArrayLike`` and ``DTypeLike``."""
from tinyxla._src.typing import ArrayLike, DTypeLike  # noqa: F401
