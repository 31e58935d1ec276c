// What the LAPACK-backed kernels share: OpenBLAS's LAPACK and CBLAS declarations (under the
// wheel's "scipy_" symbol prefix, with C++ complex types, layout-compatible with Fortran
// COMPLEX), the element-type traits, and the row-major <-> column-major copies (our arrays
// are row-major, LAPACK's column-major).
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include <cblas.h>

#define LAPACK_GLOBAL(lcname, UCNAME) scipy_##lcname##_
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapack.h>

#include "tinyxla/array.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu::lapack {

// LAPACK's internal BLAS calls stay on the calling thread: batches are spread over our
// pool instead (for_matrices).
inline void on_one_thread() {
  static const bool done = [] {
    scipy_openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

// Runs fn(begin, end) over a batch of matrices of about `flops` each. Matrices are work
// items of our pool (`grain` to an item) with LAPACK on each worker's thread, except one
// large matrix alone (a batch of one), which no pool can split: it runs on OpenBLAS's own
// threads, as many as free_threads() says are free now (no other device busy, idle cores on
// the machine), so that batches and several devices never oversubscribe the cores and a busy
// machine (where OpenBLAS's threads, which wait for each other, run many times slower)
// keeps it on one.
void for_matrices(int64_t batch, int64_t grain, double flops,
                  const std::function<void(int64_t, int64_t)>& fn);

template <typename T> struct RealOf { using type = T; };
template <typename R> struct RealOf<std::complex<R>> { using type = R; };
template <typename T> using real_t = typename RealOf<T>::type;
template <typename T> constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

template <typename T>
T nan_value() {
  const real_t<T> q = std::numeric_limits<real_t<T>>::quiet_NaN();
  if constexpr (is_complex_v<T>) return T(q, q);
  else return q;
}

template <typename T>
T conj_of(T x) {
  if constexpr (is_complex_v<T>) return std::conj(x);
  else return x;
}

// LAPACK's pivot magnitude (i?amax): |re| + |im| for complex numbers.
template <typename T>
real_t<T> pivot_magnitude(T x) {
  if constexpr (is_complex_v<T>) return std::abs(x.real()) + std::abs(x.imag());
  else return std::abs(x);
}

template <typename T>
bool all_finite(const T* a, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if constexpr (is_complex_v<T>) {
      if (!std::isfinite(a[i].real()) || !std::isfinite(a[i].imag())) return false;
    } else {
      if (!std::isfinite(a[i])) return false;
    }
  }
  return true;
}

// LAPACK takes sizes as 32-bit ints.
inline int dim(const char* op, int64_t n) {
  if (n > int64_t(std::numeric_limits<int>::max() / 2))
    throw_error(ErrorKind::InvalidArgument, op, std::string(op) + ": matrix too large for LAPACK");
  return int(n);
}

// dst[i + j * rows] = src[i * cols + j]: a row-major rows x cols matrix into column-major
// order (or, read the other way, a column-major cols x rows one into row-major order).
// In tiles of 8 source rows by 16 columns, each tile's output columns written as contiguous
// runs: the 8 source lines a tile reads stay in L1 even when they are a multiple of 4 KiB
// apart (32 x 32 tiles thrashed two cache sets there: 512 x 512 floats 0.29 -> 0.15 ms,
// 1024 x 1024 2.0 -> 0.67 ms). Out of line: inlined into the LAPACK callers' large lambdas,
// GCC kept the loop's pointers on the stack and every element waited on a store-forward (a
// 512 x 512 LU spent 0.9 of its 2.9 ms in its two transposes).
template <typename S, typename D>
__attribute__((noinline)) void transpose_into(const S* __restrict src, D* __restrict dst,
                                              int64_t rows, int64_t cols) {
  constexpr int64_t kTileRows = 8, kTileCols = 16;
  for (int64_t i0 = 0; i0 < rows; i0 += kTileRows) {
    const int64_t i1 = std::min(rows, i0 + kTileRows);
    for (int64_t j0 = 0; j0 < cols; j0 += kTileCols) {
      const int64_t j1 = std::min(cols, j0 + kTileCols);
      for (int64_t j = j0; j < j1; ++j) {
        const S* __restrict in = src + j;
        D* __restrict out = dst + j * rows;
        for (int64_t i = i0; i < i1; ++i) out[i] = D(in[i * cols]);
      }
    }
  }
}

template <typename S, typename D>
void transpose_into(const S* src, D* dst, int64_t n) {
  transpose_into(src, dst, n, n);
}

// The rounded-up workspace size LAPACK reports from a query (lwork = -1).
template <typename T>
int query_size(T w) {
  if constexpr (is_complex_v<T>) return std::max(1, int(std::ceil(double(w.real()))));
  else return std::max(1, int(std::ceil(double(w))));
}

// Matrices in a work item of about `flops` each: tiny matrices go in chunks of ~1e5 flops,
// tens of microseconds, which is what waking a pool thread costs.
inline int64_t grain_for(double flops) {
  return std::max<int64_t>(1, int64_t(1e5 / std::max(flops, 1.0)));
}

// `x` as a dense array (a copy when it is a strided view).
Array dense(const Array& x);

}  // namespace tinyxla::cpu::lapack
