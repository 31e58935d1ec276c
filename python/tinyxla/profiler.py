"""``jax.profiler``: traces for the Perfetto UI and TensorBoard, annotations, and the
device memory profile. See ``tinyxla._src.profiler`` for where tinyxla differs."""
from tinyxla._src.profiler import (
    ProfileOptions, StepTraceAnnotation, TraceAnnotation, annotate_function,
    device_memory_profile, save_device_memory_profile, start_trace, stop_trace, trace)

__all__ = ["ProfileOptions", "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "save_device_memory_profile", "start_trace", "stop_trace",
           "trace"]
