// Unit tests of the runtime through the public C++ API: buffers and the caching allocator,
// events, device streams, error propagation, eager ops, long chains, out-of-memory.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "core/host_calls.h"
#include "core/thread_pool.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;

namespace {

struct Failure {
  std::string msg;
};

std::string where(int line) { return std::string(__FILE__) + ":" + std::to_string(line) + ": "; }

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) throw Failure{where(__LINE__) + "CHECK(" #cond ") failed"}; \
  } while (0)

// Throws a Failure unless `fn` throws a tinyxla::Error of `kind` whose message has `text`.
template <typename F>
void expect_error(int line, F fn, ErrorKind kind, const std::string& text) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.kind() != kind || std::string(e.what()).find(text) == std::string::npos)
      throw Failure{where(line) + "wrong error: " + e.what()};
    return;
  }
  throw Failure{where(line) + "no error, expected one containing '" + text + "'"};
}
#define CHECK_THROWS(stmt, kind, text) expect_error(__LINE__, [&] { stmt; }, kind, text)

Array f32(const std::vector<float>& v, const Shape& shape, int dev = 0) {
  return Array::from_host(v.data(), shape, DType::F32, dev);
}

std::vector<float> host(const Array& a) {
  CHECK(a.dtype() == DType::F32);
  std::vector<float> out(size_t(a.size()));
  a.copy_to_host(out.data());
  return out;
}

std::string str(const std::vector<float>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  return s.str() + "]";
}

void check_values(const Array& a, const Shape& shape, const std::vector<float>& want,
                  float tol = 0) {
  if (a.shape() != shape)
    throw Failure{"shape " + shape_str(a.shape()) + " != expected " + shape_str(shape)};
  std::vector<float> got = host(a);
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i)
    ok = std::fabs(got[i] - want[i]) <= tol * std::fabs(want[i]);
  if (!ok) throw Failure{"values " + str(got) + " != expected " + str(want)};
}

// Waits on `a` and returns the message of the error it rethrows ("" when none).
std::string wait_error(const Array& a) {
  try {
    a.wait();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

void test_buffer_alignment() {
  const size_t mib = size_t(1) << 20;
  for (size_t n : {size_t(1), size_t(3), size_t(64), size_t(1000), mib, 5 * mib}) {
    Buffer b(n);
    CHECK(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);
    CHECK(b.size() == n);
  }
  // Array storage comes from the same allocator.
  Array a = f32({1, 2, 3}, {3});
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
}

void test_caching_allocator_reuse() {
  const size_t n = (size_t(3) << 20) + 5;  // an odd size: a size class no other test uses
  MemoryStats s0 = memory_stats();
  void* first;
  {
    Buffer b(n);
    first = b.data();
    CHECK(memory_stats().bytes_in_use >= s0.bytes_in_use + int64_t(n));
  }
  CHECK(memory_stats().bytes_in_use == s0.bytes_in_use);
  CHECK(memory_stats().bytes_cached >= int64_t(n));
  {
    Buffer b(n);
    CHECK(b.data() == first);  // the freed block came back instead of fresh memory
  }
  MemoryStats s1 = memory_stats();
  CHECK(s1.num_allocs == s0.num_allocs + 2);
  CHECK(s1.largest_alloc_size >= int64_t(n));
  trim_memory_cache();
  CHECK(memory_stats().bytes_cached == 0);
}

void test_peak_tracking() {
  reset_peak_memory();
  MemoryStats s0 = memory_stats();
  CHECK(s0.peak_bytes_in_use == s0.bytes_in_use);
  {
    Buffer a(size_t(1) << 20), b(size_t(2) << 20);
    CHECK(memory_stats().peak_bytes_in_use >= s0.bytes_in_use + (int64_t(3) << 20));
  }
  MemoryStats s1 = memory_stats();
  CHECK(s1.bytes_in_use == s0.bytes_in_use);
  CHECK(s1.peak_bytes_in_use >= s0.bytes_in_use + (int64_t(3) << 20));  // peak survives frees
  reset_peak_memory();
  CHECK(memory_stats().peak_bytes_in_use == s0.bytes_in_use);
}

// Small blocks are kept per thread: a block freed by the thread that allocated it comes
// back to that thread; the counts stay exact when blocks are freed by other threads and
// when threads exit holding cached blocks; trim frees every thread's blocks.
void test_thread_caches() {
  trim_memory_cache();
  const size_t n = (size_t(48) << 10) + 3;  // 64 KiB class: kept per thread
  const MemoryStats s0 = memory_stats();
  void* first;
  {
    Buffer b(n);
    first = b.data();
  }
  {
    Buffer b(n);
    CHECK(b.data() == first);
  }
  std::vector<std::unique_ptr<Buffer>> from_threads(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) Buffer tmp(n + size_t(i));  // cached, then kept at exit
      from_threads[size_t(t)] = std::make_unique<Buffer>(n);
    });
  for (auto& t : threads) t.join();
  MemoryStats s1 = memory_stats();
  CHECK(s1.bytes_in_use == s0.bytes_in_use + 4 * (int64_t(64) << 10));
  CHECK(s1.num_allocs == s0.num_allocs + 2 + 4 * 51);
  CHECK(s1.peak_bytes_in_use >= s1.bytes_in_use);
  from_threads.clear();  // freed here, allocated there
  MemoryStats s2 = memory_stats();
  CHECK(s2.bytes_in_use == s0.bytes_in_use);
  CHECK(s2.bytes_cached >= 4 * (int64_t(64) << 10));
  trim_memory_cache();
  CHECK(memory_stats().bytes_cached == 0);
}

// fork() while other threads allocate and free: the child gets consistent free lists and
// counts, allocates, trims and reads its stats without hanging on a lock held at the fork.
void test_fork_while_allocating() {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop.load()) {
        Buffer a(4096), b(size_t(3) << 20);
        memory_stats();
      }
    });
  for (int round = 0; round < 20; ++round) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(30);
      {
        Buffer a(4096), b(size_t(3) << 20);
        std::memset(a.data(), 1, 4096);
      }
      trim_memory_cache();
      const MemoryStats s = memory_stats();
      _exit(s.bytes_cached == 0 ? 0 : 3);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  stop = true;
  for (auto& t : threads) t.join();
}

void test_event_ready_and_callbacks() {
  Event ev;
  CHECK(!ev.is_ready());
  CHECK(!ev.has_error());
  std::atomic<int> before{0}, after{0};
  ev.on_ready([&] { before++; });
  std::thread waiter([&] { ev.wait(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ev.set_ready();
  waiter.join();
  CHECK(ev.is_ready() && !ev.has_error() && ev.error() == nullptr);
  CHECK(before == 1);
  ev.on_ready([&] { after++; });  // already set: runs at once, on this thread
  CHECK(after == 1);
  CHECK(before == 1);
  CHECK(Event::ready()->is_ready());
}

void test_event_error_rethrown() {
  Event ev;
  std::atomic<int> calls{0};
  ev.on_ready([&] { calls++; });  // an error also counts as set
  ev.set_error(std::make_exception_ptr(Error(ErrorKind::Internal, "[test] boom")));
  CHECK(ev.is_ready() && ev.has_error() && ev.error() != nullptr);
  CHECK(calls == 1);
  for (int i = 0; i < 2; ++i)  // every wait rethrows it
    CHECK_THROWS(ev.wait(), ErrorKind::Internal, "[test] boom");
}

void test_device_submit_order() {
  std::mutex mu;
  std::vector<int> order;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    // Small tasks may run inline, but only when nothing is queued before them.
    device(0).submit({}, [&, i] {
      std::lock_guard<std::mutex> lock(mu);
      if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      order.push_back(i);
    }, i % 3 == 1);
  }
  device(0).synchronize();
  CHECK(int(order.size()) == n);
  for (int i = 0; i < n; ++i) CHECK(order[size_t(i)] == i);
}

void test_waiting_thread_helps() {
  // A waiting thread and the stream thread both take tasks: each runs once, in order.
  std::mutex mu;
  std::vector<int> order;
  std::atomic<int> on_waiter{0};
  const auto waiter = std::this_thread::get_id();
  const int n = 2000;
  auto done = std::make_shared<Event>();
  for (int i = 0; i < n; ++i) {
    device(0).submit({}, [&, i, done] {
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      if (std::this_thread::get_id() == waiter) ++on_waiter;
      if (i == n - 1) done->set_ready();
    }, false);
  }
  device(0).help(*done);
  done->wait();
  device(0).synchronize();
  CHECK(int(order.size()) == n);
  for (int i = 0; i < n; ++i) CHECK(order[size_t(i)] == i);
  std::printf("  (the waiting thread ran %d of %d tasks)\n", on_waiter.load(), n);

  // A task whose inputs are pending is left to the stream.
  auto gate = std::make_shared<Event>(), out = std::make_shared<Event>();
  std::atomic<bool> ran{false};
  device(0).submit({gate}, [&, out] {
    ran = true;
    out->set_ready();
  }, false);
  device(0).help(*out);
  CHECK(!ran);
  gate->set_ready();
  out->wait();
  device(0).synchronize();
  CHECK(ran);
}

void test_device_dependencies() {
  CHECK(num_devices() == 2);
  std::mutex mu;
  std::vector<std::string> log;
  auto note = [&](const char* s) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(s);
  };
  // Device 1 waits on an event that device 0 sets later.
  auto produced = std::make_shared<Event>(), consumed = std::make_shared<Event>();
  device(1).submit({produced}, [&, consumed] { note("consume"); consumed->set_ready(); }, true);
  device(0).submit({}, [&, produced] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    note("produce");
    produced->set_ready();
  }, false);
  consumed->wait();
  CHECK(log.size() == 2 && log[0] == "produce" && log[1] == "consume");

  // A device blocked on a dependency leaves the other device free.
  auto gate = std::make_shared<Event>();
  std::atomic<bool> gated_ran{false}, free_ran{false};
  device(1).submit({gate}, [&] { gated_ran = true; }, false);
  device(0).submit({}, [&] { free_ran = true; }, false);
  device(0).synchronize();
  CHECK(free_ran && !gated_ran);
  gate->set_ready();
  device(1).synchronize();
  CHECK(gated_ran);

  // Eager ops run on their operands' device and refuse mixed devices.
  Array x = f32({1, 2}, {2}, 1), y = f32({3, 4}, {2}, 1), z = f32({3, 4}, {2}, 0);
  Array s = binary(BinaryOp::add, x, y);
  CHECK(s.device() == 1);
  check_values(s, {2}, {4, 6});
  CHECK_THROWS(binary(BinaryOp::add, x, z), ErrorKind::InvalidArgument, "different devices");
  CHECK_THROWS(device(2), ErrorKind::InvalidArgument, "no device with id 2");
}

void test_kernel_error_propagates() {
  // A kernel that fails stores its error in its output, as the eager ops' launcher does.
  auto ev = std::make_shared<Event>();
  Array bad({2}, DType::F32, 0, ev);
  auto gate = std::make_shared<Event>();
  device(0).submit({gate}, [bad] {
    try {
      throw Error(ErrorKind::Internal, "[test_kernel] failed on purpose");
    } catch (...) {
      bad.event()->set_error(std::current_exception());
    }
  }, false);
  // Downstream ops are enqueued before the failure happens and inherit it.
  Array one = f32({1, 1}, {2});
  Array e = unary(UnaryOp::exp, bad);
  Array sum = binary(BinaryOp::add, e, one);
  Array r = reduce(ReduceOp::sum, sum, {0});
  Array t = transpose(reshape(sum, {2, 1}), {1, 0});
  Array d = dot_general(reshape(bad, {1, 2}), reshape(one, {2, 1}), DotDims{{1}, {0}, {}, {}});
  gate->set_ready();
  for (const Array* a : {&bad, &e, &sum, &r, &t, &d})
    CHECK(wait_error(*a) == "[test_kernel] failed on purpose");
  CHECK_THROWS(r.wait(), ErrorKind::Internal, "failed on purpose");  // kind survives
  // Ops started after the failure on an already failed input inherit it too.
  CHECK(wait_error(unary(UnaryOp::neg, r)) == "[test_kernel] failed on purpose");
  // The runtime keeps working.
  check_values(binary(BinaryOp::add, one, one), {2}, {2, 2});
}

void test_elementwise_broadcast() {
  Array a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(binary(BinaryOp::add, a, f32({10, 20, 30}, {3})), {2, 3},
               {11, 22, 33, 14, 25, 36});
  check_values(binary(BinaryOp::mul, f32({1, 2}, {2, 1}), f32({1, 10, 100}, {1, 3})), {2, 3},
               {1, 10, 100, 2, 20, 200});
  Scalar two = Scalar::of_float(2);
  check_values(binary(BinaryOp::sub, a, scalar(DType::F32, two, 0)), {2, 3},
               {-1, 0, 1, 2, 3, 4});
  check_values(binary(BinaryOp::add, a, full({2, 3}, DType::F32, two, 0)), {2, 3},
               {3, 4, 5, 6, 7, 8});
  check_values(unary(UnaryOp::exp, f32({0, 1, std::log(2.0f)}, {3})), {3},
               {1, 2.7182817f, 2}, 1e-6f);
  Array lt = binary(BinaryOp::lt, a, f32({3}, {}));
  CHECK(lt.dtype() == DType::Bool && lt.shape() == Shape({2, 3}));
  bool b[6];
  lt.copy_to_host(b);
  CHECK(b[0] && b[1] && !b[2] && !b[5]);
  CHECK_THROWS(binary(BinaryOp::add, a, f32({1, 2}, {2})), ErrorKind::TypeError,
               "[add] add got incompatible shapes for broadcasting");
  Array i = Array::from_host(std::vector<int32_t>{1, 2, 3}.data(), {3}, DType::I32, 0);
  CHECK_THROWS(binary(BinaryOp::add, i, f32({1, 2, 3}, {3})), ErrorKind::TypeError,
               "same dtypes");
}

void test_reduce() {
  Array a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(reduce(ReduceOp::sum, a, {0}), {3}, {5, 7, 9});
  check_values(reduce(ReduceOp::sum, a, {1}), {2}, {6, 15});
  check_values(reduce(ReduceOp::sum, a, {0, 1}), {}, {21});
  check_values(reduce(ReduceOp::max, a, {-1}), {2}, {3, 6});
  check_values(reduce(ReduceOp::prod, a, {0}), {3}, {4, 10, 18});
  check_values(reduce(ReduceOp::sum, a, {}), {2, 3}, {1, 2, 3, 4, 5, 6});
  check_values(reduce(ReduceOp::sum, transpose(a, {1, 0}), {1}), {3}, {5, 7, 9});
  check_values(reduce(ReduceOp::sum, f32({}, {0, 3}), {0}), {3}, {0, 0, 0});
  // 2^25 ones: a naive float32 running sum would stop at 2^24; numpy and JAX give 2^25.
  Array ones = full({int64_t(1) << 25}, DType::F32, Scalar::of_float(1), 0);
  check_values(reduce(ReduceOp::sum, ones, {0}), {}, {float(1 << 25)});
  CHECK_THROWS(reduce(ReduceOp::sum, a, {2}), ErrorKind::InvalidArgument, "out-of-bounds");
  CHECK_THROWS(reduce(ReduceOp::sum, a, {1, -1}), ErrorKind::InvalidArgument, "duplicate");
}

void test_views() {
  Array a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Array t = transpose(a, {1, 0});
  CHECK(t.buffer() == a.buffer() && !t.is_contiguous());
  check_values(t, {3, 2}, {1, 4, 2, 5, 3, 6});
  Array s = slice(a, {0, 1}, {2, 3}, {1, 1});
  CHECK(s.buffer() == a.buffer());
  check_values(s, {2, 2}, {2, 3, 5, 6});
  Array strided = slice(f32({0, 1, 2, 3, 4, 5, 6}, {7}), {1}, {7}, {2});
  check_values(strided, {3}, {1, 3, 5});
  Array r = reshape(a, {3, 2});
  CHECK(r.buffer() == a.buffer());
  check_values(r, {3, 2}, {1, 2, 3, 4, 5, 6});
  Array rt = reshape(t, {6});  // a transposed view needs a copy to be reshaped
  CHECK(rt.buffer() != a.buffer());
  check_values(rt, {6}, {1, 4, 2, 5, 3, 6});
  check_values(rev(a, {1}), {2, 3}, {3, 2, 1, 6, 5, 4});
  check_values(broadcast_in_dim(f32({7, 8}, {2}), {2, 3}, {0}), {2, 3}, {7, 7, 7, 8, 8, 8});
  check_values(binary(BinaryOp::add, t, t), {3, 2}, {2, 8, 4, 10, 6, 12});
  CHECK_THROWS(reshape(a, {4}), ErrorKind::TypeError, "cannot reshape");
  CHECK_THROWS(transpose(a, {0, 0}), ErrorKind::TypeError, "permutation");
  CHECK_THROWS(slice(a, {0, 0}, {3, 1}, {}), ErrorKind::TypeError, "[slice]");
}

void test_shared_layouts() {
  // Arrays made from one layout (as a compiled graph's results are) share it, as do copies;
  // shape, strides and density read the same as for arrays made from a shape.
  auto dense = std::make_shared<const Layout>(Shape{2, 3});
  Array a = Array::of_layout(dense, DType::F32, 0, Event::ready());
  Array b = a;
  CHECK(a.layout() == dense && b.layout() == dense && a.size() == 6 && a.nbytes() == 24);
  CHECK(a.shape() == (Shape{2, 3}) && a.strides() == (Strides{3, 1}) && a.is_contiguous());
  Array t = Array::of_layout(std::make_shared<const Layout>(Shape{3, 2}, Strides{1, 3}), 0,
                             DType::F32, 0, a.buffer(), Event::ready());
  CHECK(!t.is_contiguous() && t.buffer() == a.buffer());
  Array u(Shape{3, 2}, Strides{1, 3}, 0, DType::F32, 0, a.buffer(), Event::ready());
  CHECK(!u.is_contiguous() && u.shape() == t.shape() && u.strides() == t.strides());
  CHECK(Layout(Shape{4, 1}, Strides{1, 7}).contiguous && Layout(Shape{0, 5}, Strides{9, 9}).contiguous);
  const Array none;
  CHECK(none.shape().empty() && none.ndim() == 0 && none.size() == 0 && none.is_contiguous());
}

void test_concatenate_and_pad() {
  Array a = f32({1, 2, 3, 4}, {2, 2}), b = f32({5, 6}, {1, 2});
  check_values(concatenate({a, b}, 0), {3, 2}, {1, 2, 3, 4, 5, 6});
  check_values(concatenate({a, transpose(a, {1, 0})}, 1), {2, 4}, {1, 2, 1, 3, 3, 4, 2, 4});
  CHECK_THROWS(concatenate({a, b}, 1), ErrorKind::TypeError, "Cannot concatenate");
  Array zero = scalar(DType::F32, Scalar::of_float(0), 0);
  Array v = f32({1, 2, 3}, {3});
  // lo=-1 drops the first element, interior=1 puts one zero between the others, hi=2 appends.
  check_values(pad(v, zero, {-1}, {2}, {1}), {6}, {0, 2, 0, 3, 0, 0});
  check_values(pad(v, zero, {1}, {-2}, {0}), {2}, {0, 1});
  check_values(pad(a, scalar(DType::F32, Scalar::of_float(9), 0), {0, 1}, {1, 0}, {0, 0}),
               {3, 3}, {9, 1, 2, 9, 3, 4, 9, 9, 9});
  CHECK_THROWS(pad(v, zero, {-4}, {0}, {0}), ErrorKind::InvalidArgument, "not at least 0");
}

void test_dot_general() {
  Array a = f32({1, 2, 3, 4, 5, 6}, {2, 3}), b = f32({7, 8, 9, 10, 11, 12}, {3, 2});
  // [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]]
  check_values(dot_general(a, b, DotDims{{1}, {0}, {}, {}}), {2, 2}, {58, 64, 139, 154});
  // Contracting a transposed view: a @ a.T
  check_values(dot_general(a, transpose(a, {1, 0}), DotDims{{1}, {0}, {}, {}}), {2, 2},
               {14, 32, 32, 77});
  // Batched: two 1x2 @ 2x1 products.
  Array x = f32({1, 2, 3, 4}, {2, 1, 2}), y = f32({5, 6, 7, 8}, {2, 2, 1});
  check_values(dot_general(x, y, DotDims{{2}, {1}, {0}, {0}}), {2, 1, 1}, {17, 53});
  // Vector inner product.
  check_values(dot_general(f32({1, 2, 3}, {3}), f32({4, 5, 6}, {3}), DotDims{{0}, {0}, {}, {}}),
               {}, {32});
  // Larger than the inline threshold, so it runs on the device thread (and BLAS).
  const int n = 128;
  Array ones = full({n, n}, DType::F32, Scalar::of_float(1), 0);
  Array id = convert(binary(BinaryOp::eq, iota(DType::I32, {n, n}, 0, 0),
                            iota(DType::I32, {n, n}, 1, 0)), DType::F32);
  check_values(reduce(ReduceOp::sum, dot_general(ones, id, DotDims{{1}, {0}, {}, {}}), {0, 1}),
               {}, {float(n * n)});
  CHECK_THROWS(dot_general(a, a, DotDims{{1}, {0}, {}, {}}), ErrorKind::TypeError,
               "[dot_general] dot_general requires contracting dimensions to have the same shape");
}

void test_long_chain() {
  // 100k ops queued behind an unset event, then drained: no recursion anywhere.
  const int n = 100000;
  auto gate = std::make_shared<Event>();
  Array x(Shape{4}, DType::F32, 0, gate);
  Array one = f32({1, 1, 1, 1}, {4});
  Array y = x;
  for (int i = 0; i < n; ++i) y = binary(BinaryOp::add, y, one);
  std::memset(x.mutable_data(), 0, x.nbytes());
  gate->set_ready();
  check_values(y, {4}, {float(n), float(n), float(n), float(n)});
  // The same through the inline path (the stream is idle and every input ready).
  Array z = one;
  for (int i = 0; i < n; ++i) z = unary(UnaryOp::neg, z);
  check_values(z, {4}, {1, 1, 1, 1});
  // A pending chain whose handles are dropped lives on in the queue and fails link by link.
  auto never = std::make_shared<Event>();
  {
    Array w(Shape{4}, DType::F32, 0, never);
    for (int i = 0; i < n; ++i) w = unary(UnaryOp::neg, w);
  }
  never->set_error(std::make_exception_ptr(Error(ErrorKind::Internal, "[test] dropped")));
  device(0).synchronize();
}

void test_oversized_allocation() {
  // 2^48 elements of a broadcast scalar: a view, so only its one element is allocated.
  Array big = full({int64_t(1) << 24, int64_t(1) << 24}, DType::F32, Scalar::of_float(1), 0);
  MemoryStats s0 = memory_stats();
  CHECK_THROWS(Buffer(size_t(1) << 50), ErrorKind::ResourceExhausted, "RESOURCE_EXHAUSTED");
  CHECK_THROWS(binary(BinaryOp::add, big, big), ErrorKind::ResourceExhausted, "Out of memory");
  CHECK_THROWS(contiguous(big), ErrorKind::ResourceExhausted, "Out of memory");
  // `<=`: a device thread may still be freeing an earlier test's last task.
  CHECK(memory_stats().bytes_in_use <= s0.bytes_in_use);
  check_values(binary(BinaryOp::add, f32({1}, {1}), f32({2}, {1})), {1}, {3});
}

struct Test {
  const char* name;
  void (*fn)();
};

// A child forked after both devices and the pool have run gets the parent's results, runs
// new work on both devices and on the pool (threads of its own), and synchronizes; the
// parent keeps working. A hang in the child fails by SIGALRM.
void test_fork_with_work_in_flight() {
  const Shape shape{384, 384};
  Array a = full(shape, DType::F32, Scalar::of_float(1), 0);
  Array b = full(shape, DType::F32, Scalar::of_float(1), 1);
  std::vector<Array> outs;
  for (int i = 0; i < 6; ++i) {
    outs.push_back(dot_general(a, a, DotDims{{1}, {0}, {}, {}}));
    outs.push_back(dot_general(b, b, DotDims{{1}, {0}, {}, {}}));
  }
  // Drained first, as Python's fork hook does: a child forked with kernels still running
  // hangs now and then (about 1 run in 2 here; see the closing note of session 8).
  device(0).synchronize();
  device(1).synchronize();
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    // Exit status: the first check that failed (a flaky failure then says which).
    if (host(outs.back())[0] != 384.0f || host(outs[outs.size() - 2])[0] != 384.0f) _exit(3);
    Array big = full({1 << 22}, DType::F32, Scalar::of_float(0.5f), 0);
    if (std::abs(host(unary(UnaryOp::exp, big))[(1 << 22) - 1] - std::exp(0.5f)) > 1e-6f)
      _exit(4);
    if (host(binary(BinaryOp::add, b, b))[7] != 2.0f) _exit(5);
    std::atomic<int64_t> sum{0};
    parallel_for(1 << 20, 1024, [&](int64_t lo, int64_t hi) { sum += hi - lo; }, true);
    if (sum != (1 << 20)) _exit(6);
    device(0).synchronize();
    device(1).synchronize();
    _exit(0);
  }
  CHECK(pid > 0);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Failure{where(__LINE__) + "child: exit status " + std::to_string(WEXITSTATUS(status)) +
                  ", signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0)};
  CHECK(host(outs[0])[0] == 384.0f);
  CHECK(host(binary(BinaryOp::add, a, a))[0] == 2.0f);
}

// While device threads occupy every core, parallel_for runs on its caller alone.
void test_pool_leaves_cores_busy_with_devices() {
  std::vector<std::unique_ptr<ScopedDeviceBusy>> busy;
  for (int i = 0; i < pool_size(); ++i) busy.push_back(std::make_unique<ScopedDeviceBusy>());
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int64_t> total{0};
  parallel_for(1 << 16, 1, [&](int64_t lo, int64_t hi) {
    total += hi - lo;
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  CHECK(total == (1 << 16));
  CHECK(ids.size() == 1 && *ids.begin() == std::this_thread::get_id());
}

// Host calls: a test handler records (callable, first operand) in call order; callable 99
// throws. Deferred calls run on the host-call thread, in order with the synchronous ones.
std::mutex host_log_mu;
std::vector<std::pair<int64_t, float>> host_log;
std::set<std::thread::id> host_threads;

void record_host_call(int64_t id, const std::vector<Array>& args, const std::vector<Array>&) {
  if (id == 99) throw_error(ErrorKind::Internal, "host_callback", "callable 99 fails");
  std::lock_guard<std::mutex> lock(host_log_mu);
  host_log.push_back({id, args.empty() ? 0.f : host(args[0])[0]});
  host_threads.insert(std::this_thread::get_id());
}

void record_deferred(std::vector<DeferredHostCall>& calls) {
  std::vector<const void*> failed;
  for (DeferredHostCall& c : calls) {
    c.skip = c.skip || std::count(failed.begin(), failed.end(), c.run) > 0;
    if (c.skip) continue;
    try {
      record_host_call(c.callable, c.args, {});
    } catch (...) {
      c.error = std::current_exception();
      failed.push_back(c.run);
    }
  }
}

void test_deferred_host_calls() {
  HostCallHandler h;
  h.call = &record_host_call;
  h.call_deferred = &record_deferred;
  set_host_call_handler(h);
  host_log.clear();
  CHECK(!may_defer_host_calls());  // no scope on this thread
  {
    DeferredHostCalls scope;
    CHECK(may_defer_host_calls());
    for (int k = 0; k < 200; ++k) defer_host_call(1, {f32({float(k)}, {})});
    call_host(2, {f32({7.f}, {})}, {});  // waits for the 200 before it
    defer_host_call(3, {f32({8.f}, {})});
    scope.finish();
  }
  CHECK(host_log.size() == 202);
  for (int k = 0; k < 200; ++k) CHECK(host_log[size_t(k)] == std::make_pair(int64_t(1), float(k)));
  CHECK(host_log[200] == std::make_pair(int64_t(2), 7.f));
  CHECK(host_log[201] == std::make_pair(int64_t(3), 8.f));
  CHECK(host_threads.size() == 2);  // this thread and the host-call thread
  // A failing call: finish() throws its error, and the run's later calls are not made.
  host_log.clear();
  {
    DeferredHostCalls scope;
    defer_host_call(1, {f32({1.f}, {})});
    defer_host_call(99, {});
    for (int k = 0; k < 50; ++k) defer_host_call(4, {f32({2.f}, {})});
    CHECK_THROWS(scope.finish(), ErrorKind::Internal, "[host_callback] callable 99 fails");
    scope.finish();  // the error was reported once
  }
  CHECK(host_log.size() == 1 && host_log[0].first == 1);
  // Nested scopes wait for their own calls only; the outer one resumes deferring.
  host_log.clear();
  {
    DeferredHostCalls outer;
    defer_host_call(5, {f32({1.f}, {})});
    {
      DeferredHostCalls inner;
      defer_host_call(6, {f32({2.f}, {})});
      inner.finish();
      std::lock_guard<std::mutex> lock(host_log_mu);
      CHECK(host_log.size() == 2);
    }
    CHECK(may_defer_host_calls());
    defer_host_call(7, {f32({3.f}, {})});
  }
  CHECK(host_log.size() == 3 && host_log[2].first == 7);
  CHECK(!may_defer_host_calls());
  set_host_call_handler(HostCallHandler());
}

const Test kTests[] = {
    {"buffer_alignment", test_buffer_alignment},
    {"caching_allocator_reuse", test_caching_allocator_reuse},
    {"peak_tracking", test_peak_tracking},
    {"thread_caches", test_thread_caches},
    {"fork_while_allocating", test_fork_while_allocating},
    {"event_ready_and_callbacks", test_event_ready_and_callbacks},
    {"event_error_rethrown", test_event_error_rethrown},
    {"device_submit_order", test_device_submit_order},
    {"waiting_thread_helps", test_waiting_thread_helps},
    {"device_dependencies", test_device_dependencies},
    {"kernel_error_propagates", test_kernel_error_propagates},
    {"elementwise_broadcast", test_elementwise_broadcast},
    {"reduce", test_reduce},
    {"views", test_views},
    {"shared_layouts", test_shared_layouts},
    {"concatenate_and_pad", test_concatenate_and_pad},
    {"dot_general", test_dot_general},
    {"long_chain", test_long_chain},
    {"oversized_allocation", test_oversized_allocation},
    {"pool_leaves_cores_busy_with_devices", test_pool_leaves_cores_busy_with_devices},
    {"fork_with_work_in_flight", test_fork_with_work_in_flight},
    {"deferred_host_calls", test_deferred_host_calls},
};

std::atomic<const char*> current_test{"startup"};

}  // namespace

int main() {
  set_num_devices(2);  // before the devices exist: the dependency test needs two
  // A hang is a failure too: report it instead of waiting for ctest's timeout.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(300));
    std::fprintf(stderr, "runtime: timed out in %s\n", current_test.load());
    std::_Exit(2);
  }).detach();
  int passed = 0, failed = 0;
  for (const Test& t : kTests) {
    current_test = t.name;
    std::string err;
    try {
      t.fn();
    } catch (const Failure& f) {
      err = f.msg;
    } catch (const std::exception& e) {
      err = std::string("unexpected exception: ") + e.what();
    }
    if (err.empty()) {
      ++passed;
      std::printf("PASS %s\n", t.name);
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n", t.name, err.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("runtime: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
