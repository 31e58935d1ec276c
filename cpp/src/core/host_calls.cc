// The host-call handler, the per-thread "inside a host call" mark, and the host-call thread
// that runs deferred calls in order.
#include "host_calls.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "after_fork.h"
#include "profiler.h"
#include "tinyxla/error.h"

namespace tinyxla {

struct DeferredHostCalls::Pending {
  std::mutex m;
  std::condition_variable cv;
  int64_t posted = 0, done = 0;  // under m
  bool waiting = false;          // the owner sleeps in finish()
  std::exception_ptr error;      // the first failure, under m
  std::atomic<bool> failed{false};

  void complete(const std::exception_ptr& err) {
    std::lock_guard<std::mutex> lock(m);
    if (err && !error) {
      error = err;
      failed.store(true, std::memory_order_relaxed);
    }
    ++done;
    if (waiting && done == posted) cv.notify_all();
  }
};

namespace {
std::atomic<const HostCallHandler*> handler{nullptr};
thread_local int host_call_depth = 0;
thread_local DeferredHostCalls* current_scope = nullptr;
thread_local std::shared_ptr<DeferredHostCalls::Pending>* current_pending = nullptr;

struct HostCallScope {
  HostCallScope() { ++host_call_depth; }
  ~HostCallScope() { --host_call_depth; }
};

// Spins before sleeping: the calls of a loop arrive microseconds apart, and waking a
// sleeping thread costs tens of microseconds in a VM.
constexpr int kSpinRounds = 2000;

// The thread that runs deferred calls: one for the process, started by the first deferred
// call (again in a forked child), never stopped (it may be busy in the host at exit, as
// the device threads may).
class HostCallThread {
 public:
  struct Item {
    DeferredHostCall call;
    std::shared_ptr<DeferredHostCalls::Pending> owner;
  };

  static HostCallThread& get() {
    static auto* t = new HostCallThread();  // outlives the host's interpreter
    return *t;
  }

  void post(Item&& item) {
    std::unique_lock<std::mutex> lock(m_);
    if (thread_pid_ != getpid()) {  // first use, or a forked child, which has no copy of it
      if (thread_pid_ != 0) remake_in_child(cv_);
      thread_pid_ = getpid();
      sleeping_ = false;
      std::thread([this] { loop(); }).detach();
    }
    queue_.push_back(std::move(item));
    queued_.store(true, std::memory_order_release);
    if (sleeping_) {
      sleeping_ = false;
      lock.unlock();
      cv_.notify_one();
    }
  }

 private:
  HostCallThread() = default;

  void loop() {
    profiler::set_thread_name("host callbacks");
    std::vector<Item> batch;
    std::vector<DeferredHostCall> calls;
    for (;;) {
      for (int k = 0; k < kSpinRounds && !queued_.load(std::memory_order_acquire); ++k)
        std::this_thread::yield();
      {
        std::unique_lock<std::mutex> lock(m_);
        while (queue_.empty()) {
          sleeping_ = true;
          cv_.wait(lock);
        }
        batch.swap(queue_);
        queued_.store(false, std::memory_order_relaxed);
      }
      calls.clear();
      for (Item& it : batch) {
        it.call.skip = it.owner->failed.load(std::memory_order_relaxed);
        calls.push_back(std::move(it.call));
      }
      run(calls);
      for (size_t k = 0; k < batch.size(); ++k) batch[k].owner->complete(calls[k].error);
      batch.clear();
    }
  }

  static void run(std::vector<DeferredHostCall>& calls) {
    const HostCallHandler* h = handler.load(std::memory_order_acquire);
    if (!h || !h->call_deferred) {
      for (DeferredHostCall& c : calls)
        c.error = std::make_exception_ptr(
            Error(ErrorKind::Internal, "[host_callback] no host-call handler is installed"));
      return;
    }
    profiler::Span span("host callbacks", "host_callback");
    HostCallScope scope;
    h->call_deferred(calls);
  }

  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Item> queue_;
  std::atomic<bool> queued_{false};
  bool sleeping_ = false;
  pid_t thread_pid_ = 0;  // the process whose thread serves the queue
};

}  // namespace

void set_host_call_handler(const HostCallHandler& h) {
  handler.store(h.call ? new HostCallHandler(h) : nullptr, std::memory_order_release);  // kept
}

void call_host(int64_t callable, const std::vector<Array>& args, const std::vector<Array>& results) {
  const HostCallHandler* h = handler.load(std::memory_order_acquire);
  if (!h) throw_error(ErrorKind::Internal, "host_callback", "no host-call handler is installed");
  if (current_scope) current_scope->finish();  // the calls made before this one run first
  HostCallScope scope;
  h->call(callable, args, results);
}

bool in_host_call() { return host_call_depth > 0; }

bool may_defer_host_calls() {
  if (!current_pending || host_call_depth > 0) return false;
  const HostCallHandler* h = handler.load(std::memory_order_acquire);
  return h && h->call_deferred && (!h->may_defer || h->may_defer());
}

namespace {
void post(DeferredHostCall&& call) {
  std::shared_ptr<DeferredHostCalls::Pending>& p = *current_pending;
  {
    std::lock_guard<std::mutex> lock(p->m);
    ++p->posted;
  }
  call.run = p.get();
  HostCallThread::get().post({std::move(call), p});
}
}  // namespace

void defer_host_call(int64_t callable, std::vector<Array> args) {
  DeferredHostCall call;
  call.callable = callable;
  call.args = std::move(args);
  post(std::move(call));
}

void defer_host_call(int64_t callable, int64_t n, const void* const* data, const int64_t* dtypes,
                     int device) {
  DeferredHostCall call;
  call.callable = callable;
  call.num_scalars = int(n);
  call.device = device;
  for (int64_t k = 0; k < n; ++k) {
    HostScalar& s = call.scalars[k];
    s.dtype = DType(dtypes[k]);
    std::memcpy(s.bytes, data[k], itemsize(s.dtype));
  }
  post(std::move(call));
}

DeferredHostCalls::DeferredHostCalls()
    : pending_(std::make_shared<Pending>()), outer_(current_scope) {
  current_scope = this;
  current_pending = &pending_;
}

DeferredHostCalls::~DeferredHostCalls() {
  try {
    finish();
  } catch (...) {  // the run has failed already, or nobody asked
  }
  current_scope = outer_;
  current_pending = outer_ ? &outer_->pending_ : nullptr;
}

void DeferredHostCalls::finish() {
  Pending& p = *pending_;
  std::unique_lock<std::mutex> lock(p.m);
  if (p.done != p.posted) {
    p.waiting = true;
    p.cv.wait(lock, [&] { return p.done == p.posted; });
    p.waiting = false;
  }
  if (p.error) {
    std::exception_ptr e = std::move(p.error);
    p.error = nullptr;
    p.failed.store(false, std::memory_order_relaxed);
    std::rethrow_exception(e);
  }
}

}  // namespace tinyxla
