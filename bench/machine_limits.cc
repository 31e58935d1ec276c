// Two limits of the machine under every parallel figure, measured without tinyxla.
// 1. How far two threads scale: the same FMA-bound work on one thread and on each of two
//    (a VM's cores may share their host core's time; 2x is the ideal).
// 2. How long a sleeping thread takes to start running after another thread wakes it: the
//    floor under every hand-off between threads (a device's stream, a pool worker, a
//    thread waiting for a result). Two cases: the waker blocks right after (the woken
//    thread may run on the waker's core), and the waker keeps working, as when work is
//    handed to a second core to run in parallel: the woken thread then needs the other,
//    idle core. On a VM an idle core halts, and waking it goes through the host.
// Usage: machine_limits [wakes]; prints the scaling and the latency percentiles (us).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <immintrin.h>

using Clock = std::chrono::steady_clock;

namespace {

void busy_for(std::chrono::microseconds d) {
  const auto end = Clock::now() + d;
  while (Clock::now() < end) {
  }
}

// Chains of fused multiply-adds in registers: no memory traffic.
__attribute__((target("avx2,fma"), noinline)) float fma_work(int64_t n) {
  __m256 acc[8];
  for (int k = 0; k < 8; ++k) acc[k] = _mm256_set1_ps(1.0f + float(k) * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < 8; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, c);
  __m256 s = acc[0];
  for (int k = 1; k < 8; ++k) s = _mm256_add_ps(s, acc[k]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

// Best of five: seconds for `threads` threads each doing the same work.
double time_threads(int threads, int64_t n) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    std::vector<float> sink(static_cast<size_t>(threads), 0.0f);
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sink[size_t(t)] = fma_work(n); });
    for (auto& t : pool) t.join();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    if (sink[0] == 0) std::printf(" ");
  }
  return best;
}

void measure_wakes(int wakes, bool waker_keeps_working) {
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
  const int64_t n = 20000000;
  const double one = time_threads(1, n), two = time_threads(2, n);
  std::printf("two threads' scaling on FMA-bound work: %.2fx (1 thread %.1f ms, 2 threads %.1f ms)\n",
              2 * one / two, one * 1e3, two * 1e3);
  std::printf("wake latency (us), %d wakes each\n", wakes);
  measure_wakes(wakes, false);
  measure_wakes(wakes, true);
}
