// Tests of the upper tier of the CPU compiler: generated C gives the base tier's results
// bit for bit (elementwise chains, broadcasts, integer and bool ops, parallel sizes) and
// up to rounding (reductions with prologues), the
// disk cache is hit by a second module of the same source, TINYXLA_CODEGEN=0 never builds,
// and a missing compiler leaves the graph on the base tier.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "test_harness.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

Array random_f32(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 2);
  std::vector<float> v(size_t(num_elements(shape)));
  for (float& x : v) x = dist(rng);
  if (v.size() > 4) v[0] = NAN, v[1] = INFINITY, v[2] = -0.0f, v[3] = 0.0f;
  return Array::from_host(v.data(), shape, DType::F32, 0);
}

std::vector<char> bytes(const Array& a) {
  std::vector<char> v(a.nbytes());
  a.copy_to_host(v.data());
  return v;
}

std::shared_ptr<Executable> compile_in_mode(const Graph& g, const char* mode) {
  setenv("TINYXLA_CODEGEN", mode, 1);
  auto exe = compile(g);
  exe->wait_codegen();
  return exe;
}

// Runs `g` on both tiers and checks the results are identical and the upper tier ran.
void check_tiers_agree(const Graph& g, const std::vector<Array>& args) {
  auto base = compile_in_mode(g, "0");
  auto upper = compile_in_mode(g, "1");
  CHECK(base->tier() == "base" && base->codegen_status() == "off");
  if (upper->tier() != "upper") throw Failure{"upper tier not loaded: " + upper->codegen_status()};
  std::vector<Array> want = base->run(args), got = upper->run(args);
  CHECK(want.size() == got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(want[i].dtype() == got[i].dtype() && want[i].shape() == got[i].shape());
    if (bytes(want[i]) != bytes(got[i])) throw Failure{"output " + std::to_string(i) + " differs"};
  }
  if (upper->codegen_kernel_runs() == 0) throw Failure{"no generated kernel ran:\n" + upper->text() + "\n" + upper->codegen_source()};
}

Graph chain_graph(int64_t n) {
  GraphBuilder b;
  const Shape s{n};
  ValueId x = b.parameter(s, DType::F32);
  auto c = [&](double v) { return b.full(s, DType::F32, Scalar::of_float(v)); };
  ValueId t = b.unary(UnaryOp::tanh, b.binary(BinaryOp::add, b.binary(BinaryOp::mul, x, c(2)), c(1)));
  ValueId e = b.unary(UnaryOp::exp, b.binary(BinaryOp::mul, b.unary(UnaryOp::neg, x), x));
  ValueId r = b.binary(BinaryOp::sub, b.binary(BinaryOp::add, b.binary(BinaryOp::mul, t, c(0.5)), e),
                       b.unary(UnaryOp::sin, x));
  b.set_outputs({r});
  return b.build();
}

void test_chain_small_and_parallel() {
  for (int64_t n : {int64_t(1), int64_t(1000), int64_t(3'000'001)}) {
    Graph g = chain_graph(n);
    check_tiers_agree(g, {random_f32({n}, unsigned(n))});
  }
}

void test_broadcasts_ints_and_bools() {
  GraphBuilder b;
  const Shape s{123, 17};
  ValueId x = b.parameter(s, DType::F32);
  ValueId row = b.parameter({17}, DType::F32);
  ValueId col = b.parameter({123, 1}, DType::F32);
  ValueId rb = b.broadcast_in_dim(row, s, {1});
  ValueId cb = b.broadcast_in_dim(col, s, {0, 1});
  ValueId y = b.binary(BinaryOp::div, b.binary(BinaryOp::sub, x, rb), b.binary(BinaryOp::max, cb, x));
  ValueId m = b.binary(BinaryOp::gt, x, rb);
  ValueId i = b.convert(b.binary(BinaryOp::mul, x, b.full(s, DType::F32, Scalar::of_float(100))), DType::I32);
  ValueId k = b.binary(BinaryOp::add, b.binary(BinaryOp::mul, i, i), b.unary(UnaryOp::neg, i));
  ValueId w = b.select_n(m, {y, b.unary(UnaryOp::abs, cb)});
  b.set_outputs({y, b.unary(UnaryOp::logical_not, m), k, w, b.convert(k, DType::F32)});
  check_tiers_agree(b.build(), {random_f32(s, 1), random_f32({17}, 2), random_f32({123, 1}, 3)});
}

void test_reductions_with_prologue() {
  GraphBuilder b;
  const Shape s{300, 16};
  ValueId x = b.parameter(s, DType::F32);
  ValueId y = b.binary(BinaryOp::add, b.unary(UnaryOp::exp, x), x);
  b.set_outputs({b.reduce(ReduceOp::sum, y, {0}), b.reduce(ReduceOp::max, y, {1}),
                 b.reduce(ReduceOp::min, y, {0, 1})});
  const Graph g = b.build();
  Array arg = random_f32(s, 11);
  auto base = compile_in_mode(g, "0");
  auto upper = compile_in_mode(g, "1");
  if (upper->tier() != "upper") throw Failure{upper->codegen_status() + "\n" + upper->text()};
  std::vector<Array> want = base->run({arg}), got = upper->run({arg});
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<float> w(size_t(want[i].size())), h(size_t(got[i].size()));
    want[i].copy_to_host(w.data());
    got[i].copy_to_host(h.data());
    CHECK(w.size() == h.size());
    for (size_t k = 0; k < w.size(); ++k) {
      const bool same = w[k] == h[k] || (std::isnan(w[k]) && std::isnan(h[k]));  // a NaN wins
      if (!same && !(std::fabs(w[k] - h[k]) <= 1e-5f * (1 + std::fabs(w[k]))))
        throw Failure{"output " + std::to_string(i) + "[" + std::to_string(k) + "]: " +
                      std::to_string(h[k]) + " != " + std::to_string(w[k])};
    }
  }
  CHECK(upper->codegen_kernel_runs() > 0);
}

void test_cache_hit_and_text_round_trip() {
  Graph g = chain_graph(4096);
  Graph back = parse_graph(g.to_text());
  CHECK(back.identical_to(g));
  auto first = compile_in_mode(g, "1");
  auto second = compile_in_mode(back, "1");
  const std::string s1 = first->codegen_status(), s2 = second->codegen_status();
  // The first may itself hit a module built by an earlier test of the same graph.
  CHECK(s1 == "loaded" || s1 == "cached");
  if (s2 != "cached") throw Failure{"second build: " + s2};
  CHECK(first->codegen_source() == second->codegen_source());
}

void test_mode_off_and_missing_compiler() {
  Graph g = chain_graph(777);
  Array x = random_f32({777}, 9);
  auto off = compile_in_mode(g, "0");
  for (int i = 0; i < 3; ++i) off->run({x});
  off->wait_codegen();
  CHECK(off->tier() == "base" && off->codegen_status() == "off");
  setenv("TINYXLA_CC", "/nonexistent/cc", 1);
  auto missing = compile_in_mode(g, "1");
  unsetenv("TINYXLA_CC");
  CHECK(missing->tier() == "base");
  CHECK(missing->codegen_status() == "failed: no C compiler found");
  CHECK(bytes(missing->run({x})[0]) == bytes(off->run({x})[0]));
}

void test_auto_mode_builds_on_second_run() {
  Graph g = chain_graph(555);
  Array x = random_f32({555}, 4);
  setenv("TINYXLA_CODEGEN", "auto", 1);
  auto exe = compile(g);
  std::vector<char> first = bytes(exe->run({x})[0]);
  CHECK(exe->codegen_status() == "pending");
  exe->run({x})[0].wait();
  exe->wait_codegen();
  CHECK(exe->tier() == "upper");
  CHECK(bytes(exe->run({x})[0]) == first);
}

}  // namespace

int main() {
  char dir[] = "/tmp/tinyxla-codegen-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("TINYXLA_CACHE_DIR", dir, 1);
  const char* cc = std::getenv("CC");
  if (std::system((std::string(cc ? cc : "cc") + " --version > /dev/null 2>&1").c_str()) != 0) {
    std::printf("codegen: no C compiler, skipped\n");
    return 0;
  }
  const std::vector<Test> tests = {
      {"chain_small_and_parallel", test_chain_small_and_parallel},
      {"broadcasts_ints_and_bools", test_broadcasts_ints_and_bools},
      {"reductions_with_prologue", test_reductions_with_prologue},
      {"cache_hit_and_text_round_trip", test_cache_hit_and_text_round_trip},
      {"mode_off_and_missing_compiler", test_mode_off_and_missing_compiler},
      {"auto_mode_builds_on_second_run", test_auto_mode_builds_on_second_run},
  };
  const int status = run_tests("codegen", tests);
  std::system((std::string("rm -rf ") + dir).c_str());
  return status;
}
