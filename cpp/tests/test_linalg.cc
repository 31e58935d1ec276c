// Tests of lax.linalg.eig, eigh and cholesky: known eigenpairs (LAPACK's normalization),
// batches, NaN results for non-finite input or matrices that are not positive definite,
// validation errors, and the graph nodes' text round trip and run.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "ops/structural.h"
#include "runtime/eager.h"
#include "test_harness.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

using c64 = std::complex<float>;

bool near(c64 a, c64 b, float tol = 1e-5f) { return std::abs(a - b) <= tol; }

void test_eig_known_pair_and_vectors() {
  // [[1, -1], [1, 1]]: eigenvalues 1 +- i, right eigenvectors (1, -i)/sqrt2, (1, i)/sqrt2.
  auto outs = eig(from(std::vector<float>{1, -1, 1, 1}, {2, 2}, DType::F32), true, true);
  CHECK(outs.size() == 3);
  CHECK(outs[0].dtype() == DType::C64 && outs[0].shape() == Shape({2}));
  auto w = host<c64>(outs[0]);
  CHECK(near(w[0], {1, 1}) && near(w[1], {1, -1}));
  auto vr = host<c64>(outs[2]);
  const float s = std::sqrt(0.5f);
  CHECK(near(vr[0], {s, 0}) && near(vr[1], {s, 0}) && near(vr[2], {0, -s}) && near(vr[3], {0, s}));
  auto only_w = eig(from(std::vector<float>{1, -1, 1, 1}, {2, 2}, DType::F32), false, false);
  CHECK(only_w.size() == 1);
}

void test_eig_batch_complex_and_nan() {
  const float nan = std::nanf("");
  // A diagonal matrix, a matrix holding NaN, a triangular one.
  std::vector<double> x{2, 0, 0, 3, nan, 1, 1, 1, 1, 5, 0, 4};
  auto outs = eig(from(x, {3, 2, 2}, DType::F64), false, true);
  CHECK(outs[0].dtype() == DType::C128 && outs[1].shape() == Shape({3, 2, 2}));
  auto w = host<std::complex<double>>(outs[0]);
  CHECK(w[0] == std::complex<double>(2, 0) && w[1] == std::complex<double>(3, 0));
  CHECK(std::isnan(w[2].real()) && std::isnan(w[3].imag()));
  CHECK(std::abs(w[4] - 1.0) < 1e-12 && std::abs(w[5] - 4.0) < 1e-12);
  std::vector<c64> z{{0, 1}, {0, 0}, {0, 0}, {2, -1}};
  auto wz = host<c64>(eig(from(z, {2, 2}, DType::C64), false, false)[0]);
  CHECK(near(wz[0], {0, 1}) && near(wz[1], {2, -1}));
}

void test_eigh_values_vectors_and_triangle() {
  // [[2, 1], [1, 2]] read from its lower triangle; the upper holds junk.
  std::vector<float> x{2, 100, 1, 2};
  auto lo = eigh(from(x, {2, 2}, DType::F32), true);
  auto w = host<float>(lo[1]);
  CHECK(std::abs(w[0] - 1) < 1e-5f && std::abs(w[1] - 3) < 1e-5f);
  auto v = host<float>(lo[0]);
  CHECK(std::abs(std::abs(v[0]) - std::sqrt(0.5f)) < 1e-5f);
  CHECK(std::abs(v[0] * v[1] + v[2] * v[3]) < 1e-5f);  // orthogonal columns
  auto up = host<float>(eigh(from(x, {2, 2}, DType::F32), false)[1]);
  CHECK(std::abs(up[0] - (2 - 100)) < 1e-3f && std::abs(up[1] - (2 + 100)) < 1e-3f);
  std::vector<c64> h{{1, 0}, {0, -1}, {0, 1}, {1, 0}};  // eigenvalues 0 and 2
  auto hw = host<float>(eigh(from(h, {2, 2}, DType::C64), true)[1]);
  CHECK(std::abs(hw[0]) < 1e-5f && std::abs(hw[1] - 2) < 1e-5f);
}

void test_validation() {
  CHECK_THROWS(eig(from(std::vector<float>(6), {2, 3}, DType::F32), false, false),
               "must be a square matrix");
  CHECK_THROWS(eig(from(std::vector<float>(3), {3}, DType::F32), false, false),
               "rank at least 2");
  CHECK_THROWS(eigh(from(std::vector<int32_t>(4), {2, 2}, DType::I32), true),
               "eigh supports float32, float64, complex64 and complex128, got int32");
}

void test_graph_text_round_trip_and_run() {
  GraphBuilder b;
  ValueId x = b.parameter({2, 2, 2}, DType::F32);
  ValueId w = b.eig(x, true, false);
  ValueId v = b.eigh(x, false);
  b.set_outputs({w, w + 1, v, v + 1});
  const std::string text = b.graph().to_text();
  CHECK(text.find("%1, %2 = eig(%0) {left=1, right=0} : c64[2,2], c64[2,2,2]") !=
        std::string::npos);
  CHECK(text.find("%3, %4 = eigh(%0) {lower=0} : f32[2,2,2], f32[2,2]") != std::string::npos);
  Graph parsed = parse_graph(text);
  CHECK(parsed.identical_to(b.graph()));
  CHECK(parsed.to_text() == text);
  auto exe = compile(b.graph());
  auto outs = exe->run({from(std::vector<float>{1, 0, 0, 2, 3, 1, 1, 3}, {2, 2, 2}, DType::F32)});
  auto ew = host<c64>(outs[0]);
  CHECK(near(ew[0], {1, 0}) && near(ew[1], {2, 0}));
  auto hw = host<float>(outs[3]);
  CHECK(std::abs(hw[2] - 2) < 1e-5f && std::abs(hw[3] - 4) < 1e-5f);
}

// cholesky has no typed builder method or eager function: the registry reaches it.
void test_cholesky_through_the_registry() {
  // [[4, 2], [2, 3]] = L L^T with L = [[2, 0], [1, sqrt 2]]; [[1, 2], [2, 1]] fails.
  const Array x = from(std::vector<double>{4, 2, 2, 3, 1, 2, 2, 1}, {2, 2, 2}, DType::F64);
  const Array eager = runtime::run_op(OpKind::cholesky, ops::NoAttrs{}, {x})[0];
  auto l = host<double>(eager);
  CHECK(l[0] == 2 && l[1] == 0 && l[2] == 1 && std::abs(l[3] - std::sqrt(2.0)) < 1e-15);
  CHECK(std::isnan(l[4]) && l[5] == 0 && std::isnan(l[6]) && std::isnan(l[7]));
  const std::string text =
      "%0 = parameter(0) : f64[2,2,2]\n%1 = cholesky(%0) : f64[2,2,2]\nreturn %1\n";
  Graph g = parse_graph(text);
  CHECK(g.to_text() == text);
  auto jit = host<double>(compile(g)->run({x})[0]);
  for (size_t i = 0; i < l.size(); ++i) CHECK(jit[i] == l[i] || (std::isnan(jit[i]) && std::isnan(l[i])));
  CHECK_THROWS(runtime::run_op(OpKind::cholesky, ops::NoAttrs{},
                               {from(std::vector<float>(6), {2, 3}, DType::F32)}),
               "The input to cholesky must be a square matrix. Got shape (2, 3).");
  CHECK_THROWS(runtime::run_op(OpKind::cholesky, ops::NoAttrs{},
                               {from(std::vector<int32_t>(4), {2, 2}, DType::I32)}),
               "cholesky does not accept dtype int32");
}

}  // namespace

int main() {
  const std::vector<Test> tests = {
      {"eig_known_pair_and_vectors", test_eig_known_pair_and_vectors},
      {"eig_batch_complex_and_nan", test_eig_batch_complex_and_nan},
      {"eigh_values_vectors_and_triangle", test_eigh_values_vectors_and_triangle},
      {"validation", test_validation},
      {"graph_text_round_trip_and_run", test_graph_text_round_trip_and_run},
      {"cholesky_through_the_registry", test_cholesky_through_the_registry},
  };
  return run_tests("linalg", tests);
}
