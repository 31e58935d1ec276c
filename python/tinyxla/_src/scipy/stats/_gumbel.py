"""What ``gumbel_l`` and ``gumbel_r`` share: NaN for a nonpositive scale."""
from __future__ import annotations

from typing import Any

import numpy as np

from tinyxla import numpy as jnp


def where_scale_ok(scale: Any, value: Any) -> Any:
    return jnp.where(scale > 0, value, np.nan)
