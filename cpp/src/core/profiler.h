// The profiler's recorder (jax.profiler's trace): timed spans kept in per-thread buffers.
// Off, a hook costs one relaxed atomic load. On, a span is two clock reads and a store into
// the calling thread's own buffer: no lock, no allocation but a fresh chunk every 1024
// spans, no Python. stop() collects every thread's spans of the session.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tinyxla::profiler {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

uint64_t now_ns();  // CLOCK_MONOTONIC, the clock of Python's time.monotonic_ns()

// A copy of `s` that lives as long as the process (span names are kept as pointers).
const char* intern(const std::string& s);

// Records a finished span on the calling thread. `name`, `cat` and `detail` must outlive
// the trace: string literals or intern()ed.
void record(const char* name, const char* cat, uint64_t t0, uint64_t t1,
            const char* detail = nullptr);
// Records a span with names of any lifetime (Python's annotations), under a lock.
void record_copy(const std::string& name, const std::string& cat, uint64_t t0, uint64_t t1,
                 const std::string& detail);

// Names the calling thread in traces ("device 0 stream", "pool worker 2").
void set_thread_name(const std::string& name);

// Times a scope when the profiler is on.
class Span {
 public:
  Span(const char* name, const char* cat, const char* detail = nullptr)
      : name_(name), cat_(cat), detail_(detail), t0_(on() ? now_ns() : 0) {}
  ~Span() {
    if (t0_ != 0) record(name_, cat_, t0_, now_ns(), detail_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

 private:
  const char* name_;
  const char* cat_;
  const char* detail_;
  uint64_t t0_;
};

struct Event {
  std::string name, cat, detail;
  uint64_t t0, t1;
  int tid;
};
struct Thread {
  int tid;
  std::string name;
};
struct Trace {
  std::vector<Event> events;
  std::vector<Thread> threads;
};

// Starts a session (dropping the spans of the previous one); false if one is running.
bool start();
// Ends the session and returns its spans; false if none is running.
bool stop(Trace* trace);

}  // namespace tinyxla::profiler
