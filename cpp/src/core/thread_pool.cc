// parallel_for over a persistent pool with dynamic chunking.
#include "thread_pool.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "after_fork.h"
#include "profiler.h"
#include <vector>

namespace tinyxla {
namespace {

constexpr unsigned kFtz = 0x8000;  // MXCSR bits
constexpr unsigned kDaz = 0x40;
constexpr unsigned kFtzDaz = kFtz | kDaz;
// How long an idle worker, or a caller waiting for its last chunk, busy-waits before it
// sleeps. On this machine kind (a VM) waking a sleeping thread on an idle core costs tens
// of microseconds, which made splitting a 50 us product over two cores no faster; work
// handed out within this window starts at once.
constexpr auto kSpin = std::chrono::microseconds(100);

// Workers busy-waiting for work: they count as running in /proc/loadavg but give their
// core up to a job at once, so core_idle does not count them.
std::atomic<int> spinning_workers{0};
// Threads running a device stream's task (ScopedDeviceBusy), and stream threads awake
// without one.
std::atomic<int> busy_devices{0};
std::atomic<int> awake_streams{0};

template <typename Ready>
bool spin_until(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    _mm_pause();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

// The cores this process may run on (its affinity mask, as a container's cpuset or
// taskset sets it), not every core of the machine.
unsigned usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return unsigned(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunk, num_chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable cv;

  // Runs chunks until none is left; returns after the last one this thread took. A worker
  // (`cores` > 0) also stops once every core has a busy device: a device that started
  // after this job was handed out needs the core (pmap's devices ran 25-40% slower).
  // Returns whether it stopped with chunks left.
  bool work(int cores = 0) {
    for (;;) {
      if (cores > 0 && busy_devices.load(std::memory_order_relaxed) >= cores)
        return next.load(std::memory_order_relaxed) < num_chunks;
      int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks) return false;
      int64_t b = c * chunk, e = std::min(n, b + chunk);
      (*fn)(b, e);
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();
      }
    }
  }
};

class Pool {
 public:
  Pool() : size_(int(std::max(1u, usable_cores()))) { start_workers(); }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      stop_flag_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t->join();
  }
  int size() const { return size_; }

  // fork(): the lock is held across it, so the child copies a consistent queue; the child
  // has none of the workers and starts new ones at its first parallel_for.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork(bool in_child) {
    if (in_child) {
      forked_ = true;
      spinning_workers.store(0, std::memory_order_relaxed);
      busy_devices.store(0, std::memory_order_relaxed);
      awake_streams.store(0, std::memory_order_relaxed);
    }
    mu_.unlock();
  }

  void run(const std::function<void(int64_t, int64_t)>& fn, int64_t n, int64_t grain) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (forked_) restart_locked();
    }
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    // About 4 chunks per thread balances load without much hand-out traffic.
    int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t(size_) * 4);
    job->chunk = (n + chunks - 1) / chunks;
    job->num_chunks = (n + job->chunk - 1) / job->chunk;
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back(job);
      queued_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    job->work();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find(jobs_.begin(), jobs_.end(), job);
      if (it != jobs_.end()) {
        jobs_.erase(it);
        queued_.fetch_sub(1, std::memory_order_relaxed);
        if (parked_ > 0) cv_.notify_all();
      }
    }
    if (spin_until([&] { return job->done.load(std::memory_order_acquire) == job->num_chunks; }))
      return;
    std::unique_lock<std::mutex> lock(job->mu);
    job->cv.wait(lock, [&] { return job->done.load(std::memory_order_acquire) == job->num_chunks; });
  }

 private:
  void start_workers() {
    for (int i = 1; i < size_; ++i)
      workers_.push_back(std::make_unique<std::thread>([this, i] { loop(i); }));
  }

  // In a forked child: the parent's workers do not exist here, so their std::thread
  // objects must never be joined or destroyed (that would terminate); they are leaked. The
  // parent's jobs belong to callers that do not exist here either.
  void restart_locked() {
    for (auto& t : workers_) t.release();
    workers_.clear();
    remake_in_child(cv_);
    jobs_.clear();
    queued_.store(0, std::memory_order_relaxed);
    parked_ = 0;
    forked_ = false;
    start_workers();
  }

  void loop(int index) {
    set_flush_denormals_for_thread();
    profiler::set_thread_name("pool worker " + std::to_string(index));
    for (;;) {
      std::shared_ptr<Job> job;
      spinning_workers.fetch_add(1, std::memory_order_relaxed);
      // A core for every busy device: no work is coming, and the spin would take a core
      // a device needs (pmap's devices each ran up to 30% slower).
      spin_until([&] {
        return queued_.load(std::memory_order_acquire) > 0 || stop_flag_ ||
               busy_devices.load(std::memory_order_relaxed) >= size_;
      });
      spinning_workers.fetch_sub(1, std::memory_order_relaxed);
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        job = jobs_.front();
        // A job whose chunks are all handed out leaves the queue.
        if (job->next.load(std::memory_order_relaxed) >= job->num_chunks) {
          jobs_.pop_front();
          queued_.fetch_sub(1, std::memory_order_relaxed);
          continue;
        }
      }
      bool left;
      {
        profiler::Span span("parallel_for chunks", "pool");
        left = job->work(size_);
      }
      if (left) {
        // Left to the devices: sleep until the caller has finished the job and dropped it.
        std::unique_lock<std::mutex> lock(mu_);
        ++parked_;
        cv_.wait(lock, [&] { return stop_ || jobs_.empty() || jobs_.front() != job; });
        --parked_;
      }
    }
  }

  std::vector<std::unique_ptr<std::thread>> workers_;
  std::deque<std::shared_ptr<Job>> jobs_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> stop_flag_{false};  // stop_, readable while spinning
  std::atomic<int> queued_{0};          // jobs_.size(), readable while spinning
  int parked_ = 0;                      // workers waiting for a job they left to be dropped
  bool forked_ = false;                 // this is a forked child, and workers_ the parent's
  const int size_;
};

Pool& pool() {
  static Pool* p = [] {
    auto* made = new Pool();  // never destroyed: threads may outlive static teardown
    pthread_atfork([] { pool().lock_for_fork(); }, [] { pool().unlock_after_fork(false); },
                   [] { pool().unlock_after_fork(true); });
    return made;
  }();
  return *p;
}

// Threads runnable on the machine now, system-wide, the caller included (the 4th field of
// /proc/loadavg: running/total), less our own threads that hold no core for long: spinning
// workers, and stream threads awake without a task (woken for one a waiting thread took).
// -1 without /proc.
int64_t running_threads() {
  static const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t len = ::pread(fd, buf, sizeof(buf) - 1, 0);
  if (len <= 0) return -1;
  buf[len] = 0;
  // "0.50 0.40 0.30 2/345 6789": skip three fields, read the running count.
  const char* p = buf;
  for (int field = 0; field < 3 && p; ++field) {
    p = std::strchr(p, ' ');
    if (p) ++p;
  }
  if (!p) return -1;
  const int transient = spinning_workers.load(std::memory_order_relaxed) +
                        awake_streams.load(std::memory_order_relaxed);
  return std::atol(p) - transient;
}

// Whether some core is idle now. Waking a worker when none is gets the calling thread
// switched out (its core is where the scheduler puts the woken worker), and on a busy
// machine another process then holds that core for a time slice: measured 3-10x slower
// than the caller running alone. Read at most once a millisecond; without /proc, assume an
// idle core.
bool core_idle(int cores) {
  static std::atomic<int64_t> checked_ns{0};  // 0: never
  static std::atomic<bool> idle{true};
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  const int64_t last = checked_ns.load(std::memory_order_relaxed);
  if (last != 0 && now - last < 1000000) return idle.load(std::memory_order_relaxed);
  checked_ns.store(now, std::memory_order_relaxed);
  const int64_t running = running_threads();
  const bool now_idle = running < cores;
  idle.store(now_idle, std::memory_order_relaxed);
  return now_idle;
}

}  // namespace

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                  bool long_chunks) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  // Every core already runs a device's task: helpers would only oversubscribe them. Other
  // busy cores are skipped too, unless each chunk is long enough to be worth a wake-up.
  if (n <= grain || pool().size() == 1 ||
      pool().size() <= busy_devices.load(std::memory_order_relaxed) ||
      (!long_chunks && !core_idle(pool().size()))) {
    fn(0, n);
    return;
  }
  pool().run(fn, n, grain);
}

int pool_size() { return pool().size(); }

int free_threads(int extra_running) {
  const int cores = pool().size();
  const int others = busy_devices.load(std::memory_order_relaxed) - 1;
  const int64_t running = running_threads();
  if (running < 0) return std::max(1, cores - std::max(0, others));
  const int64_t idle = int64_t(cores) - (running - extra_running);
  return int(std::clamp<int64_t>(1 + idle, 1, std::max(1, cores - std::max(0, others))));
}

void add_awake_stream(int delta) { awake_streams.fetch_add(delta, std::memory_order_relaxed); }

ScopedDeviceBusy::ScopedDeviceBusy() { busy_devices.fetch_add(1, std::memory_order_relaxed); }
ScopedDeviceBusy::~ScopedDeviceBusy() { busy_devices.fetch_sub(1, std::memory_order_relaxed); }

ScopedFlushDenormals::ScopedFlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFtzDaz); }
ScopedFlushDenormals::~ScopedFlushDenormals() { _mm_setcsr(saved_); }
void set_flush_denormals_for_thread() { _mm_setcsr(_mm_getcsr() | kFtzDaz); }
bool denormals_are_zero() { return (_mm_getcsr() & kDaz) != 0; }

}  // namespace tinyxla
