// Devices and their streams: one host thread per device runs its tasks in order.
#include "tinyxla/device.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "../core/after_fork.h"
#include "../core/host_calls.h"
#include "../core/profiler.h"
#include "../core/thread_pool.h"
#include "tinyxla/error.h"

namespace tinyxla {

struct Task {
  std::vector<EventPtr> deps;
  std::function<void()> fn;
  int64_t queued_ns = 0;  // when it was queued (steady clock)
};

namespace {
int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

// fork(): a child process has none of the parent's threads. Before the fork each stream
// finishes the task it is running (waiting at most kForkWait: a host callback waiting for
// the forking thread's GIL never would; Python drains the devices first, releasing the
// GIL) and its lock is held across the fork, so the child copies a consistent queue. The
// child starts a new stream thread at the stream's first use, which runs the queued tasks.
// A task still running after kForkWait is lost in the child (its results never arrive).
constexpr auto kForkWait = std::chrono::seconds(2);

class Stream;
namespace {
// Every device's stream: for the fork handlers (Device's stream_ is private), and for a
// waiting thread to see whether other streams have work. Filled before the devices are
// published, then only read.
std::vector<Stream*>& all_streams() {
  static auto* s = new std::vector<Stream*>();  // never destroyed, as the devices
  return *s;
}
}  // namespace

class Stream {
 public:
  explicit Stream(int id) : id_(id), thread_(start()) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      wake_locked();
    }
    thread_->join();
  }

  void lock_for_fork() {
    mu_.lock();
    const auto deadline = std::chrono::steady_clock::now() + kForkWait;
    while (busy_ && std::chrono::steady_clock::now() < deadline) {
      mu_.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      mu_.lock();
    }
  }
  void unlock_after_fork(bool in_child) {
    if (in_child) forked_ = true;
    mu_.unlock();
  }

  // Returns false when the caller should run the task itself (idle stream, small task).
  bool enqueue(std::vector<EventPtr>&& deps, std::function<void()>&& fn, bool may_inline) {
    std::lock_guard<std::mutex> lock(mu_);
    if (forked_) restart_locked();
    if (may_inline && queue_.empty() && !busy_) return false;
    // The time is read only where take_own_core compares it: with other streams.
    const int64_t queued_ns = all_streams().size() > 1 ? steady_ns() : 0;
    queue_.push_back(Task{std::move(deps), std::move(fn), queued_ns});
    unfinished_.fetch_add(1, std::memory_order_relaxed);
    wake_locked();
    return true;
  }

  bool idle() {
    std::lock_guard<std::mutex> lock(mu_);
    if (forked_) restart_locked();
    return queue_.empty() && !busy_;
  }

  void synchronize() {
    std::unique_lock<std::mutex> lock(mu_);
    if (forked_) restart_locked();
    idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

  // Runs queued tasks on the calling thread, in order, while `ev` is pending, no task of
  // this stream is running and the next one's inputs are ready. Not while another stream
  // has work (a pmap's or sharded jit's other devices): the waiting thread then took the
  // core that another stream's thread had been woken on, and the devices ran one after the
  // other (a 2-device sharded jit of a 64x64 chain: 27-100% of calls serial, now 3-8%).
  void help(const Event& ev) {
    for (const Stream* other : all_streams())
      if (other != this && other->unfinished_.load(std::memory_order_relaxed) > 0) return;
    std::unique_lock<std::mutex> lock(mu_);
    if (forked_) restart_locked();
    while (!ev.is_ready() && !busy_ && !queue_.empty()) {
      for (auto& d : queue_.front().deps)
        if (!d->is_ready()) return;
      Task task = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      {
        ScopedFlushDenormals ftz;
        ScopedDeviceBusy busy;  // this thread is the stream's for now
        profiler::Span span("stream task (run by the waiting thread)", "stream");
        task.fn();
      }
      task = Task{};
      lock.lock();
      finish_locked();
    }
  }

 private:
  std::unique_ptr<std::thread> start() {
    return std::make_unique<std::thread>([this] { loop(); });
  }

  // In a forked child: the parent's stream thread does not exist here, so its std::thread
  // must never be joined or destroyed (that would terminate); it is leaked, and a new
  // thread serves the queue copied from the parent.
  void restart_locked() {
    thread_.release();
    remake_in_child(cv_);
    remake_in_child(idle_cv_);
    forked_ = false;
    if (busy_) unfinished_.fetch_sub(1, std::memory_order_relaxed);  // lost with its thread
    busy_ = false;
    sleeping_ = false;
    thread_ = start();
  }

  void loop() {
    set_flush_denormals_for_thread();
    profiler::set_thread_name("device " + std::to_string(id_) + " stream");
    add_awake_stream(1);
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        // busy_: a waiting thread is running one of our tasks (help).
        while (!(stop_ || (!queue_.empty() && !busy_))) {
          sleeping_ = true;
          add_awake_stream(-1);
          cv_.wait(lock);
          if (sleeping_) {  // woken spuriously, not by wake_locked
            sleeping_ = false;
            add_awake_stream(1);
          }
        }
        if (queue_.empty()) {  // stopping
          add_awake_stream(-1);
          return;
        }
        task = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      // Dependencies come from earlier submissions, so waiting here cannot deadlock.
      for (auto& d : task.deps) {
        if (!d->is_ready()) {
          profiler::Span span("wait for inputs", "wait");
          std::mutex m;
          std::condition_variable cv;
          bool done = false;
          d->on_ready([&] {
            std::lock_guard<std::mutex> l(m);
            done = true;
            cv.notify_one();
          });
          std::unique_lock<std::mutex> l(m);
          cv.wait(l, [&] { return done; });
        }
      }
      take_own_core(task.queued_ns);
      {
        ScopedDeviceBusy busy;
        add_awake_stream(-1);  // busy, not idle-awake, while it runs
        profiler::Span span("stream task", "stream");
        task.fn();
        add_awake_stream(1);
      }
      task = Task{};  // drop the inputs it holds before reporting idle
      std::lock_guard<std::mutex> lock(mu_);
      finish_locked();
    }
  }

  // Stream threads placed on one core stay there: the scheduler, finding no idle core when
  // a pmap's call wakes them (the caller still holds the other), queues the second behind
  // the first, and does not pull it over once the caller sleeps; the devices then ran one
  // after the other for tens of calls, some runs for all of them (64x64 chain, 2 devices:
  // 2.9 ms a call against 1.5). So a task that starts on the core where another stream ran
  // a task since this one was queued (it waited behind that one) moves this thread to a core
  // no other stream is on: pinned to it for a moment, the thread migrates at once, and the
  // full mask is restored, so the scheduler may still move it later (pinning for good ran
  // slower whenever the host took one of this VM's cores).
  void take_own_core(int64_t queued_ns) {
#ifdef __linux__
    if (all_streams().size() < 2) return;  // one device: no other stream to wait behind
    const int cpu = sched_getcpu();
    if (cpu < 0) return;
    bool behind = false;
    for (const Stream* other : all_streams())
      behind = behind || (other != this && other->cpu_.load(std::memory_order_relaxed) == cpu &&
                          other->started_ns_.load(std::memory_order_relaxed) >= queued_ns);
    int now_on = cpu;
    cpu_set_t allowed;
    if (behind && sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (c == cpu || !CPU_ISSET(c, &allowed)) continue;
        bool taken = false;
        for (const Stream* other : all_streams())
          taken = taken || (other != this && other->cpu_.load(std::memory_order_relaxed) == c);
        if (taken) continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(c, &one);
        if (sched_setaffinity(0, sizeof(one), &one) == 0) {
          sched_setaffinity(0, sizeof(allowed), &allowed);
          now_on = c;
        }
        break;
      }
    }
    cpu_.store(now_on, std::memory_order_relaxed);
    started_ns_.store(steady_ns(), std::memory_order_relaxed);
#endif
  }

  void finish_locked() {
    busy_ = false;
    unfinished_.fetch_sub(1, std::memory_order_relaxed);
    if (queue_.empty()) idle_cv_.notify_all();
    else wake_locked();  // the stream thread may have skipped these while a helper ran
  }

  // Wakes the stream thread, counting it awake from now: it is runnable before it runs.
  void wake_locked() {
    if (sleeping_) {
      sleeping_ = false;
      add_awake_stream(1);
    }
    cv_.notify_one();
  }

  int id_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Task> queue_;
  std::atomic<int> unfinished_{0};  // tasks queued or running, readable by other streams
  std::atomic<int> cpu_{-1};          // the core its thread ran its last task on
  std::atomic<int64_t> started_ns_{0};  // when that task started
  bool busy_ = false;
  bool stop_ = false;
  bool sleeping_ = false;  // the stream thread is blocked in cv_.wait
  bool forked_ = false;    // this is a forked child, and thread_ is the parent's
  std::unique_ptr<std::thread> thread_;
};

Device::Device(int id) : id_(id), stream_(std::make_unique<Stream>(id)) {
  all_streams().push_back(stream_.get());  // under devices_mu (make_devices)
}
Device::~Device() = default;

void Device::submit(std::vector<EventPtr> deps, std::function<void()> task, bool small) {
  if (in_host_call()) {
    // Submitted by a host callback, which runs inside a task of some device's stream:
    // queued behind that task it would never run, so it runs here, now.
    for (auto& d : deps) {
      try {
        d->wait();
      } catch (...) {  // the task itself passes a failed input's error on
      }
    }
    ScopedFlushDenormals ftz;
    task();
    return;
  }
  bool ready = true;
  for (auto& d : deps) ready = ready && d->is_ready();
  if (!stream_->enqueue(std::move(deps), std::move(task), small && ready)) {
    ScopedFlushDenormals ftz;
    task();
  }
}

bool Device::runs_small_now() { return in_host_call() || stream_->idle(); }

void Device::synchronize() { stream_->synchronize(); }

void Device::help(const Event& ev) { stream_->help(ev); }

namespace {
std::mutex devices_mu;
int requested_devices = 0;

int default_device_count() {
  for (const char* var : {"TINYXLA_NUM_CPU_DEVICES"}) {
    if (const char* v = std::getenv(var)) return std::max(1, std::atoi(v));
  }
  if (const char* flags = std::getenv("XLA_FLAGS")) {
    std::string f(flags);
    const std::string key = "--xla_force_host_platform_device_count=";
    auto pos = f.find(key);
    if (pos != std::string::npos) return std::max(1, std::atoi(f.c_str() + pos + key.size()));
  }
  return 1;
}

// Set once, under devices_mu; read without the lock on every op's way to its device.
std::atomic<std::vector<std::unique_ptr<Device>>*>& devices_ptr() {
  static std::atomic<std::vector<std::unique_ptr<Device>>*> d{nullptr};
  return d;
}

void before_fork() {
  devices_mu.lock();
  for (Stream* s : all_streams()) s->lock_for_fork();
}
void after_fork_in_parent() {
  for (Stream* s : all_streams()) s->unlock_after_fork(false);
  devices_mu.unlock();
}
void after_fork_in_child() {
  for (Stream* s : all_streams()) s->unlock_after_fork(true);
  devices_mu.unlock();
}

std::vector<std::unique_ptr<Device>>* make_devices() {
  int n = requested_devices > 0 ? requested_devices : default_device_count();
  auto* v = new std::vector<std::unique_ptr<Device>>();
  for (int i = 0; i < n; ++i) v->push_back(std::make_unique<Device>(i));
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  return v;
}
}  // namespace

// Never destroyed: device threads may still be draining at interpreter exit.
const std::vector<std::unique_ptr<Device>>& devices() {
  if (auto* d = devices_ptr().load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lock(devices_mu);
  auto* d = devices_ptr().load(std::memory_order_relaxed);
  if (!d) {
    d = make_devices();
    devices_ptr().store(d, std::memory_order_release);
  }
  return *d;
}

Device& device(int id) {
  const auto& ds = devices();
  if (id < 0 || id >= int(ds.size()))
    throw_error(ErrorKind::InvalidArgument, "device", "no device with id " + std::to_string(id));
  return *ds[size_t(id)];
}

int num_devices() { return int(devices().size()); }

void set_num_devices(int n) {
  std::lock_guard<std::mutex> lock(devices_mu);
  if (n < 1) throw_error(ErrorKind::InvalidArgument, "set_num_devices", "need at least 1 device");
  auto* d = devices_ptr().load(std::memory_order_relaxed);
  if (d && int(d->size()) != n)
    throw_error(ErrorKind::Internal, "set_num_devices",
                "the CPU devices already exist (" + std::to_string(d->size()) +
                    "); set the count before the first use of the runtime");
  requested_devices = n;
}

}  // namespace tinyxla
