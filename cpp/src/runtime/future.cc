// Event: the ready/error state behind every array's buffer.
#include "tinyxla/future.h"

namespace tinyxla {

void Event::set(int state, std::exception_ptr e) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(e);
    state_.store(state, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  for (auto& cb : callbacks) cb();
}

void Event::set_ready() { set(kReady, nullptr); }
void Event::set_error(std::exception_ptr e) { set(kFailed, std::move(e)); }

std::exception_ptr Event::error() const {
  if (!has_error()) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void Event::wait() const {
  if (!is_ready()) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return state_.load(std::memory_order_acquire) != kPending; });
  }
  if (has_error()) std::rethrow_exception(error());
}

void Event::on_ready(std::function<void()> cb) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_.load(std::memory_order_acquire) == kPending) {
      callbacks_.push_back(std::move(cb));
      return;
    }
  }
  cb();
}

const std::shared_ptr<Event>& Event::ready() {
  static const std::shared_ptr<Event> e = [] {
    auto ev = std::make_shared<Event>();
    ev->set_ready();
    return ev;
  }();
  return e;
}

}  // namespace tinyxla
