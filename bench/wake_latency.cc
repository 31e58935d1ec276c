// How long a sleeping thread takes to start running after another thread wakes it: the
// floor under every hand-off between threads (a device's stream, a pool worker, a thread
// waiting for a result). Two cases: the waker blocks right after (the woken thread may run
// on the waker's core), and the waker keeps working, as when work is handed to a second
// core to run in parallel: the woken thread then needs the other, idle core. On the VMs we
// measure on an idle core halts, and waking it goes through the host.
// Usage: wake_latency [wakes]; prints percentiles in microseconds.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

namespace {

void busy_for(std::chrono::microseconds d) {
  const auto end = Clock::now() + d;
  while (Clock::now() < end) {
  }
}

void measure(int wakes, bool waker_keeps_working) {
  std::mutex mu;
  std::condition_variable cv;
  Clock::time_point sent;
  int posted = 0, taken = 0;
  std::vector<double> latency(size_t(wakes), 0.0);
  std::thread sleeper([&] {
    for (int i = 0; i < wakes; ++i) {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return posted > taken; });
      latency[size_t(i)] = std::chrono::duration<double, std::micro>(Clock::now() - sent).count();
      ++taken;
      cv.notify_all();
    }
  });
  for (int i = 0; i < wakes; ++i) {
    // Long enough for the sleeper to block and its core to go idle, as between two calls.
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    busy_for(std::chrono::microseconds(200));
    {
      std::lock_guard<std::mutex> lock(mu);
      sent = Clock::now();
      ++posted;
    }
    cv.notify_all();
    if (waker_keeps_working) busy_for(std::chrono::microseconds(300));
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return taken > i; });
  }
  sleeper.join();
  std::sort(latency.begin(), latency.end());
  auto pct = [&](double p) { return latency[size_t(p * (wakes - 1))]; };
  std::printf("%-22s p10 %7.1f  p50 %7.1f  p90 %7.1f  p99 %7.1f  max %7.1f\n",
              waker_keeps_working ? "waker keeps working:" : "waker blocks after:", pct(0.1),
              pct(0.5), pct(0.9), pct(0.99), latency.back());
}

}  // namespace

int main(int argc, char** argv) {
  const int wakes = argc > 1 ? std::max(10, std::atoi(argv[1])) : 2000;
  std::printf("wake latency (us), %d wakes each\n", wakes);
  measure(wakes, false);
  measure(wakes, true);
}
