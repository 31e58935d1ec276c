"""Control flow as primitives holding jaxprs: ``cond``/``switch``, ``while_loop``,
``fori_loop``, ``scan``, ``map`` and ``associative_scan`` (``jax.lax``'s)."""
from tinyxla._src.lax.control_flow.associative_scan import associative_scan  # noqa: F401
from tinyxla._src.lax.control_flow.conditionals import cond, cond_p, switch  # noqa: F401
from tinyxla._src.lax.control_flow.loops import (  # noqa: F401
    fori_loop, map, scan, scan_p, while_loop, while_p)
