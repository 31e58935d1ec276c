"""tinyxla: a JAX-compatible array runtime. ``import tinyxla as jax`` gives the ``jax`` namespace.

What is here so far: ``Array``, the ``numpy``, ``lax``, ``random``, ``tree_util``, ``tree``,
``errors``, ``typing``, ``ops``, ``flatten_util``, ``nn`` and ``scipy`` modules, ``config``
and its context managers (``enable_x64`` ...), ``dtypes``, the device functions,
``device_put``/``device_get``, ``block_until_ready``, ``jit``, ``make_jaxpr``,
``eval_shape``, ``typeof``, the autodiff transforms (with ``custom_gradient`` and
``linear_transpose``), ``vmap`` and ``pmap``.
"""
import ctypes as _ctypes
import os as _os


def _preload_openblas() -> None:
    # The extension links against the scipy-openblas32 wheel's library; loading it first,
    # globally, lets the dynamic linker resolve that dependency from the wheel's directory.
    # OpenBLAS's threads busy-wait 2^28 cycles (about 70 ms) after a threaded call before
    # they sleep, taking a core from whatever our pool runs next: the GP gradient's products
    # after its cholesky ran 1.7x slower. It reads OPENBLAS_THREAD_TIMEOUT (log2 of the
    # cycles) once, when loaded: 2^22 (about a millisecond) still spans the steps of one
    # factorization (cpu/linalg.cc's kBlasSpin assumes it). Set for the load only, unless
    # the user chose a value.
    chosen = "OPENBLAS_THREAD_TIMEOUT" in _os.environ
    if not chosen:
        _os.environ["OPENBLAS_THREAD_TIMEOUT"] = "22"
    try:
        import scipy_openblas32  # loads the library
        _ctypes.CDLL(_os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so"),
                     mode=_ctypes.RTLD_GLOBAL)
    finally:
        if not chosen:
            del _os.environ["OPENBLAS_THREAD_TIMEOUT"]


_preload_openblas()

from tinyxla import _core  # noqa: E402
from tinyxla._src import dtypes  # noqa: E402
from tinyxla._src.array import Array, live_arrays  # noqa: E402
from tinyxla._src.config import (  # noqa: E402
    check_tracer_leaks, checking_leaks, config, debug_infs, debug_nans, default_device,
    default_matmul_precision,
    enable_checks, enable_x64, explain_cache_misses, log_compiles, numpy_dtype_promotion,
    numpy_rank_promotion, threefry_partitionable, transfer_guard, transfer_guard_device_to_device,
    transfer_guard_device_to_host, transfer_guard_host_to_device)
from tinyxla._src.devices import (  # noqa: E402
    CpuDevice as Device, default_backend, device_count, devices, local_device_count,
    local_devices, process_count, process_index, process_indices)
from tinyxla._src.api import (  # noqa: E402
    ShapeDtypeStruct, block_until_ready, clear_caches, device_get, device_put, disable_jit,
    eval_shape, make_jaxpr, typeof)
from tinyxla._src.sharded_jit import jit  # noqa: E402
from tinyxla._src.compile_time_eval import ensure_compile_time_eval  # noqa: E402
from tinyxla._src.custom_gradient import custom_gradient  # noqa: E402
from tinyxla._src.dtypes import float0  # noqa: E402
from tinyxla._src.environment_info import print_environment_info  # noqa: E402
from tinyxla._src.linear_transpose import linear_transpose  # noqa: E402
from tinyxla._src.name_scope import named_call, named_scope  # noqa: E402
from tinyxla._src.autodiff import (  # noqa: E402
    grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize, value_and_grad, vjp)
from tinyxla._src.checkpoint import checkpoint, remat  # noqa: E402
from tinyxla._src.custom_derivatives import closure_convert, custom_jvp, custom_vjp  # noqa: E402
from tinyxla._src.vmap import vmap  # noqa: E402
from tinyxla._src.callback import effects_barrier, pure_callback  # noqa: E402
from tinyxla._src.pmap import pmap  # noqa: E402
from tinyxla._src.shard_map import shard_map  # noqa: E402
from tinyxla._src.sharding import make_mesh, set_mesh  # noqa: E402
from tinyxla._src.sharded_array import (  # noqa: E402
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays, reshard)
from tinyxla import core, errors, lax, numpy, random, tree, tree_util, typing  # noqa: E402
from tinyxla import custom_derivatives, dlpack, flatten_util, nn, ops, scipy, stages  # noqa: E402
from tinyxla import export, profiler, tools  # noqa: E402
from tinyxla import debug, image  # noqa: E402
from tinyxla import distributed, experimental, sharding  # noqa: E402
from tinyxla.experimental import shard_map as _experimental_shard_map  # noqa: E402,F401

__version__ = "0.1.0"


def cmake_dir() -> str:
    """The directory of the installed CMake package, for C++ users:
    ``cmake -Dtinyxla_DIR=$(python -c "import tinyxla; print(tinyxla.cmake_dir())")``."""
    path = _os.path.join(_os.path.dirname(_core.__file__), "lib", "cmake", "tinyxla")
    if not _os.path.isdir(path):
        raise FileNotFoundError(f"tinyxla's CMake package is not installed at {path}")
    return path
