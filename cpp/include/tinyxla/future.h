// Completion events: an array's buffer is valid once its event is ready.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace tinyxla {

// Set once, to ready or to an error; waiting rethrows the error. Thread-safe.
class Event {
 public:
  bool is_ready() const { return state_.load(std::memory_order_acquire) != kPending; }
  bool has_error() const { return state_.load(std::memory_order_acquire) == kFailed; }
  void set_ready();
  void set_error(std::exception_ptr e);
  std::exception_ptr error() const;  // null unless failed
  // Blocks until set; rethrows a stored error.
  void wait() const;
  // Runs `cb` once the event is set (at once if it already is), on the setting thread.
  void on_ready(std::function<void()> cb);

  // A shared, already-ready event for arrays made from host data.
  static const std::shared_ptr<Event>& ready();

 private:
  enum : int { kPending = 0, kReady = 1, kFailed = 2 };
  void set(int state, std::exception_ptr e);
  std::atomic<int> state_{kPending};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::exception_ptr error_;
  std::vector<std::function<void()>> callbacks_;
};

using EventPtr = std::shared_ptr<Event>;

}  // namespace tinyxla
