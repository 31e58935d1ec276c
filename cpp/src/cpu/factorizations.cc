// The kernels of factorizations.h. Each LAPACK routine is wrapped as one overloaded
// function per element type; a kernel copies each matrix into column-major scratch, calls
// the routine and copies the results back, except where reading the row-major buffer as
// its own transpose gives the answer directly (svd).
#include "factorizations.h"

#include <numeric>
#include <vector>

#include "../core/thread_pool.h"
#include "kernels.h"
#include "lapack.h"
#include "small_matrices.h"

namespace tinyxla::cpu {
namespace {

using lapack::conj_of;
using lapack::dense;
using lapack::grain_for;
using lapack::is_complex_v;
using lapack::nan_value;
using lapack::query_size;
using lapack::real_t;
using lapack::transpose_into;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

// ---- LAPACK overloads ----

void getrf(int m, int n, float* a, int lda, int* ipiv, int* info) { LAPACK_sgetrf(&m, &n, a, &lda, ipiv, info); }
void getrf(int m, int n, double* a, int lda, int* ipiv, int* info) { LAPACK_dgetrf(&m, &n, a, &lda, ipiv, info); }
void getrf(int m, int n, c64* a, int lda, int* ipiv, int* info) { LAPACK_cgetrf(&m, &n, a, &lda, ipiv, info); }
void getrf(int m, int n, c128* a, int lda, int* ipiv, int* info) { LAPACK_zgetrf(&m, &n, a, &lda, ipiv, info); }

void geqrf(int m, int n, float* a, int lda, float* tau, float* work, int lwork, int* info) {
  LAPACK_sgeqrf(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, double* a, int lda, double* tau, double* work, int lwork, int* info) {
  LAPACK_dgeqrf(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, c64* a, int lda, c64* tau, c64* work, int lwork, int* info) {
  LAPACK_cgeqrf(&m, &n, a, &lda, tau, work, &lwork, info);
}
void geqrf(int m, int n, c128* a, int lda, c128* tau, c128* work, int lwork, int* info) {
  LAPACK_zgeqrf(&m, &n, a, &lda, tau, work, &lwork, info);
}

void geqp3(int m, int n, float* a, int lda, int* jpvt, float* tau, float* work, int lwork, float*, int* info) {
  LAPACK_sgeqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, info);
}
void geqp3(int m, int n, double* a, int lda, int* jpvt, double* tau, double* work, int lwork, double*, int* info) {
  LAPACK_dgeqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, info);
}
void geqp3(int m, int n, c64* a, int lda, int* jpvt, c64* tau, c64* work, int lwork, float* rwork, int* info) {
  LAPACK_cgeqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);
}
void geqp3(int m, int n, c128* a, int lda, int* jpvt, c128* tau, c128* work, int lwork, double* rwork, int* info) {
  LAPACK_zgeqp3(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);
}

void orgqr(int m, int n, int k, float* a, int lda, const float* tau, float* work, int lwork, int* info) {
  LAPACK_sorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, double* a, int lda, const double* tau, double* work, int lwork, int* info) {
  LAPACK_dorgqr(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, c64* a, int lda, const c64* tau, c64* work, int lwork, int* info) {
  LAPACK_cungqr(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void orgqr(int m, int n, int k, c128* a, int lda, const c128* tau, c128* work, int lwork, int* info) {
  LAPACK_zungqr(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}

void gesdd(char jobz, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* vt,
           int ldvt, float* work, int lwork, float*, int* iwork, int* info) {
  scipy_LAPACK_sgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info);
}
void gesdd(char jobz, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* vt,
           int ldvt, double* work, int lwork, double*, int* iwork, int* info) {
  scipy_LAPACK_dgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info);
}
void gesdd(char jobz, int m, int n, c64* a, int lda, float* s, c64* u, int ldu, c64* vt,
           int ldvt, c64* work, int lwork, float* rwork, int* iwork, int* info) {
  scipy_LAPACK_cgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info);
}
void gesdd(char jobz, int m, int n, c128* a, int lda, double* s, c128* u, int ldu, c128* vt,
           int ldvt, c128* work, int lwork, double* rwork, int* iwork, int* info) {
  scipy_LAPACK_zgesdd(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, info);
}

// gees without sorting: the real routines return eigenvalues as (wr, wi), the complex
// ones as w (wi unused).
void gees(char jobvs, int n, float* a, float* wr, float* wi, float* vs, int ldvs, float* work,
          int lwork, float*, int* info) {
  const char sort = 'N';
  int sdim = 0, bwork = 0;
  scipy_LAPACK_sgees(&jobvs, &sort, nullptr, &n, a, &n, &sdim, wr, wi, vs, &ldvs, work, &lwork, &bwork, info);
}
void gees(char jobvs, int n, double* a, double* wr, double* wi, double* vs, int ldvs,
          double* work, int lwork, double*, int* info) {
  const char sort = 'N';
  int sdim = 0, bwork = 0;
  scipy_LAPACK_dgees(&jobvs, &sort, nullptr, &n, a, &n, &sdim, wr, wi, vs, &ldvs, work, &lwork, &bwork, info);
}
void gees(char jobvs, int n, c64* a, c64* w, c64*, c64* vs, int ldvs, c64* work, int lwork,
          float* rwork, int* info) {
  const char sort = 'N';
  int sdim = 0, bwork = 0;
  scipy_LAPACK_cgees(&jobvs, &sort, nullptr, &n, a, &n, &sdim, w, vs, &ldvs, work, &lwork, rwork, &bwork, info);
}
void gees(char jobvs, int n, c128* a, c128* w, c128*, c128* vs, int ldvs, c128* work, int lwork,
          double* rwork, int* info) {
  const char sort = 'N';
  int sdim = 0, bwork = 0;
  scipy_LAPACK_zgees(&jobvs, &sort, nullptr, &n, a, &n, &sdim, w, vs, &ldvs, work, &lwork, rwork, &bwork, info);
}

void gehrd(int n, float* a, float* tau, float* work, int lwork, int* info) {
  int ilo = 1, ihi = n, lda = std::max(1, n);
  LAPACK_sgehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);
}
void gehrd(int n, double* a, double* tau, double* work, int lwork, int* info) {
  int ilo = 1, ihi = n, lda = std::max(1, n);
  LAPACK_dgehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);
}
void gehrd(int n, c64* a, c64* tau, c64* work, int lwork, int* info) {
  int ilo = 1, ihi = n, lda = std::max(1, n);
  LAPACK_cgehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);
}
void gehrd(int n, c128* a, c128* tau, c128* work, int lwork, int* info) {
  int ilo = 1, ihi = n, lda = std::max(1, n);
  LAPACK_zgehrd(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);
}

void sytrd(char uplo, int n, float* a, float* d, float* e, float* tau, float* work, int lwork, int* info) {
  int lda = std::max(1, n);
  scipy_LAPACK_ssytrd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info);
}
void sytrd(char uplo, int n, double* a, double* d, double* e, double* tau, double* work, int lwork, int* info) {
  int lda = std::max(1, n);
  scipy_LAPACK_dsytrd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info);
}
void sytrd(char uplo, int n, c64* a, float* d, float* e, c64* tau, c64* work, int lwork, int* info) {
  int lda = std::max(1, n);
  scipy_LAPACK_chetrd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info);
}
void sytrd(char uplo, int n, c128* a, double* d, double* e, c128* tau, c128* work, int lwork, int* info) {
  int lda = std::max(1, n);
  scipy_LAPACK_zhetrd(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info);
}

void gtsv(int n, int nrhs, float* dl, float* d, float* du, float* b, int ldb, int* info) {
  LAPACK_sgtsv(&n, &nrhs, dl, d, du, b, &ldb, info);
}
void gtsv(int n, int nrhs, double* dl, double* d, double* du, double* b, int ldb, int* info) {
  LAPACK_dgtsv(&n, &nrhs, dl, d, du, b, &ldb, info);
}
void gtsv(int n, int nrhs, c64* dl, c64* d, c64* du, c64* b, int ldb, int* info) {
  LAPACK_cgtsv(&n, &nrhs, dl, d, du, b, &ldb, info);
}
void gtsv(int n, int nrhs, c128* dl, c128* d, c128* du, c128* b, int ldb, int* info) {
  LAPACK_zgtsv(&n, &nrhs, dl, d, du, b, &ldb, info);
}

// Row-major trsm on B [rows x cols], rows ldb apart (CBLAS).
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int rows,
          int cols, const float* a, int lda, float* b, int ldb) {
  scipy_cblas_strsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, 1.0f, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int rows,
          int cols, const double* a, int lda, double* b, int ldb) {
  scipy_cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, 1.0, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int rows,
          int cols, const c64* a, int lda, c64* b, int ldb) {
  const c64 one(1);
  scipy_cblas_ctrsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, &one, a, lda, b, ldb);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int rows,
          int cols, const c128* a, int lda, c128* b, int ldb) {
  const c128 one(1);
  scipy_cblas_ztrsm(CblasRowMajor, side, uplo, trans, diag, rows, cols, &one, a, lda, b, ldb);
}

// Calls f(T{}) for the four LAPACK element types.
template <typename F>
void dispatch(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::C64: return f(c64{});
    case DType::C128: return f(c128{});
    default: throw_error(ErrorKind::TypeError, op, std::string(op) + ": unsupported dtype");
  }
}

template <typename T>
T* data_of(const Array& a) {
  return reinterpret_cast<T*>(a.mutable_data());
}

int64_t batch_of(const Array& x, int trailing) {
  int64_t inner = 1;
  const Shape& s = x.shape();
  for (size_t i = s.size() - size_t(trailing); i < s.size(); ++i) inner *= s[i];
  return inner ? x.size() / inner : 0;
}

int64_t rows_of(const Shape& s) { return s[s.size() - 2]; }

int64_t batch_count(const Shape& s, int trailing) {
  int64_t b = 1;
  for (size_t i = 0; i + size_t(trailing) < s.size(); ++i) b *= s[i];
  return b;
}

// A batch of m x n matrices, k = min(m, n).
struct Matrices {
  int64_t batch, m, n, k;
};

Matrices matrices_of(const Shape& s) {
  const int64_t m = rows_of(s), n = s.back();
  return {batch_count(s, 2), m, n, std::min(m, n)};
}

// Matrices up to this size are factored and solved by our own loops: a LAPACK call
// costs more than the arithmetic.
constexpr int64_t kSmall = 16;

// ---- lu ----

void permutation_of(const int32_t* piv, int64_t k, int32_t* perm, int64_t m) {
  std::iota(perm, perm + m, 0);
  for (int64_t i = 0; i < k; ++i) {
    const int32_t p = piv[i];
    if (p >= 0 && p < m) std::swap(perm[i], perm[p]);
  }
}

// Unblocked partial-pivoting LU of row-major `a` (m x n) in place.
template <typename T>
void lu_small(T* a, int64_t m, int64_t n, int32_t* piv) {
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    auto best = lapack::pivot_magnitude(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const auto mag = lapack::pivot_magnitude(a[i * n + j]);
      if (mag > best) best = mag, p = i;
    }
    piv[j] = int32_t(p);
    if (p != j) std::swap_ranges(a + j * n, a + j * n + n, a + p * n);
    // As LAPACK's getrf2: scaled by the reciprocal unless that would overflow.
    const T pivot = a[j * n + j];
    if (std::abs(pivot) >= std::numeric_limits<lapack::real_t<T>>::min()) {
      const T r = T(1) / pivot;
      for (int64_t i = j + 1; i < m; ++i) a[i * n + j] *= r;
    } else if (pivot != T(0)) {
      for (int64_t i = j + 1; i < m; ++i) a[i * n + j] /= pivot;
    }
    for (int64_t i = j + 1; i < m; ++i) {
      const T l = a[i * n + j];
      if (l == T(0)) continue;
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= l * a[j * n + c];
    }
  }
}

template <typename T>
void lu_typed(const Array& x, const std::vector<Array>& outs) {
  const Matrices d = matrices_of(x.shape());
  const int64_t batch = d.batch, m = d.m, n = d.n, k = d.k;
  const T* src = reinterpret_cast<const T*>(x.data());
  T* lu_out = data_of<T>(outs[0]);
  int32_t* piv_out = data_of<int32_t>(outs[1]);
  int32_t* perm_out = data_of<int32_t>(outs[2]);
  const bool small = m <= kSmall && n <= kSmall;
  // Square matrices up to kMaxSmallN are factored many at a time (batch-major).
  const bool batch_major = !is_complex_v<T> && m == n && m <= small::kMaxSmallN;
  const double flops = double(m * n * k);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    if constexpr (!is_complex_v<T>) {
      if (batch_major) {
        small::lu(src + begin * m * n, end - begin, n, lu_out + begin * m * n,
                  piv_out + begin * k);
        for (int64_t b = begin; b < end; ++b)
          permutation_of(piv_out + b * k, k, perm_out + b * m, m);
        return;
      }
    }
    std::vector<T> a(small ? 0 : size_t(m * n));
    std::vector<int> ipiv(small ? 0 : size_t(k));
    for (int64_t b = begin; b < end; ++b) {
      T* lu = lu_out + b * m * n;
      int32_t* piv = piv_out + b * k;
      if (small) {
        std::copy(src + b * m * n, src + (b + 1) * m * n, lu);
        lu_small(lu, m, n, piv);
      } else {
        transpose_into(src + b * m * n, a.data(), m, n);
        int info = 0;
        getrf(int(m), int(n), a.data(), int(std::max<int64_t>(1, m)), ipiv.data(), &info);
        transpose_into(a.data(), lu, n, m);
        for (int64_t i = 0; i < k; ++i) piv[i] = ipiv[size_t(i)] - 1;
      }
      permutation_of(piv, k, perm_out + b * m, m);
    }
  });
}

// ---- triangular_solve ----

// op(a) of an m x m matrix as a dense triangle (the other triangle zero), and whether that
// triangle is the lower one.
template <typename T>
bool effective_triangle(const T* a, int64_t m, const TriangularSolveFlags& f, T* t) {
  const bool lower = f.lower != f.transpose_a;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const bool inside = lower ? j <= i : j >= i;
      T v = inside ? (f.transpose_a ? a[j * m + i] : a[i * m + j]) : T(0);
      if (f.conjugate_a) v = conj_of(v);
      if (i == j && f.unit_diagonal) v = T(1);
      t[i * m + j] = v;
    }
  return lower;
}

// Substitution on row-major x (op(a) x = b on the left, x op(a) = b on the right), x
// holding b on entry; t is op(a) (m x m).
template <typename T>
void substitute(const T* t, int64_t m, bool lower, bool left, T* x, int64_t rows, int64_t cols) {
  if (left) {  // x: m x cols
    for (int64_t step = 0; step < m; ++step) {
      const int64_t i = lower ? step : m - 1 - step;
      T* xi = x + i * cols;
      const int64_t j0 = lower ? 0 : i + 1, j1 = lower ? i : m;
      for (int64_t j = j0; j < j1; ++j) {
        const T tij = t[i * m + j];
        if (tij == T(0)) continue;
        const T* xj = x + j * cols;
        for (int64_t c = 0; c < cols; ++c) xi[c] -= tij * xj[c];
      }
      const T d = t[i * m + i];
      for (int64_t c = 0; c < cols; ++c) xi[c] /= d;
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {  // x: rows x m
    T* xr = x + r * m;
    for (int64_t step = 0; step < m; ++step) {
      const int64_t j = lower ? m - 1 - step : step;
      T acc = xr[j];
      const int64_t i0 = lower ? j + 1 : 0, i1 = lower ? m : j;
      for (int64_t i = i0; i < i1; ++i) acc -= xr[i] * t[i * m + j];
      xr[j] = acc / t[j * m + j];
    }
  }
}

template <typename T>
void triangular_solve_typed(const Array& a, const Array& b, const TriangularSolveFlags& f,
                            const Array& out) {
  const Shape& bs = b.shape();
  const int64_t m = a.shape().back();
  const int64_t rows = bs[bs.size() - 2], cols = bs.back();
  const int64_t batch = batch_count(bs, 2);
  const T* a_data = reinterpret_cast<const T*>(a.data());
  const T* b_data = reinterpret_cast<const T*>(b.data());
  T* x_out = data_of<T>(out);
  const bool small = m <= kSmall;
  // Up to kMaxSmallN x kMaxSmallCols: many matrices at a time (batch-major).
  const bool batch_major = !is_complex_v<T> && m <= small::kMaxSmallN && rows > 0 && cols > 0 &&
                           (f.left_side ? cols : rows) <= small::kMaxSmallCols;
  const double flops = double(m * m * (f.left_side ? cols : rows));
  lapack::for_matrices(batch, grain_for(flops), flops,
               [&](int64_t begin, int64_t end) {
    if constexpr (!is_complex_v<T>) {
      if (batch_major) {
        small::triangular_solve(a_data + begin * m * m, b_data + begin * rows * cols,
                                end - begin, m, rows, cols, f, x_out + begin * rows * cols);
        return;
      }
    }
    std::vector<T> t(small || (f.conjugate_a && !f.transpose_a) ? size_t(m * m) : 0);
    for (int64_t bi = begin; bi < end; ++bi) {
      const T* am = a_data + bi * m * m;
      T* x = x_out + bi * rows * cols;
      std::copy(b_data + bi * rows * cols, b_data + (bi + 1) * rows * cols, x);
      if (rows == 0 || cols == 0) continue;
      if (small) {
        const bool lower = effective_triangle(am, m, f, t.data());
        substitute(t.data(), m, lower, f.left_side, x, rows, cols);
        continue;
      }
      const T* op_a = am;
      CBLAS_TRANSPOSE trans = f.transpose_a ? (f.conjugate_a ? CblasConjTrans : CblasTrans)
                                            : CblasNoTrans;
      if (f.conjugate_a && !f.transpose_a) {
        for (int64_t i = 0; i < m * m; ++i) t[size_t(i)] = conj_of(am[i]);
        op_a = t.data();
      }
      trsm(f.left_side ? CblasLeft : CblasRight, f.lower ? CblasLower : CblasUpper, trans,
           f.unit_diagonal ? CblasUnit : CblasNonUnit, int(rows), int(cols), op_a, int(m), x,
           int(cols));
    }
  });
}

// Columns (rows, on the right side) of the right-hand side a worker solves at a time.
constexpr int64_t kRhsBlock = 128;

// One large system with many right-hand sides: they are independent, so blocks of them
// are solved on the pool's threads (as gemm runs), one single-threaded trsm each.
template <typename T>
bool triangular_solve_split(const Array& a, const Array& b, const TriangularSolveFlags& f,
                            const Array& out) {
  const Shape& bs = b.shape();
  const int64_t m = a.shape().back(), rows = bs[bs.size() - 2], cols = bs.back();
  const int64_t rhs = f.left_side ? cols : rows;
  if (batch_count(bs, 2) != 1 || m <= kSmall || rhs < 2 * kRhsBlock || pool_size() < 2 ||
      double(m) * double(m) * double(rhs) < 1e7)
    return false;
  const T* am = reinterpret_cast<const T*>(a.data());
  T* x = data_of<T>(out);
  const T* bm = reinterpret_cast<const T*>(b.data());
  if (bm != x) std::copy(bm, bm + rows * cols, x);
  std::vector<T> conj_a;
  if (f.conjugate_a && !f.transpose_a) {
    conj_a.resize(size_t(m * m));
    for (int64_t i = 0; i < m * m; ++i) conj_a[size_t(i)] = conj_of(am[i]);
    am = conj_a.data();
  }
  const CBLAS_TRANSPOSE trans = f.transpose_a ? (f.conjugate_a ? CblasConjTrans : CblasTrans)
                                              : CblasNoTrans;
  const int64_t blocks = (rhs + kRhsBlock - 1) / kRhsBlock;
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    lapack::on_one_thread();
    const int64_t first = b0 * kRhsBlock, count = std::min(rhs, b1 * kRhsBlock) - first;
    trsm(f.left_side ? CblasLeft : CblasRight, f.lower ? CblasLower : CblasUpper, trans,
         f.unit_diagonal ? CblasUnit : CblasNonUnit, int(f.left_side ? rows : count),
         int(f.left_side ? count : cols), am, int(m), x + (f.left_side ? first : first * cols),
         int(cols));
  }, /*long_chunks=*/true);
  return true;
}

// ---- geqrf / geqp3 / householder_product ----

template <typename T>
void geqrf_typed(const Array& x, const std::vector<Array>& outs) {
  const Matrices d = matrices_of(x.shape());
  const int64_t batch = d.batch, m = d.m, n = d.n, k = d.k;
  const T* src = reinterpret_cast<const T*>(x.data());
  T* a_out = data_of<T>(outs[0]);
  T* tau_out = data_of<T>(outs[1]);
  const int lda = int(std::max<int64_t>(1, m));
  const double flops = double(m * n * k);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, m * n)));
    T query{};
    int info = 0;
    geqrf(int(m), int(n), a.data(), lda, tau_out, &query, -1, &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      transpose_into(src + b * m * n, a.data(), m, n);
      geqrf(int(m), int(n), a.data(), lda, tau_out + b * k, work.data(), int(work.size()), &info);
      transpose_into(a.data(), a_out + b * m * n, n, m);
    }
  });
}

template <typename T>
void geqp3_typed(const Array& x, const Array& jpvt, const std::vector<Array>& outs) {
  using R = real_t<T>;
  const Matrices d = matrices_of(x.shape());
  const int64_t batch = d.batch, m = d.m, n = d.n, k = d.k;
  const T* src = reinterpret_cast<const T*>(x.data());
  const Array jp = dense(jpvt);
  const int32_t* jp_in = reinterpret_cast<const int32_t*>(jp.data());
  T* a_out = data_of<T>(outs[0]);
  int32_t* jp_out = data_of<int32_t>(outs[1]);
  T* tau_out = data_of<T>(outs[2]);
  const int lda = int(std::max<int64_t>(1, m));
  const double flops = double(m * n * k);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, m * n)));
    std::vector<R> rwork(size_t(2 * n + 1));
    std::vector<int> piv(size_t(n + 1));
    T query{};
    int info = 0;
    geqp3(int(m), int(n), a.data(), lda, piv.data(), tau_out, &query, -1, rwork.data(), &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      transpose_into(src + b * m * n, a.data(), m, n);
      std::copy(jp_in + b * n, jp_in + (b + 1) * n, piv.begin());
      geqp3(int(m), int(n), a.data(), lda, piv.data(), tau_out + b * k, work.data(),
            int(work.size()), rwork.data(), &info);
      transpose_into(a.data(), a_out + b * m * n, n, m);
      std::copy(piv.begin(), piv.begin() + n, jp_out + b * n);
    }
  });
}

template <typename T>
void householder_product_typed(const Array& x, const Array& taus, const Array& out) {
  const Matrices d = matrices_of(x.shape());
  const int64_t batch = d.batch, m = d.m, n = d.n, k = taus.shape().back();
  const T* src = reinterpret_cast<const T*>(x.data());
  const Array t = dense(taus);
  const T* tau = reinterpret_cast<const T*>(t.data());
  T* q_out = data_of<T>(out);
  const int lda = int(std::max<int64_t>(1, m));
  const double flops = double(m * n * k);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, m * n)));
    T query{};
    int info = 0;
    orgqr(int(m), int(n), int(k), a.data(), lda, tau, &query, -1, &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      transpose_into(src + b * m * n, a.data(), m, n);
      orgqr(int(m), int(n), int(k), a.data(), lda, tau + b * k, work.data(), int(work.size()),
            &info);
      transpose_into(a.data(), q_out + b * m * n, n, m);
    }
  });
}

// ---- svd ----

// gesdd of the row-major m x n matrix read as its column-major n x m transpose A^T =
// U' S VT': then A = VT'^T S U'^T, so VT' read row-major is u and U' read row-major is vt.
template <typename T>
void svd_typed(const Array& x, bool full, bool compute_uv, const std::vector<Array>& outs) {
  using R = real_t<T>;
  const Matrices d = matrices_of(x.shape());
  const int64_t batch = d.batch, m = d.m, n = d.n, k = d.k;
  const int64_t mx = std::max(m, n);
  const T* src = reinterpret_cast<const T*>(x.data());
  R* s_out = data_of<R>(outs[0]);
  T* u_out = compute_uv ? data_of<T>(outs[1]) : nullptr;
  T* vt_out = compute_uv ? data_of<T>(outs[2]) : nullptr;
  const char jobz = compute_uv ? (full ? 'A' : 'S') : 'N';
  const int64_t ucols = full ? m : k, vrows = full ? n : k;
  // LAPACK's m and n are ours swapped.
  const int lm = int(n), ln = int(m), lda = int(std::max<int64_t>(1, n));
  const int ldu = int(std::max<int64_t>(1, n)), ldvt = int(std::max<int64_t>(1, full ? m : k));
  const double flops = double(4 * m * n * k);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, m * n)));
    std::vector<T> u(compute_uv ? size_t(std::max<int64_t>(1, n * vrows)) : 1);
    std::vector<T> vt(compute_uv ? size_t(std::max<int64_t>(1, ucols * m)) : 1);
    std::vector<R> rwork(is_complex_v<T> ? size_t(std::max(5 * k * k + 7 * k, 2 * mx * k + 2 * k * k + k) + 8) : 1);
    std::vector<int> iwork(size_t(8 * k + 8));
    std::vector<R> sv(size_t(k + 1));
    T query{};
    int info = 0;
    gesdd(jobz, lm, ln, a.data(), lda, sv.data(), u.data(), ldu, vt.data(), ldvt, &query, -1,
          rwork.data(), iwork.data(), &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      const T* am = src + b * m * n;
      R* sb = s_out + b * k;
      info = 0;
      const bool finite = lapack::all_finite(am, m * n);
      if (finite) {
        std::copy(am, am + m * n, a.begin());
        gesdd(jobz, lm, ln, a.data(), lda, sb, u.data(), ldu, vt.data(), ldvt, work.data(),
              int(work.size()), rwork.data(), iwork.data(), &info);
      }
      const bool ok = finite && info == 0;
      if (!ok) std::fill(sb, sb + k, nan_value<R>());
      if (!compute_uv) continue;
      T* ub = u_out + b * m * ucols;
      T* vb = vt_out + b * vrows * n;
      if (ok) {
        std::copy(vt.begin(), vt.begin() + m * ucols, ub);
        std::copy(u.begin(), u.begin() + vrows * n, vb);
      } else {
        std::fill(ub, ub + m * ucols, nan_value<T>());
        std::fill(vb, vb + vrows * n, nan_value<T>());
      }
    }
  });
}

// ---- schur / hessenberg / tridiagonal ----

template <typename T>
void schur_typed(const Array& x, bool vectors, const std::vector<Array>& outs) {
  using R = real_t<T>;
  const int64_t n = x.shape().back(), nn = n * n;
  const int64_t batch = batch_count(x.shape(), 2);
  const T* src = reinterpret_cast<const T*>(x.data());
  T* t_out = data_of<T>(outs[0]);
  T* vs_out = vectors ? data_of<T>(outs[1]) : nullptr;
  const char jobvs = vectors ? 'V' : 'N';
  const int ldvs = vectors ? int(std::max<int64_t>(1, n)) : 1;
  const double flops = double(10 * nn * n);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, nn))), w(size_t(n + 1)), wi(size_t(n + 1));
    std::vector<T> vs(vectors ? size_t(std::max<int64_t>(1, nn)) : 1);
    std::vector<R> rwork(size_t(n + 1));
    T query{};
    int info = 0;
    gees(jobvs, int(n), a.data(), w.data(), wi.data(), vs.data(), ldvs, &query, -1,
         rwork.data(), &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      const T* am = src + b * nn;
      info = 0;
      const bool finite = lapack::all_finite(am, nn);
      if (finite) {
        transpose_into(am, a.data(), n);
        gees(jobvs, int(n), a.data(), w.data(), wi.data(), vs.data(), ldvs, work.data(),
             int(work.size()), rwork.data(), &info);
      }
      const bool ok = finite && info == 0;
      T* t = t_out + b * nn;
      if (ok) transpose_into(a.data(), t, n);
      else std::fill(t, t + nn, nan_value<T>());
      if (!vectors) continue;
      T* v = vs_out + b * nn;
      if (ok) transpose_into(vs.data(), v, n);
      else std::fill(v, v + nn, nan_value<T>());
    }
  });
}

template <typename T>
void hessenberg_typed(const Array& x, const std::vector<Array>& outs) {
  const int64_t n = x.shape().back(), nn = n * n, nt = std::max<int64_t>(0, n - 1);
  const int64_t batch = batch_count(x.shape(), 2);
  const T* src = reinterpret_cast<const T*>(x.data());
  T* a_out = data_of<T>(outs[0]);
  T* tau_out = data_of<T>(outs[1]);
  const double flops = double(4 * nn * n);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, nn))), tau(size_t(n + 1));
    T query{};
    int info = 0;
    gehrd(int(n), a.data(), tau.data(), &query, -1, &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      transpose_into(src + b * nn, a.data(), n);
      gehrd(int(n), a.data(), tau.data(), work.data(), int(work.size()), &info);
      transpose_into(a.data(), a_out + b * nn, n);
      std::copy(tau.begin(), tau.begin() + nt, tau_out + b * nt);
    }
  });
}

template <typename T>
void tridiagonal_typed(const Array& x, bool lower, const std::vector<Array>& outs) {
  using R = real_t<T>;
  const int64_t n = x.shape().back(), nn = n * n, nt = std::max<int64_t>(0, n - 1);
  const int64_t batch = batch_count(x.shape(), 2);
  const T* src = reinterpret_cast<const T*>(x.data());
  T* a_out = data_of<T>(outs[0]);
  R* d_out = data_of<R>(outs[1]);
  R* e_out = data_of<R>(outs[2]);
  T* tau_out = data_of<T>(outs[3]);
  const char uplo = lower ? 'L' : 'U';
  const double flops = double(4 * nn * n);
  lapack::for_matrices(batch, grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    std::vector<T> a(size_t(std::max<int64_t>(1, nn))), tau(size_t(n + 1));
    std::vector<R> e(size_t(n + 1));
    T query{};
    int info = 0;
    sytrd(uplo, int(n), a.data(), d_out, e.data(), tau.data(), &query, -1, &info);
    std::vector<T> work(size_t(query_size(query)));
    for (int64_t b = begin; b < end; ++b) {
      transpose_into(src + b * nn, a.data(), n);
      sytrd(uplo, int(n), a.data(), d_out + b * n, e.data(), tau.data(), work.data(),
            int(work.size()), &info);
      transpose_into(a.data(), a_out + b * nn, n);
      std::copy(e.begin(), e.begin() + nt, e_out + b * nt);
      std::copy(tau.begin(), tau.begin() + nt, tau_out + b * nt);
    }
  });
}

// ---- tridiagonal_solve ----

template <typename T>
void tridiagonal_solve_typed(const Array& dl_a, const Array& d_a, const Array& du_a,
                             const Array& b_a, const Array& out) {
  const Shape& bs = b_a.shape();
  const int64_t m = bs[bs.size() - 2], nrhs = bs.back();
  const int64_t batch = batch_count(bs, 2);
  const Array dl_d = dense(dl_a), d_d = dense(d_a), du_d = dense(du_a);
  const T* dl_in = reinterpret_cast<const T*>(dl_d.data());
  const T* d_in = reinterpret_cast<const T*>(d_d.data());
  const T* du_in = reinterpret_cast<const T*>(du_d.data());
  const T* b_in = reinterpret_cast<const T*>(b_a.data());
  T* x_out = data_of<T>(out);
  const double flops = double(8 * m * std::max<int64_t>(nrhs, 1));
  lapack::for_matrices(batch, grain_for(flops), flops,
               [&](int64_t begin, int64_t end) {
    std::vector<T> dl(size_t(m + 1)), d(size_t(m + 1)), du(size_t(m + 1));
    std::vector<T> b(size_t(std::max<int64_t>(1, m * nrhs)));
    for (int64_t bi = begin; bi < end; ++bi) {
      // LAPACK's sub-diagonal is ours without its first (ignored) element.
      std::copy(dl_in + bi * m + std::min<int64_t>(1, m), dl_in + (bi + 1) * m, dl.begin());
      std::copy(d_in + bi * m, d_in + (bi + 1) * m, d.begin());
      std::copy(du_in + bi * m, du_in + (bi + 1) * m, du.begin());
      transpose_into(b_in + bi * m * nrhs, b.data(), m, nrhs);
      int info = 0;
      gtsv(int(m), int(nrhs), dl.data(), d.data(), du.data(), b.data(),
           int(std::max<int64_t>(1, m)), &info);
      T* x = x_out + bi * m * nrhs;
      if (info != 0) std::fill(x, x + m * nrhs, nan_value<T>());
      else transpose_into(b.data(), x, nrhs, m);
    }
  });
}

// Each trailing [r, c] matrix of `out` set to the identity.
void iota_identity(const Array& out) {
  const Shape& s = out.shape();
  const int64_t r = rows_of(s), c = s.back();
  if (out.size() == 0) return;
  dispatch(out.dtype(), "svd", [&](auto t) {
    using T = decltype(t);
    T* o = data_of<T>(out);
    for (int64_t b = 0, count = batch_count(s, 2); b < count; ++b)
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) o[(b * r + i) * c + j] = T(i == j ? 1 : 0);
  });
}

}  // namespace

void lu(const Array& x, const std::vector<Array>& outs) {
  const Array a = dense(x);
  if (batch_of(a, 2) == 0 && a.size() == 0) {
    // Empty matrices still have permutations (iota) when they have rows.
    const Shape& s = a.shape();
    const int64_t m = s[s.size() - 2];
    int32_t* perm = data_of<int32_t>(outs[2]);
    for (int64_t b = 0, count = batch_count(s, 2); b < count; ++b) std::iota(perm + b * m, perm + (b + 1) * m, 0);
    return;
  }
  dispatch(a.dtype(), "lu", [&](auto t) { lu_typed<decltype(t)>(a, outs); });
}

void lu_pivots_to_permutation(const Array& pivots, const Array& out) {
  const Array p = dense(pivots);
  const int64_t k = p.shape().back(), m = out.shape().back();
  const int64_t batch = batch_count(out.shape(), 1);
  const int32_t* piv = reinterpret_cast<const int32_t*>(p.data());
  int32_t* perm = data_of<int32_t>(out);
  for (int64_t b = 0; b < batch; ++b) permutation_of(piv + b * k, k, perm + b * m, m);
}

void triangular_solve(const Array& a, const Array& b, const TriangularSolveFlags& flags,
                      const Array& out) {
  if (out.size() == 0) return;
  const Array ad = dense(a), bd = dense(b);
  dispatch(a.dtype(), "triangular_solve",
           [&](auto t) {
             if (!triangular_solve_split<decltype(t)>(ad, bd, flags, out))
               triangular_solve_typed<decltype(t)>(ad, bd, flags, out);
           });
}

void geqrf(const Array& x, const std::vector<Array>& outs) {
  if (x.size() == 0) return;
  const Array a = dense(x);
  dispatch(a.dtype(), "geqrf", [&](auto t) { geqrf_typed<decltype(t)>(a, outs); });
}

void geqp3(const Array& x, const Array& jpvt, const std::vector<Array>& outs) {
  if (x.size() == 0) {
    copy(jpvt, outs[1]);
    return;
  }
  const Array a = dense(x);
  dispatch(a.dtype(), "geqp3", [&](auto t) { geqp3_typed<decltype(t)>(a, jpvt, outs); });
}

void householder_product(const Array& a, const Array& taus, const Array& out) {
  if (a.size() == 0) return;
  const Array ad = dense(a);
  dispatch(ad.dtype(), "householder_product",
           [&](auto t) { householder_product_typed<decltype(t)>(ad, taus, out); });
}

void svd(const Array& x, bool full_matrices, bool compute_uv, const std::vector<Array>& outs) {
  if (x.size() == 0) {
    // No singular values; full u and vt are identities (JAX's _empty_svd).
    if (compute_uv)
      for (size_t i = 1; i < 3; ++i) iota_identity(outs[i]);
    return;
  }
  const Array a = dense(x);
  dispatch(a.dtype(), "svd",
           [&](auto t) { svd_typed<decltype(t)>(a, full_matrices, compute_uv, outs); });
}

void schur(const Array& x, bool compute_vectors, const std::vector<Array>& outs) {
  if (x.size() == 0) return;
  const Array a = dense(x);
  dispatch(a.dtype(), "schur", [&](auto t) { schur_typed<decltype(t)>(a, compute_vectors, outs); });
}

void hessenberg(const Array& x, const std::vector<Array>& outs) {
  if (x.size() == 0) return;
  const Array a = dense(x);
  dispatch(a.dtype(), "hessenberg", [&](auto t) { hessenberg_typed<decltype(t)>(a, outs); });
}

void tridiagonal(const Array& x, bool lower, const std::vector<Array>& outs) {
  if (x.size() == 0) return;
  const Array a = dense(x);
  dispatch(a.dtype(), "tridiagonal", [&](auto t) { tridiagonal_typed<decltype(t)>(a, lower, outs); });
}

void tridiagonal_solve(const Array& dl, const Array& d, const Array& du, const Array& b,
                       const Array& out) {
  if (out.size() == 0) return;
  const Array bd = dense(b);
  dispatch(bd.dtype(), "tridiagonal_solve",
           [&](auto t) { tridiagonal_solve_typed<decltype(t)>(dl, d, du, bd, out); });
}

}  // namespace tinyxla::cpu
