// The AVX-512 sgemm against a double-precision reference: shapes around its 14 x 32 tiles
// and 112-row blocks, k over several 1152-deep blocks (c accumulated across them), n over
// several 2048-wide ones, all four storage orders, a row stride wider than the rows, the
// pooled path, and NaN / inf propagation. Skipped on CPUs without AVX-512.
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/gemm.h"
#include "cpu/vmath.h"
#include "test_harness.h"

namespace {

using tinyxla::cpu::gemm::Operand;
using tinyxla::cpu::gemm::sgemm;
using namespace tinyxla::testing;

// A random m x n matrix stored row-major with row stride ld (or column-major with column
// stride ld when `transposed`); the operand reads it as m x n either way.
struct Matrix {
  std::vector<float> data;
  Operand op;
  int64_t m, n;
  float at(int64_t i, int64_t j) const { return op.data[i * op.rs + j * op.cs]; }
};

Matrix random_matrix(int64_t m, int64_t n, bool transposed, int64_t pad, std::mt19937& rng) {
  std::normal_distribution<float> dist;
  Matrix x;
  const int64_t outer = transposed ? n : m, ld = (transposed ? m : n) + pad;
  x.data.resize(size_t(outer * ld));
  for (float& v : x.data) v = dist(rng);
  x.op = transposed ? Operand{x.data.data(), 1, ld} : Operand{x.data.data(), ld, 1};
  x.m = m;
  x.n = n;
  return x;
}

// Runs the product and checks every element against a double-precision sum.
void check_product(const Matrix& a, const Matrix& b, bool parallel) {
  const int64_t m = a.m, n = b.n, k = a.n, ldc = n + 3;
  std::vector<float> c(size_t(m * ldc), -7.f);
  sgemm(m, n, k, a.op, b.op, c.data(), ldc, parallel);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, scale = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += double(a.at(i, p)) * double(b.at(p, j));
        scale += std::fabs(double(a.at(i, p)) * double(b.at(p, j)));
      }
      const double got = c[size_t(i * ldc + j)];
      const bool ok = std::isnan(want)   ? std::isnan(got)
                      : std::isinf(want) ? got == want
                                         : std::fabs(got - want) <= 1e-5 * scale + 1e-30;
      if (!ok)
        throw Failure{"sgemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                      std::to_string(k) + ": c[" + std::to_string(i) + "," + std::to_string(j) +
                      "] = " + std::to_string(got) + ", want " + std::to_string(want)};
    }
    for (int64_t j = n; j < ldc; ++j) CHECK(c[size_t(i * ldc + j)] == -7.f);  // padding kept
  }
}

void shapes() {
  std::mt19937 rng(1);
  const int64_t sizes[] = {1, 2, 13, 14, 15, 31, 32, 33, 70, 113};
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : {int64_t(1), int64_t(17), int64_t(64)}) {
        if (m == 1 && n == 1) continue;
        check_product(random_matrix(m, k, false, 0, rng), random_matrix(k, n, false, 0, rng),
                      false);
      }
}

void storage_orders() {
  std::mt19937 rng(2);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t pad : {0, 5}) {
        check_product(random_matrix(29, 45, ta, pad, rng), random_matrix(45, 50, tb, pad, rng),
                      false);
        check_product(random_matrix(130, 400, ta, pad, rng),
                      random_matrix(400, 90, tb, pad, rng), false);
      }
}

void pooled() {
  std::mt19937 rng(3);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      check_product(random_matrix(250, 390, ta, 1, rng), random_matrix(390, 270, tb, 0, rng),
                    true);
  // Few rows: the pool's items are groups of columns.
  check_product(random_matrix(20, 300, false, 0, rng), random_matrix(300, 700, false, 0, rng),
                true);
}

// k deeper than one KC block (1152): each block after the first adds to c. a read in place
// by rows (n <= 256), packed (its rows 4 KiB apart, or transposed) and on the pool.
void k_blocks() {
  std::mt19937 rng(5);
  check_product(random_matrix(45, 2400, false, 0, rng), random_matrix(2400, 70, false, 0, rng),
                false);
  check_product(random_matrix(31, 2048, false, 0, rng), random_matrix(2048, 50, false, 2, rng),
                false);
  check_product(random_matrix(29, 1300, true, 3, rng), random_matrix(1300, 270, true, 3, rng),
                false);
  check_product(random_matrix(150, 1500, false, 1, rng), random_matrix(1500, 90, true, 0, rng),
                true);
}

// n wider than one NC block (2048): b packed block by block, from both storage orders.
void column_blocks() {
  std::mt19937 rng(6);
  check_product(random_matrix(40, 30, false, 0, rng), random_matrix(30, 2100, false, 0, rng),
                false);
  check_product(random_matrix(20, 45, true, 0, rng), random_matrix(45, 4200, true, 1, rng),
                true);
}

void nan_and_inf() {
  std::mt19937 rng(4);
  for (int64_t size : {int64_t(20), int64_t(150)}) {
    Matrix a = random_matrix(size, size, false, 0, rng), b = random_matrix(size, size, true, 0, rng);
    a.data[size_t(3 * size + 2)] = std::numeric_limits<float>::quiet_NaN();
    b.data[size_t(5 * size + 7)] = std::numeric_limits<float>::infinity();
    check_product(a, b, size > 100);
  }
}

}  // namespace

int main() {
  if (!tinyxla::cpu::vmath::isa_supported(tinyxla::cpu::vmath::Isa::Avx512)) {
    std::printf("gemm: no AVX-512 on this CPU, skipped\n");
    return 0;
  }
  return run_tests("gemm", {{"shapes", shapes},
                            {"storage_orders", storage_orders},
                            {"pooled", pooled},
                            {"k_blocks", k_blocks},
                            {"column_blocks", column_blocks},
                            {"nan_and_inf", nan_and_inf}});
}
