// Unit tests of the profiler's recorder (core/profiler.h): spans from many threads at
// once, sessions that drop the spans of earlier ones, nothing recorded while off, and the
// spans a compiled graph's run records.
#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/profiler.h"
#include "test_harness.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

profiler::Trace stopped() {
  profiler::Trace t;
  CHECK(profiler::stop(&t));
  return t;
}

void test_threads_record_concurrently() {
  CHECK(profiler::start());
  CHECK(!profiler::start());  // one session at a time
  constexpr int kThreads = 4, kSpans = 5000;  // several chunks per thread
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      profiler::set_thread_name("worker " + std::to_string(t));
      for (int i = 0; i < kSpans; ++i) profiler::Span span("work", "test");
    });
  for (auto& th : threads) th.join();
  const profiler::Trace trace = stopped();
  int work = 0;
  std::set<int> tids;
  for (const auto& e : trace.events)
    if (e.name == "work") {
      ++work;
      tids.insert(e.tid);
      CHECK(e.t1 >= e.t0 && e.cat == "test");
    }
  CHECK(work == kThreads * kSpans);
  CHECK(int(tids.size()) == kThreads);
  std::set<std::string> names;
  for (const auto& th : trace.threads)
    if (tids.count(th.tid)) names.insert(th.name);
  CHECK(names == (std::set<std::string>{"worker 0", "worker 1", "worker 2", "worker 3"}));
  profiler::Trace none;
  CHECK(!profiler::stop(&none));
}

void test_sessions_and_off() {
  { profiler::Span span("before any session", "test"); }
  CHECK(profiler::start());
  { profiler::Span span("first", "test"); }
  stopped();
  { profiler::Span span("while off", "test"); }
  CHECK(profiler::start());
  { profiler::Span span("second", "test"); }
  profiler::record_copy("from python", "annotation", 1, 2, "k=v");
  const profiler::Trace trace = stopped();
  std::multiset<std::string> names;
  for (const auto& e : trace.events) names.insert(e.name);
  CHECK(names == (std::multiset<std::string>{"second", "from python"}));
}

void test_graph_run_records_its_kernels() {
  GraphBuilder b;
  const ValueId x = b.parameter({1000}, DType::F32);
  const ValueId y = b.unary(UnaryOp::tanh, b.binary(BinaryOp::mul, x, x));
  b.set_outputs({b.reduce(ReduceOp::sum, y, {0})});
  CompileOptions options;
  options.name = "jit(f)";
  auto exe = compile(b.graph(), options);
  std::vector<float> ones(1000, 1.0f);
  CHECK(profiler::start());
  exe->run({from(ones, {1000}, DType::F32)})[0].wait();
  const profiler::Trace trace = stopped();
  int runs = 0, kernels = 0;
  for (const auto& e : trace.events) {
    runs += e.name == "jit(f)" && e.cat == "executable";
    kernels += e.cat == "kernel" && e.name.rfind("fusion: mul,tanh", 0) == 0 && e.detail == "f32[]";
  }
  CHECK(runs == 1 && kernels == 1);
}

}  // namespace

int main() {
  return run_tests("profiler", {
      {"threads_record_concurrently", test_threads_record_concurrently},
      {"sessions_and_off", test_sessions_and_off},
      {"graph_run_records_its_kernels", test_graph_run_records_its_kernels},
  });
}
