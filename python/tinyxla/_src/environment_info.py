"""``jax.print_environment_info``: the versions and devices to quote in a bug report."""
from __future__ import annotations

import importlib.metadata
import platform
import sys

import numpy as np

from tinyxla._src import devices


def print_environment_info(return_string: bool = False) -> str | None:
    """Prints (or returns) tinyxla's, numpy's and Python's versions, the devices and the
    platform (``jax.print_environment_info``; tinyxla's line replaces jax's and jaxlib's)."""
    info = "\n".join([
        f"tinyxla: {importlib.metadata.version('tinyxla')}",
        f"numpy:   {np.__version__}",
        f"python:  {sys.version.replace(chr(10), ' ')}",
        f"device info: {devices.default_backend()}-{devices.device_count()}, "
        f"{devices.local_device_count()} local devices",
        f"process_count: {devices.process_count()}",
        f"platform: {platform.uname()}",
        ""])
    if return_string:
        return info
    print(info)
    return None
