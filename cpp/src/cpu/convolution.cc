// lax.conv_general_dilated on the CPU: im2col onto gemm, channels last. The output rows
// (batch x output positions) are cut into chunks; each chunk gathers its patches (one row
// of taps x group channels per output position, zeros where a tap falls on padding or a
// dilation hole) into a small buffer that stays in cache, then multiplies it by the
// group's kernel columns straight into the output (row stride O). Chunks run on the pool,
// each on one thread with a single-threaded gemm: our AVX-512 sgemm where the CPU has it,
// else OpenBLAS; dtypes without a BLAS product use a plain loop.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "gemm.h"
#include "kernels.h"
#include "tinyxla/error.h"
#include "vmath.h"
#include "windows.h"

namespace tinyxla::cpu {
namespace {

using semantics::Compute;
using semantics::narrow;
using semantics::widen;

constexpr int64_t kPatchBytes = 1 << 19;  // one chunk's patch buffer
constexpr int64_t kMinChunkRows = 16;

struct ConvPlan {
  int nsp = 0;
  Shape in, kernel, out;  // spatial sizes
  int64_t C = 0, O = 0, Nout = 0, Cg = 0, Og = 0, groups = 1, rows = 0, taps = 1, kcols = 0;
  int64_t in_size = 1;  // input positions per batch element
  bool batch_grouped = false;
};

ConvPlan plan_of(const Array& lhs, const Array& rhs, const Array& out, int64_t feature_groups,
                 int64_t batch_groups) {
  ConvPlan p;
  p.nsp = lhs.ndim() - 2;
  for (int d = 0; d < p.nsp; ++d) {
    p.in.push_back(lhs.shape()[size_t(d + 1)]);
    p.kernel.push_back(rhs.shape()[size_t(d)]);
    p.out.push_back(out.shape()[size_t(d + 1)]);
    p.in_size *= p.in.back();
    p.taps *= p.kernel.back();
  }
  p.C = lhs.shape().back();
  p.O = rhs.shape().back();
  p.Nout = out.shape()[0];
  p.groups = std::max(feature_groups, batch_groups);
  p.batch_grouped = batch_groups > 1;
  p.Cg = p.C / feature_groups;
  p.Og = p.O / p.groups;
  p.rows = p.Nout;
  for (int64_t s : p.out) p.rows *= s;
  p.kcols = p.taps * p.Cg;
  return p;
}

// Rows [r0, r1) of group t's patch matrix (row length kcols) from dense lhs x. The taps
// of the last spatial dimension form one run per outer tap: without dilation and groups
// a run is one contiguous copy of the input (zeros where it hangs over the edges).
template <typename T>
void im2col(const ConvPlan& p, const WindowGeometry& g, const T* x, int64_t t, int64_t r0,
            int64_t r1, T* patches) {
  const int nsp = p.nsp;
  const int64_t batch0 = p.batch_grouped ? t * p.Nout : 0;
  const int64_t c0 = p.batch_grouped ? 0 : t * p.Cg;
  const size_t elem = sizeof(T);
  auto zero = [elem](T* dst, int64_t n) { std::memset(static_cast<void*>(dst), 0, size_t(n) * elem); };
  if (nsp == 0) {
    for (int64_t r = r0; r < r1; ++r)
      std::memcpy(patches + (r - r0) * p.kcols, x + (batch0 + r) * p.C + c0, size_t(p.Cg) * elem);
    return;
  }
  const int last = nsp - 1;
  const int64_t kl = p.kernel[size_t(last)], inl = p.in[size_t(last)];
  const int64_t sl = g.strides[size_t(last)], ldl = g.base_dilation[size_t(last)];
  const int64_t rdl = g.window_dilation[size_t(last)], lol = g.pad_lo[size_t(last)];
  const bool runs = ldl == 1 && rdl == 1 && p.Cg == p.C;
  const int64_t outer_taps = p.taps / kl;
  int64_t o[8], k[8];
  int64_t rem = r0;
  for (int d = nsp - 1; d >= 0; --d) {
    o[d] = rem % p.out[size_t(d)];
    rem /= p.out[size_t(d)];
  }
  int64_t n = rem;
  T* dst = patches;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xn = x + (batch0 + n) * p.in_size * p.C + c0;
    std::fill(k, k + nsp, 0);
    const int64_t base_l = o[last] * sl - lol;
    for (int64_t ot = 0; ot < outer_taps; ++ot, dst += kl * p.Cg) {
      int64_t off = 0;  // the outer taps' input row, in units of the last dimension
      bool inside = true;
      for (int d = 0; d < last && inside; ++d) {
        int64_t pos = o[d] * g.strides[size_t(d)] + k[d] * g.window_dilation[size_t(d)] -
                      g.pad_lo[size_t(d)];
        const int64_t ld = g.base_dilation[size_t(d)];
        if (pos < 0 || (ld != 1 && pos % ld != 0)) {
          inside = false;
        } else {
          pos /= ld;
          inside = pos < p.in[size_t(d)];
          off = off * p.in[size_t(d)] + pos;
        }
      }
      if (!inside) {
        zero(dst, kl * p.Cg);
      } else if (runs) {
        const int64_t lo = std::min(kl, std::max<int64_t>(0, -base_l));
        const int64_t hi = std::max(lo, std::min(kl, inl - base_l));
        zero(dst, lo * p.C);
        if (hi > lo)
          std::memcpy(dst + lo * p.C, xn + (off * inl + base_l + lo) * p.C,
                      size_t((hi - lo) * p.C) * elem);
        zero(dst + hi * p.C, (kl - hi) * p.C);
      } else {
        for (int64_t j = 0; j < kl; ++j) {
          int64_t pos = base_l + j * rdl;
          T* at = dst + j * p.Cg;
          if (pos < 0 || (ldl != 1 && pos % ldl != 0) || (pos /= ldl) >= inl)
            zero(at, p.Cg);
          else
            std::memcpy(at, xn + (off * inl + pos) * p.C, size_t(p.Cg) * elem);
        }
      }
      for (int d = last - 1; d >= 0; --d) {  // next outer tap
        if (++k[d] < p.kernel[size_t(d)]) break;
        k[d] = 0;
      }
    }
    for (int d = nsp - 1; d >= 0; --d) {  // next output position
      if (++o[d] < p.out[size_t(d)]) break;
      o[d] = 0;
      if (d == 0) ++n;
    }
  }
}

void blas_on_one_thread() {
  static const bool done = [] {
    scipy_openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

// c (m x n, row stride ldc) = a (m x k, dense) * b (k x n, row stride ldb), on this thread.
template <typename T>
void gemm_on_thread(int64_t m, int64_t n, int64_t k, const T* a, const T* b, int64_t ldb, T* c,
                    int64_t ldc) {
  const int M = int(m), N = int(n), K = int(k), LDB = int(ldb), LDC = int(ldc);
  if constexpr (std::is_same_v<T, float>) {
    if (m > 1 && n > 1 && vmath::isa_supported(vmath::Isa::Avx512))
      return gemm::sgemm(m, n, k, {a, k, 1}, {b, ldb, 1}, c, ldc, false);
    blas_on_one_thread();
    scipy_cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, a, K, b, LDB, 0.f,
                      c, LDC);
  } else if constexpr (std::is_same_v<T, double>) {
    blas_on_one_thread();
    scipy_cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1., a, K, b, LDB, 0., c,
                      LDC);
  } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
    blas_on_one_thread();
    const T one(1), zero(0);
    if constexpr (std::is_same_v<T, complex64>)
      scipy_cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, &one, a, K, b, LDB,
                        &zero, c, LDC);
    else
      scipy_cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, &one, a, K, b, LDB,
                        &zero, c, LDC);
  } else {
    // Integers wrap (accumulated unsigned; bool is an or of ands); half types accumulate
    // in float32.
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, Compute<T>>;
    std::vector<Acc> acc(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), Acc(0));
      for (int64_t j = 0; j < k; ++j) {
        const Acc aij = Acc(widen(a[i * k + j]));
        const T* brow = b + j * ldb;
        for (int64_t l = 0; l < n; ++l) acc[size_t(l)] += aij * Acc(widen(brow[l]));
      }
      for (int64_t l = 0; l < n; ++l) c[i * ldc + l] = narrow<T>(acc[size_t(l)]);
    }
  }
}

template <typename T>
void conv_typed(const ConvPlan& p, const WindowGeometry& g, const T* x, const T* w, T* y) {
  const int64_t chunk =
      std::max(kMinChunkRows, kPatchBytes / std::max<int64_t>(1, p.kcols * int64_t(sizeof(T))));
  const int64_t chunks = (p.rows + chunk - 1) / chunk;
  const double work = double(p.rows) * double(p.kcols) * double(p.O);
  parallel_for(chunks * p.groups, 1, [&](int64_t lo, int64_t hi) {
    auto patches = std::make_unique<T[]>(size_t(std::min(chunk, p.rows) * p.kcols));
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t t = i / chunks, r0 = (i % chunks) * chunk, r1 = std::min(p.rows, r0 + chunk);
      im2col(p, g, x, t, r0, r1, patches.get());
      gemm_on_thread<T>(r1 - r0, p.Og, p.kcols, patches.get(), w + t * p.Og, p.O,
                        y + r0 * p.O + t * p.Og, p.O);
    }
  }, /*long_chunks=*/work >= double(kLongOpWork));
}

Array dense_as(const Array& x, DType t) {
  if (x.dtype() == t && x.is_contiguous()) return x;
  Array dense(x.shape(), t, x.device(), Event::ready());
  if (x.dtype() == t) copy(x, dense);
  else convert(x, dense);
  return dense;
}

}  // namespace

void conv(const Array& lhs, const Array& rhs, const WindowGeometry& geometry,
          int64_t feature_groups, int64_t batch_groups, const Array& out) {
  if (out.size() == 0) return;
  const ConvPlan p = plan_of(lhs, rhs, out, feature_groups, batch_groups);
  if (p.kcols == 0) {
    fill(Scalar::of_int(0), out);
    return;
  }
  // Operands in the result's dtype (preferred_element_type widens them exactly).
  const Array x = dense_as(lhs, out.dtype()), w = dense_as(rhs, out.dtype());
  visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    conv_typed<T>(p, geometry, reinterpret_cast<const T*>(x.data()),
                  reinterpret_cast<const T*>(w.data()), reinterpret_cast<T*>(out.mutable_data()));
  });
}

}  // namespace tinyxla::cpu
