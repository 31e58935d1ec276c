// Calls from a running graph back into the host language (Python): the host_callback op
// (ops/host_callback.cc) calls through the handler that the binding installs, naming the
// host function by the id the binding's table gave it. The core never sees the host's
// objects, so a device thread touches them only inside the handler.
//
// A call without results made while a DeferredHostCalls lives on the calling thread may be
// left to the host-call thread, which runs such calls in the order they were made while
// the graph goes on (a debug print in a loop then costs the device a copy of its operands,
// not a round trip through the host's interpreter). Executable runs open one, and finish()
// waits for the calls before the run's results become ready, so to the host it looks as if
// every call was made inline; a call with results first waits for the deferred ones.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "tinyxla/array.h"

namespace tinyxla {

// A one-element operand carried by value (from generated code: no Array to allocate on
// the device thread and free on the host-call thread).
struct HostScalar {
  DType dtype = DType::Bool;
  alignas(16) unsigned char bytes[16];
};

// One call left to the host-call thread: `error` receives what it threw.
struct DeferredHostCall {
  static constexpr int kMaxScalars = 4;
  int64_t callable = 0;
  std::vector<Array> args;  // ready, and no longer written by anyone
  // Or, when num_scalars >= 0, that many one-element operands of device `device`.
  int num_scalars = -1;
  int device = 0;
  HostScalar scalars[kMaxScalars];
  const void* run = nullptr;  // the calls of one executable run share it
  std::exception_ptr error;
  bool skip = false;  // an earlier call of the same run failed: not called
};

struct HostCallHandler {
  // Calls host function `callable` on ready `args`, writing `results` (dense arrays of the
  // declared types); throws an Error (op name first) when the function fails or is gone.
  void (*call)(int64_t callable, const std::vector<Array>& args,
               const std::vector<Array>& results) = nullptr;
  // Whether this thread may wait for the host-call thread (false on a thread that holds
  // the host's interpreter lock, which the host-call thread needs).
  bool (*may_defer)() = nullptr;
  // Runs `calls` in order on the host-call thread, storing each one's error in it; skips
  // (and marks skip) those marked skip and those after a failed call of the same run.
  void (*call_deferred)(std::vector<DeferredHostCall>& calls) = nullptr;
};

// Installed once by the binding; a handler without `call` uninstalls.
void set_host_call_handler(const HostCallHandler& handler);
// Runs `callable` through the handler, marking this thread as inside a host call; the
// calls this thread deferred run first (and the first error among them is thrown).
void call_host(int64_t callable, const std::vector<Array>& args, const std::vector<Array>& results);
// Whether this thread is inside call_host (or is the host-call thread running calls):
// work it submits to a device then runs at once on it (the device's stream is busy with
// the very task that made the call).
bool in_host_call();

// Whether this thread may leave host calls to the host-call thread: it has a
// DeferredHostCalls, is not itself inside a host call, and may wait for that thread.
bool may_defer_host_calls();
// Leaves the call of `callable` on `args` to the host-call thread (may_defer_host_calls()
// must hold). `args` must not change afterwards: the caller passes copies of values it
// will reuse.
void defer_host_call(int64_t callable, std::vector<Array> args);
// The same for n <= DeferredHostCall::kMaxScalars one-element operands: `data[k]` holds
// one item of dtype `dtypes[k]` on `device`.
void defer_host_call(int64_t callable, int64_t n, const void* const* data, const int64_t* dtypes,
                     int device);

// The scope in which this thread's host calls may be deferred (one per executable run;
// nested ones are separate).
class DeferredHostCalls {
 public:
  DeferredHostCalls();
  ~DeferredHostCalls();  // waits for the calls, dropping their errors
  DeferredHostCalls(const DeferredHostCalls&) = delete;
  DeferredHostCalls& operator=(const DeferredHostCalls&) = delete;
  // Waits until every call deferred so far has run; throws the first error among them.
  void finish();

  struct Pending;

 private:
  std::shared_ptr<Pending> pending_;
  DeferredHostCalls* outer_;
};

}  // namespace tinyxla
