// The eigenvalues (and eigenvectors) of batches of real symmetric tridiagonal matrices:
// LAPACK's bisection (stebz) and inverse iteration (stein), the method of
// jax.scipy.linalg.eigh_tridiagonal. Each matrix is a work item of the pool. A matrix with
// a non-finite entry, or one LAPACK cannot solve, gets NaN results.
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels.h"
#include "lapack.h"

namespace tinyxla::cpu {
namespace {

using lapack::all_finite;
using lapack::nan_value;

void stebz(char range, char order, int n, int il, int iu, float abstol, const float* d,
           const float* e, int* m, int* nsplit, float* w, int* iblock, int* isplit,
           float* work, int* iwork, int* info) {
  const float unused = 0;
  scipy_LAPACK_sstebz(&range, &order, &n, &unused, &unused, &il, &iu, &abstol, d, e, m, nsplit, w,
                iblock, isplit, work, iwork, info);
}
void stebz(char range, char order, int n, int il, int iu, double abstol, const double* d,
           const double* e, int* m, int* nsplit, double* w, int* iblock, int* isplit,
           double* work, int* iwork, int* info) {
  const double unused = 0;
  scipy_LAPACK_dstebz(&range, &order, &n, &unused, &unused, &il, &iu, &abstol, d, e, m, nsplit, w,
                iblock, isplit, work, iwork, info);
}
void stein(int n, const float* d, const float* e, int m, const float* w, const int* iblock,
           const int* isplit, float* z, float* work, int* iwork, int* ifail, int* info) {
  LAPACK_sstein(&n, d, e, &m, w, iblock, isplit, z, &n, work, iwork, ifail, info);
}
void stein(int n, const double* d, const double* e, int m, const double* w, const int* iblock,
           const int* isplit, double* z, double* work, int* iwork, int* ifail, int* info) {
  LAPACK_dstein(&n, d, e, &m, w, iblock, isplit, z, &n, work, iwork, ifail, info);
}

// LAPACK's scratch for one matrix of order n and k wanted eigenpairs.
template <typename T>
struct Scratch {
  std::vector<T> w, z, work;
  std::vector<int> iblock, isplit, iwork, ifail;
  std::vector<int64_t> order;
  Scratch(int64_t n, int64_t k, bool vectors)
      : w(size_t(n + 1)), z(vectors ? size_t(n * k) : 0), work(size_t(5 * n + 1)),
        iblock(size_t(n + 1)), isplit(size_t(n + 1)), iwork(size_t(3 * n + 1)),
        ifail(size_t(k + 1)), order(size_t(k)) {}
};

template <typename T>
void eigh_tridiagonal_typed(const Array& d_a, const Array& e_a, const Array& tol_a,
                            bool vectors, int64_t il, int64_t iu,
                            const std::vector<Array>& outs) {
  const int64_t n = d_a.shape().back(), k = iu - il + 1, ne = std::max<int64_t>(0, n - 1);
  const int64_t batch = n ? d_a.size() / n : tol_a.size();
  const T* d_in = reinterpret_cast<const T*>(d_a.data());
  const T* e_in = reinterpret_cast<const T*>(e_a.data());
  const T* tol_in = reinterpret_cast<const T*>(tol_a.data());
  T* w_out = reinterpret_cast<T*>(outs[0].mutable_data());
  T* v_out = vectors ? reinterpret_cast<T*>(outs[1].mutable_data()) : nullptr;
  const int ni = lapack::dim("eigh_tridiagonal", n);
  const double flops = 60.0 * double(n) * double(k) * (vectors ? 2.0 : 1.0);
  lapack::for_matrices(batch, lapack::grain_for(flops), flops, [&](int64_t begin, int64_t end) {
    Scratch<T> s(n, k, vectors);
    for (int64_t b = begin; b < end; ++b) {
      const T* d = d_in + b * n;
      const T* e = e_in + b * ne;
      T* w = w_out + b * k;
      T* v = vectors ? v_out + b * n * k : nullptr;
      int m = 0, nsplit = 0, info = 0;
      const bool finite = all_finite(d, n) && all_finite(e, ne) && all_finite(tol_in + b, 1);
      if (finite) {
        // Inverse iteration wants the eigenvalues grouped by split-off block ('B').
        stebz('I', vectors ? 'B' : 'E', ni, int(il + 1), int(iu + 1), tol_in[b], d, e, &m,
              &nsplit, s.w.data(), s.iblock.data(), s.isplit.data(), s.work.data(),
              s.iwork.data(), &info);
      }
      if (!finite || info != 0 || m != k) {
        std::fill(w, w + k, nan_value<T>());
        if (v) std::fill(v, v + n * k, nan_value<T>());
        continue;
      }
      if (!vectors) {
        std::copy(s.w.begin(), s.w.begin() + k, w);
        continue;
      }
      // A vector that has not converged in stein's 5 steps is kept as it stands, as JAX's
      // inverse iteration keeps its last step.
      stein(ni, d, e, m, s.w.data(), s.iblock.data(), s.isplit.data(), s.z.data(),
            s.work.data(), s.iwork.data(), s.ifail.data(), &info);
      if (info < 0) {
        std::fill(w, w + k, nan_value<T>());
        std::fill(v, v + n * k, nan_value<T>());
        continue;
      }
      std::iota(s.order.begin(), s.order.end(), int64_t{0});
      std::stable_sort(s.order.begin(), s.order.end(),
                       [&](int64_t x, int64_t y) { return s.w[size_t(x)] < s.w[size_t(y)]; });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t src = s.order[size_t(j)];
        w[j] = s.w[size_t(src)];
        for (int64_t i = 0; i < n; ++i) v[i * k + j] = s.z[size_t(src * n + i)];
      }
    }
  });
}

}  // namespace

void eigh_tridiagonal(const Array& d, const Array& e, const Array& tol, bool compute_vectors,
                      int64_t lower_index, int64_t upper_index, const std::vector<Array>& outs) {
  if (outs[0].size() == 0) return;
  const Array dd = lapack::dense(d), ed = lapack::dense(e), td = lapack::dense(tol);
  if (dd.dtype() == DType::F32)
    eigh_tridiagonal_typed<float>(dd, ed, td, compute_vectors, lower_index, upper_index, outs);
  else
    eigh_tridiagonal_typed<double>(dd, ed, td, compute_vectors, lower_index, upper_index, outs);
}

}  // namespace tinyxla::cpu
