// Dense linear algebra on batches of square matrices through OpenBLAS's LAPACK:
// lax.linalg.eig (geev), lax.linalg.eigh (syevd / heevd) and lax.linalg.cholesky (potrf). Our arrays are row-major and
// LAPACK's column-major, so each matrix is transposed into a scratch copy on the way in
// and each matrix result on the way out (except for cholesky, which needs no transpose). A matrix whose factorization fails (LAPACK info
// != 0, or non-finite input to geev) gets NaN results, as JAX on CPU, never an error.
// Matrices of a batch are independent work items spread over the thread pool.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "../core/thread_pool.h"
#include "kernels.h"
#include "lapack.h"

namespace tinyxla::cpu {

namespace lapack {

Array dense(const Array& x) {
  if (x.is_contiguous()) return x;
  Array d(x.shape(), x.dtype(), x.device(), Event::ready());
  copy(x, d);
  return d;
}

namespace {

// From this many flops one matrix is worth OpenBLAS's threads (a 256 x 256 LU is ~1e7).
constexpr double kThreadedFlops = 1e7;
// OpenBLAS's threads busy-wait (yielding) up to this long after a threaded call before they
// sleep (2^22 cycles: tinyxla/__init__.py loads it with OPENBLAS_THREAD_TIMEOUT=22); a call
// within it counts them as running but not as holding a core.
constexpr auto kBlasSpin = std::chrono::milliseconds(3);

std::mutex threaded_mu;  // one threaded LAPACK call at a time: the thread count is global
std::chrono::steady_clock::time_point threaded_end;
int threaded_count = 1;

}  // namespace

void for_matrices(int64_t batch, int64_t grain, double flops,
                  const std::function<void(int64_t, int64_t)>& fn) {
  on_one_thread();
  if (batch == 1 && flops >= kThreadedFlops && pool_size() > 1) {
    std::unique_lock<std::mutex> lock(threaded_mu, std::try_to_lock);
    if (lock.owns_lock()) {
      const bool spinning = std::chrono::steady_clock::now() - threaded_end < kBlasSpin;
      const int threads = free_threads(spinning ? threaded_count - 1 : 0);
      if (threads > 1) {
        scipy_openblas_set_num_threads(threads);
        try {
          fn(0, 1);
        } catch (...) {
          scipy_openblas_set_num_threads(1);
          throw;
        }
        scipy_openblas_set_num_threads(1);
        threaded_end = std::chrono::steady_clock::now();
        threaded_count = threads;
        return;
      }
    }
  }
  parallel_for(batch, grain, [&](int64_t begin, int64_t end) {
    on_one_thread();
    fn(begin, end);
  });
}

}  // namespace lapack

namespace {

using lapack::all_finite;
using lapack::dense;
using lapack::is_complex_v;
using lapack::nan_value;
using lapack::query_size;
using lapack::real_t;
using lapack::transpose_into;


// ---- geev ----

template <typename T>
struct Geev;

template <>
struct Geev<float> {
  static void run(char jl, char jr, int n, float* a, float* wr, float* wi, float* vl, int ldvl,
                  float* vr, int ldvr, float* work, int lwork, float*, int* info) {
    scipy_LAPACK_sgeev(&jl, &jr, &n, a, &n, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info);
  }
};
template <>
struct Geev<double> {
  static void run(char jl, char jr, int n, double* a, double* wr, double* wi, double* vl,
                  int ldvl, double* vr, int ldvr, double* work, int lwork, double*, int* info) {
    scipy_LAPACK_dgeev(&jl, &jr, &n, a, &n, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info);
  }
};
template <>
struct Geev<complex64> {
  static void run(char jl, char jr, int n, complex64* a, complex64* w, complex64*, complex64* vl,
                  int ldvl, complex64* vr, int ldvr, complex64* work, int lwork, float* rwork,
                  int* info) {
    scipy_LAPACK_cgeev(&jl, &jr, &n, a, &n, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info);
  }
};
template <>
struct Geev<complex128> {
  static void run(char jl, char jr, int n, complex128* a, complex128* w, complex128*,
                  complex128* vl, int ldvl, complex128* vr, int ldvr, complex128* work,
                  int lwork, double* rwork, int* info) {
    scipy_LAPACK_zgeev(&jl, &jr, &n, a, &n, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info);
  }
};

// Row-major complex eigenvectors from LAPACK's column-major `v`. Real geev packs a
// conjugate pair (w[j], w[j+1] = conj(w[j]), wi[j] > 0) as columns j (real part) and j+1
// (imaginary part).
template <typename R>
void unpack_real_vectors(const R* v, const R* wi, std::complex<R>* out, int64_t n) {
  for (int64_t j = 0; j < n;) {
    if (wi[j] == R(0) || j + 1 == n) {
      for (int64_t i = 0; i < n; ++i) out[i * n + j] = {v[i + j * n], R(0)};
      ++j;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const R re = v[i + j * n], im = v[i + (j + 1) * n];
        out[i * n + j] = {re, im};
        out[i * n + j + 1] = {re, -im};
      }
      j += 2;
    }
  }
}

// One geev call's scratch, sized once per work item (all matrices of a batch share n).
template <typename T>
struct GeevScratch {
  using R = real_t<T>;
  int n = 0, lwork = 1;
  std::vector<T> a, w, wi, vl, vr, work;
  std::vector<R> rwork;

  GeevScratch(int n_, char jl, char jr) : n(n_) {
    const size_t nn = size_t(n) * size_t(n);
    a.resize(nn);
    w.resize(size_t(n));
    wi.resize(size_t(n));
    vl.resize(jl == 'V' ? nn : 1);
    vr.resize(jr == 'V' ? nn : 1);
    if constexpr (is_complex_v<T>) rwork.resize(2 * size_t(n));
    T query{};
    int info = 0;
    Geev<T>::run(jl, jr, n, a.data(), w.data(), wi.data(), vl.data(), jl == 'V' ? n : 1,
                 vr.data(), jr == 'V' ? n : 1, &query, -1, rwork.data(), &info);
    lwork = query_size(query);
    work.resize(size_t(lwork));
  }
};

template <typename T>
void eig_typed(const T* x, int64_t batch, int64_t n64, bool left, bool right,
               const std::vector<Array>& outs) {
  using C = std::conditional_t<is_complex_v<T>, T, std::complex<T>>;
  const int n = lapack::dim("eig", n64);
  const int64_t nn = n64 * n64;
  C* w_out = reinterpret_cast<C*>(outs[0].mutable_data());
  C* vl_out = left ? reinterpret_cast<C*>(outs[1].mutable_data()) : nullptr;
  C* vr_out = right ? reinterpret_cast<C*>(outs[left ? 2 : 1].mutable_data()) : nullptr;
  const char jl = left ? 'V' : 'N', jr = right ? 'V' : 'N';
  // Roughly 10 n^3 flops a matrix: one matrix per work item unless they are tiny.
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(nn * n64, 1));
  lapack::for_matrices(batch, grain, 10.0 * double(nn * n64), [&](int64_t begin, int64_t end) {
    GeevScratch<T> s(n, jl, jr);
    for (int64_t b = begin; b < end; ++b) {
      const T* src = x + b * nn;
      C* w = w_out + b * n64;
      C* vl = vl_out ? vl_out + b * nn : nullptr;
      C* vr = vr_out ? vr_out + b * nn : nullptr;
      int info = 0;
      const bool finite = all_finite(src, nn);
      if (finite) {
        transpose_into(src, s.a.data(), n64);
        Geev<T>::run(jl, jr, n, s.a.data(), s.w.data(), s.wi.data(), s.vl.data(),
                     left ? n : 1, s.vr.data(), right ? n : 1, s.work.data(), s.lwork,
                     s.rwork.data(), &info);
      }
      if (!finite || info != 0) {
        std::fill(w, w + n64, nan_value<C>());
        if (vl) std::fill(vl, vl + nn, nan_value<C>());
        if (vr) std::fill(vr, vr + nn, nan_value<C>());
        continue;
      }
      if constexpr (is_complex_v<T>) {
        std::copy(s.w.begin(), s.w.end(), w);
        if (vl) transpose_into(s.vl.data(), vl, n64);  // its own transpose back
        if (vr) transpose_into(s.vr.data(), vr, n64);
      } else {
        for (int64_t j = 0; j < n64; ++j) w[j] = C(s.w[size_t(j)], s.wi[size_t(j)]);
        if (vl) unpack_real_vectors(s.vl.data(), s.wi.data(), vl, n64);
        if (vr) unpack_real_vectors(s.vr.data(), s.wi.data(), vr, n64);
      }
    }
  });
}

// ---- syevd / heevd ----

template <typename T>
struct Syevd;

template <>
struct Syevd<float> {
  static void run(char uplo, int n, float* a, float* w, float* work, int lwork, float*, int,
                  int* iwork, int liwork, int* info) {
    const char jobz = 'V';
    scipy_LAPACK_ssyevd(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info);
  }
};
template <>
struct Syevd<double> {
  static void run(char uplo, int n, double* a, double* w, double* work, int lwork, double*, int,
                  int* iwork, int liwork, int* info) {
    const char jobz = 'V';
    scipy_LAPACK_dsyevd(&jobz, &uplo, &n, a, &n, w, work, &lwork, iwork, &liwork, info);
  }
};
template <>
struct Syevd<complex64> {
  static void run(char uplo, int n, complex64* a, float* w, complex64* work, int lwork,
                  float* rwork, int lrwork, int* iwork, int liwork, int* info) {
    const char jobz = 'V';
    scipy_LAPACK_cheevd(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info);
  }
};
template <>
struct Syevd<complex128> {
  static void run(char uplo, int n, complex128* a, double* w, complex128* work, int lwork,
                  double* rwork, int lrwork, int* iwork, int liwork, int* info) {
    const char jobz = 'V';
    scipy_LAPACK_zheevd(&jobz, &uplo, &n, a, &n, w, work, &lwork, rwork, &lrwork, iwork, &liwork, info);
  }
};

template <typename T>
struct SyevdScratch {
  using R = real_t<T>;
  int lwork = 1, lrwork = 1, liwork = 1;
  std::vector<T> a, work;
  std::vector<R> w, rwork;
  std::vector<int> iwork;

  SyevdScratch(int n, char uplo) {
    a.resize(size_t(n) * size_t(n));
    w.resize(size_t(n));
    T qwork{};
    R qrwork{};
    int qiwork = 0, info = 0;
    Syevd<T>::run(uplo, n, a.data(), w.data(), &qwork, -1, &qrwork, -1, &qiwork, -1, &info);
    lwork = query_size(qwork);
    lrwork = query_size(qrwork);
    liwork = std::max(1, qiwork);
    work.resize(size_t(lwork));
    rwork.resize(size_t(lrwork));
    iwork.resize(size_t(liwork));
  }
};

template <typename T>
void eigh_typed(const T* x, int64_t batch, int64_t n64, bool lower,
                const std::vector<Array>& outs) {
  using R = real_t<T>;
  const int n = lapack::dim("eigh", n64);
  const int64_t nn = n64 * n64;
  T* v_out = reinterpret_cast<T*>(outs[0].mutable_data());
  R* w_out = reinterpret_cast<R*>(outs[1].mutable_data());
  // The scratch copy is the matrix itself in column-major order, so LAPACK's triangle is ours.
  const char uplo = lower ? 'L' : 'U';
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(nn * n64, 1));
  lapack::for_matrices(batch, grain, 10.0 * double(nn * n64), [&](int64_t begin, int64_t end) {
    SyevdScratch<T> s(n, uplo);
    for (int64_t b = begin; b < end; ++b) {
      T* v = v_out + b * nn;
      R* w = w_out + b * n64;
      transpose_into(x + b * nn, s.a.data(), n64);
      int info = 0;
      Syevd<T>::run(uplo, n, s.a.data(), w, s.work.data(), s.lwork, s.rwork.data(), s.lrwork,
                    s.iwork.data(), s.liwork, &info);
      if (info != 0) {
        std::fill(w, w + n64, nan_value<R>());
        std::fill(v, v + nn, nan_value<T>());
        continue;
      }
      transpose_into(s.a.data(), v, n64);
    }
  });
}

// ---- potrf ----

template <typename T>
struct Potrf;
template <>
struct Potrf<float> {
  static void run(char uplo, int n, float* a, int* info) { scipy_LAPACK_spotrf(&uplo, &n, a, &n, info); }
};
template <>
struct Potrf<double> {
  static void run(char uplo, int n, double* a, int* info) { scipy_LAPACK_dpotrf(&uplo, &n, a, &n, info); }
};
template <>
struct Potrf<complex64> {
  static void run(char uplo, int n, complex64* a, int* info) {
    scipy_LAPACK_cpotrf(&uplo, &n, a, &n, info);
  }
};
template <>
struct Potrf<complex128> {
  static void run(char uplo, int n, complex128* a, int* info) {
    scipy_LAPACK_zpotrf(&uplo, &n, a, &n, info);
  }
};

// Each matrix's lower factor L (A = L L^H, read from A's lower triangle), zero above the
// diagonal; NaN on and below it where the matrix is not positive definite.
template <typename T>
void cholesky_typed(const T* x, int64_t batch, int64_t n64, T* out) {
  const int n = lapack::dim("cholesky", n64);
  const int64_t nn = n64 * n64;
  // About n^3 / 3 flops a matrix.
  const int64_t grain = std::max<int64_t>(1, 3 * 4096 / std::max<int64_t>(nn * n64, 1));
  // Read column-major, a row-major matrix's lower triangle is the upper one, and the upper
  // factor U found there (A = U^H U of that reading) is, read back row-major, L = U^T with
  // A = L L^H: so potrf('U') runs in place on a plain copy, with no transposes.
  lapack::for_matrices(batch, grain, double(nn * n64) / 3, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      T* l = out + b * nn;
      if (l != x + b * nn) std::copy(x + b * nn, x + (b + 1) * nn, l);
      int info = 0;
      Potrf<T>::run('U', n, l, &info);
      for (int64_t i = 0; i < n64; ++i) {
        if (info != 0) std::fill(l + i * n64, l + i * n64 + i + 1, nan_value<T>());
        std::fill(l + i * n64 + i + 1, l + (i + 1) * n64, T(0));
      }
    }
  });
}

}  // namespace

void eig(const Array& x, bool compute_left, bool compute_right, const std::vector<Array>& outs) {
  const Shape& shape = x.shape();
  const int64_t n = shape.back();
  if (x.size() == 0) return;
  const Array a = dense(x);
  const int64_t batch = x.size() / (n * n);
  switch (x.dtype()) {
    case DType::F32:
      return eig_typed(reinterpret_cast<const float*>(a.data()), batch, n, compute_left,
                       compute_right, outs);
    case DType::F64:
      return eig_typed(reinterpret_cast<const double*>(a.data()), batch, n, compute_left,
                       compute_right, outs);
    case DType::C64:
      return eig_typed(reinterpret_cast<const complex64*>(a.data()), batch, n, compute_left,
                       compute_right, outs);
    case DType::C128:
      return eig_typed(reinterpret_cast<const complex128*>(a.data()), batch, n, compute_left,
                       compute_right, outs);
    default:
      throw_error(ErrorKind::TypeError, "eig", "eig: unsupported dtype");
  }
}

void eigh(const Array& x, bool lower, const std::vector<Array>& outs) {
  const Shape& shape = x.shape();
  const int64_t n = shape.back();
  if (x.size() == 0) return;
  const Array a = dense(x);
  const int64_t batch = x.size() / (n * n);
  switch (x.dtype()) {
    case DType::F32:
      return eigh_typed(reinterpret_cast<const float*>(a.data()), batch, n, lower, outs);
    case DType::F64:
      return eigh_typed(reinterpret_cast<const double*>(a.data()), batch, n, lower, outs);
    case DType::C64:
      return eigh_typed(reinterpret_cast<const complex64*>(a.data()), batch, n, lower, outs);
    case DType::C128:
      return eigh_typed(reinterpret_cast<const complex128*>(a.data()), batch, n, lower, outs);
    default:
      throw_error(ErrorKind::TypeError, "eigh", "eigh: unsupported dtype");
  }
}

void cholesky(const Array& x, const Array& out) {
  const int64_t n = x.shape().back();
  if (x.size() == 0) return;
  const Array a = dense(x);
  const int64_t batch = x.size() / (n * n);
  switch (x.dtype()) {
    case DType::F32:
      return cholesky_typed(reinterpret_cast<const float*>(a.data()), batch, n,
                            reinterpret_cast<float*>(out.mutable_data()));
    case DType::F64:
      return cholesky_typed(reinterpret_cast<const double*>(a.data()), batch, n,
                            reinterpret_cast<double*>(out.mutable_data()));
    case DType::C64:
      return cholesky_typed(reinterpret_cast<const complex64*>(a.data()), batch, n,
                            reinterpret_cast<complex64*>(out.mutable_data()));
    case DType::C128:
      return cholesky_typed(reinterpret_cast<const complex128*>(a.data()), batch, n,
                            reinterpret_cast<complex128*>(out.mutable_data()));
    default:
      throw_error(ErrorKind::TypeError, "cholesky", "cholesky: unsupported dtype");
  }
}

}  // namespace tinyxla::cpu
