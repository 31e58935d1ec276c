// The host-call handler and the per-thread "inside a host call" mark.
#include "host_calls.h"

#include <atomic>

#include "tinyxla/error.h"

namespace tinyxla {
namespace {
std::atomic<HostCallHandler> handler{nullptr};
thread_local int host_call_depth = 0;

struct HostCallScope {
  HostCallScope() { ++host_call_depth; }
  ~HostCallScope() { --host_call_depth; }
};
}  // namespace

void set_host_call_handler(HostCallHandler h) { handler.store(h, std::memory_order_release); }

void call_host(int64_t callable, const std::vector<Array>& args, const std::vector<Array>& results) {
  HostCallHandler h = handler.load(std::memory_order_acquire);
  if (!h) throw_error(ErrorKind::Internal, "host_callback", "no host-call handler is installed");
  HostCallScope scope;
  h(callable, args, results);
}

bool in_host_call() { return host_call_depth > 0; }

}  // namespace tinyxla
