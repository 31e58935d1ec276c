"""The CPU's maker, for tests pinned to XLA:CPU results that depend on it: rsqrtps's
estimate (lax.rsqrt, and so JAX's gamma samples) differs between AMD and Intel CPUs."""
import pathlib

import pytest


def cpu_vendor() -> str:
    """``vendor_id`` of /proc/cpuinfo ("AuthenticAMD", "GenuineIntel"), "" when unknown."""
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


# Values pinned from jax 0.10.2 on an AMD CPU that pass through rsqrtps's estimate.
amd_only = pytest.mark.skipif(cpu_vendor() != "AuthenticAMD",
                              reason="pinned from XLA:CPU on an AMD CPU (rsqrtps's estimate)")
