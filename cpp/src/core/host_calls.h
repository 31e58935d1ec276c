// Calls from a running graph back into the host language (Python): the host_callback op
// (ops/host_callback.cc) calls through the handler that the binding installs, naming the
// host function by the id the binding's table gave it. The core never sees the host's
// objects, so a device thread touches them only inside the handler.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/array.h"

namespace tinyxla {

// Calls host function `callable` on ready `args`, writing `results` (dense arrays of the
// declared types); throws an Error (op name first) when the function fails or is gone.
using HostCallHandler = void (*)(int64_t callable, const std::vector<Array>& args,
                                 const std::vector<Array>& results);

// Installed once by the binding; nullptr uninstalls.
void set_host_call_handler(HostCallHandler handler);
// Runs `callable` through the handler, marking this thread as inside a host call.
void call_host(int64_t callable, const std::vector<Array>& args, const std::vector<Array>& results);
// Whether this thread is inside call_host: work it submits to a device then runs at once
// on it (the device's stream is busy with the very task that made the call).
bool in_host_call();

}  // namespace tinyxla
