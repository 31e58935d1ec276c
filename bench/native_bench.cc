// Times tinyxla's kernels through the public C++ API, without Python: add, multiply,
// exp, tanh and a sum over 1e7 float32, and a 1024 matmul, against a memcpy of the same
// size as the memory-bandwidth reference. Usage: native_bench [--quick]; exits 1 when a
// kernel's result is wrong.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tinyxla/tinyxla.h"

namespace tx = tinyxla;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int repeats = 7;
  double min_seconds = 0.2;  // per repeat
};

// Median over repeats of the seconds one call of `fn` takes; each repeat runs enough calls
// to last min_seconds. `fn` must wait for its result.
double time_call(const Options& opt, const std::function<void()>& fn) {
  fn();  // warm up: first-touch pages, caches, thread pool
  // Calibrate: double the calls until a batch is long enough to scale from.
  int calls = 1;
  double s = 0;
  for (;;) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= opt.min_seconds / 4 || calls >= (1 << 20)) break;
    calls *= 2;
  }
  calls = std::max(1, int(std::ceil(calls * opt.min_seconds / s)));
  std::vector<double> times;
  for (int r = 0; r < opt.repeats; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / calls);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::vector<float> v(n);
  uint32_t s = 12345;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;  // LCG: reproducible and fast to fill 1e7 values
    x = lo + (hi - lo) * float(s >> 8) / float(1 << 24);
  }
  return v;
}

float first(const tx::Array& a) {
  float v;
  std::memcpy(&v, a.data(), sizeof v);
  return v;
}

int wrong_results = 0;

void row(const char* name, double seconds, double bytes, double flops, bool ok) {
  wrong_results += !ok;
  std::printf("%-28s %10.3f", name, seconds * 1e3);
  if (bytes > 0) std::printf(" %9.1f", bytes / seconds / 1e9); else std::printf(" %9s", "-");
  if (flops > 0) std::printf(" %9.1f", flops / seconds / 1e9); else std::printf(" %9s", "-");
  std::printf("%s\n", ok ? "" : "  WRONG RESULT");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--quick") {
      opt.repeats = 3;
      opt.min_seconds = 0.05;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  const int64_t n = 10'000'000;
  const double f32_bytes = double(n) * 4;
  std::vector<float> ha = random_floats(size_t(n), -3, 3), hb = random_floats(size_t(n), 1, 2);
  tx::Array a = tx::Array::from_host(ha.data(), {n}, tx::DType::F32, 0);
  tx::Array b = tx::Array::from_host(hb.data(), {n}, tx::DType::F32, 0);

  std::printf("tinyxla native kernels, median of %d repeats\n", opt.repeats);
  std::printf("%-28s %10s %9s %9s\n", "kernel", "ms", "GB/s", "GFLOP/s");

  // The reference: what a plain copy of 1e7 float32 costs on this machine (read + write).
  std::vector<float> dst(static_cast<size_t>(n));
  double t = time_call(opt, [&] { std::memcpy(dst.data(), ha.data(), size_t(f32_bytes)); });
  row("memcpy 1e7 f32 (reference)", t, 2 * f32_bytes, 0, dst[7] == ha[7]);

  tx::Array out;
  auto run = [&](const std::function<tx::Array()>& op) {
    return time_call(opt, [&] {
      out = op();
      out.wait();
    });
  };

  t = run([&] { return tx::binary(tx::BinaryOp::add, a, b); });
  row("add 1e7 f32", t, 3 * f32_bytes, double(n), first(out) == ha[0] + hb[0]);
  t = run([&] { return tx::binary(tx::BinaryOp::mul, a, b); });
  row("mul 1e7 f32", t, 3 * f32_bytes, double(n), first(out) == ha[0] * hb[0]);
  t = run([&] { return tx::unary(tx::UnaryOp::exp, a); });
  row("exp 1e7 f32", t, 2 * f32_bytes, 0,
      std::fabs(first(out) - std::exp(ha[0])) <= 1e-6f * std::exp(ha[0]));
  t = run([&] { return tx::unary(tx::UnaryOp::tanh, a); });
  row("tanh 1e7 f32", t, 2 * f32_bytes, 0, std::fabs(first(out) - std::tanh(ha[0])) <= 1e-6f);

  t = run([&] { return tx::reduce(tx::ReduceOp::sum, b, {0}); });
  double want = 0;
  for (float x : hb) want += x;
  row("reduce sum 1e7 f32", t, f32_bytes, double(n),
      std::fabs(first(out) - want) <= 1e-5 * want);

  const int64_t m = 1024;
  std::vector<float> hx = random_floats(size_t(m * m), -1, 1);
  std::vector<float> hy = random_floats(size_t(m * m), -1, 1);
  tx::Array x = tx::Array::from_host(hx.data(), {m, m}, tx::DType::F32, 0);
  tx::Array y = tx::Array::from_host(hy.data(), {m, m}, tx::DType::F32, 0);
  t = run([&] { return tx::dot_general(x, y, tx::DotDims{{1}, {0}, {}, {}}); });
  double want00 = 0;
  for (int64_t k = 0; k < m; ++k) want00 += double(hx[size_t(k)]) * hy[size_t(k * m)];
  row("dot 1024x1024 f32", t, 0, 2.0 * double(m * m * m), std::fabs(first(out) - want00) <= 1e-3);

  tx::MemoryStats s = tx::memory_stats();
  std::printf("memory: %lld allocations, peak %.1f MB in use\n", (long long)s.num_allocs,
              double(s.peak_bytes_in_use) / 1e6);
  return wrong_results ? 1 : 0;
}
