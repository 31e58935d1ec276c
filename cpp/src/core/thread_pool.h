// The one intra-op worker pool shared by all devices, sized to the cores.
#pragma once
#include <cstdint>
#include <functional>

namespace tinyxla {

// Runs fn(begin, end) over [0, n) in chunks of at least `grain` elements. Work is handed
// out dynamically and the calling thread takes chunks too, so a descheduled worker never
// holds the others at a barrier. Small n runs inline, and so does all work while no core is
// idle (other processes or devices busy): a woken worker would only take the caller's core.
// Safe to call from several threads. `long_chunks`: the work runs for milliseconds (large
// gemm blocks, long fused ops), so a worker is woken even with no core idle: the caller's
// lost time slice is small next to the work, and busy-waiting BLAS threads of other libraries
// that count as running then yield to it.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                  bool long_chunks = false);
// Element-ops (a cheap op on one element counts 1, a transcendental 10) of a whole
// elementwise or fused op from which it runs for milliseconds: callers pass long_chunks
// then. A sample of /proc/loadavg taken while a stream thread is being woken says "no idle
// core" at random, and left such ops (16 ms) on one core half the time.
constexpr int64_t kLongOpWork = int64_t(1) << 26;
int pool_size();  // threads that can work at once, the caller included

// Threads a device task may run at once now without oversubscribing the machine: the
// caller plus the cores that are idle (system-wide, read now) and not held by another
// busy device; at least 1. `extra_running`: threads the caller knows to be counted as
// running though they yield at once (another library's spinning workers it woke).
int free_threads(int extra_running = 0);

// Counts stream threads awake without a task (+1 when one is woken, starts or finishes a
// task, -1 when it blocks or starts one). One woken for a task that a waiting thread then
// ran itself is runnable for a moment: parallel_for's check for an idle core does not
// count it.
void add_awake_stream(int delta);

// Marks the calling thread as running a device stream's task (the stream's own thread, or
// a waiting thread that took the task). parallel_for hands work to
// the pool's workers only while some core is free of busy device threads, so N devices
// running at once never put more threads than cores to work.
class ScopedDeviceBusy {
 public:
  ScopedDeviceBusy();
  ~ScopedDeviceBusy();
  ScopedDeviceBusy(const ScopedDeviceBusy&) = delete;
  ScopedDeviceBusy& operator=(const ScopedDeviceBusy&) = delete;
};

// Flush-to-zero / denormals-are-zero, as JAX on CPU; the previous mode is restored on exit.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals();
  ~ScopedFlushDenormals();

 private:
  unsigned saved_;
};
void set_flush_denormals_for_thread();
// Whether the calling thread reads denormal operands as zero (DAZ): float comparisons then
// find denormals equal to zero, and radix keys must agree with them.
bool denormals_are_zero();

}  // namespace tinyxla
