// lax.conv_general_dilated on the CPU: im2col onto gemm, channels last. The output rows
// (batch x output positions) are cut into chunks; each chunk gathers its patches (one row
// of taps x group channels per output position, zeros where a tap falls on padding or a
// dilation hole) into a small buffer that stays in cache, then multiplies it by the
// group's kernel columns straight into the output (row stride O). Few rows over a long
// reduction (a kernel's gradient) split the reduction instead. Chunks run on the pool,
// each on one thread with a single-threaded gemm: our AVX-512 sgemm where the CPU has it,
// else OpenBLAS; dtypes without a BLAS product use a plain loop. A fused epilogue runs on
// each chunk's output rows right after its gemm (without groups: a chunk's rows are then
// whole), else over the output once it is complete.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
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

using Epilogue = std::function<void(int64_t, int64_t)>;

constexpr int64_t kPatchBytes = 1 << 19;  // one chunk's patch buffer
constexpr int64_t kMinChunkRows = 16;
// Outputs of at most this many elements (per group) may split their reduction instead.
constexpr int64_t kSplitOutput = 1 << 18;

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

// Rows [r0, r1) of group t's patch matrix, the columns of outer taps [ot0, ot1) (an
// outer tap: one position of the window over all but the last spatial dimension; its
// columns are the last dimension's taps times the group's channels), from dense lhs x.
// The taps of the last spatial dimension form one run per outer tap: without dilation and
// groups a run is one contiguous copy of the input (zeros where it hangs over the edges).
template <typename T>
void im2col(const ConvPlan& p, const WindowGeometry& g, const T* x, int64_t t, int64_t r0,
            int64_t r1, int64_t ot0, int64_t ot1, T* patches) {
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
  int64_t o[8], k[8], k0[8];
  int64_t rest = ot0;
  for (int d = last - 1; d >= 0; --d) {
    k0[d] = rest % p.kernel[size_t(d)];
    rest /= p.kernel[size_t(d)];
  }
  int64_t rem = r0;
  for (int d = nsp - 1; d >= 0; --d) {
    o[d] = rem % p.out[size_t(d)];
    rem /= p.out[size_t(d)];
  }
  int64_t n = rem;
  T* dst = patches;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xn = x + (batch0 + n) * p.in_size * p.C + c0;
    std::copy(k0, k0 + last, k);
    const int64_t base_l = o[last] * sl - lol;
    for (int64_t ot = ot0; ot < ot1; ++ot, dst += kl * p.Cg) {
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

// Output rows split into chunks, each gathered and multiplied on one thread.
// Returns whether it ran the epilogue.
template <typename T>
bool conv_by_rows(const ConvPlan& p, const WindowGeometry& g, const T* x, const T* w, T* y,
                  const Epilogue* epilogue) {
  const int64_t chunk =
      std::max(kMinChunkRows, kPatchBytes / std::max<int64_t>(1, p.kcols * int64_t(sizeof(T))));
  const int64_t chunks = (p.rows + chunk - 1) / chunk;
  const int64_t outer_taps = p.nsp ? p.taps / p.kernel.back() : 1;
  const double work = double(p.rows) * double(p.kcols) * double(p.O);
  parallel_for(chunks * p.groups, 1, [&](int64_t lo, int64_t hi) {
    auto patches = std::make_unique<T[]>(size_t(std::min(chunk, p.rows) * p.kcols));
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t t = i / chunks, r0 = (i % chunks) * chunk, r1 = std::min(p.rows, r0 + chunk);
      im2col(p, g, x, t, r0, r1, 0, outer_taps, patches.get());
      gemm_on_thread<T>(r1 - r0, p.Og, p.kcols, patches.get(), w + t * p.Og, p.O,
                        y + r0 * p.O + t * p.Og, p.O);
      if (epilogue && p.groups == 1) (*epilogue)(r0 * p.O, r1 * p.O);
    }
  }, /*long_chunks=*/work >= double(kLongOpWork));
  return p.groups == 1;
}

// Few output rows over a long reduction (a kernel's gradient: the window is the whole
// image): the reduction is split by outer taps instead, each thread summing its chunks'
// products into its own accumulator, added into the output at the end.
template <typename T>
void conv_by_taps(const ConvPlan& p, const WindowGeometry& g, const T* x, const T* w, T* y) {
  const int64_t run = p.kernel.back() * p.Cg;  // columns of one outer tap
  const int64_t outer_taps = p.taps / p.kernel.back();
  const int64_t per_chunk = std::max<int64_t>(
      1, kPatchBytes / std::max<int64_t>(1, p.rows * run * int64_t(sizeof(T))));
  const int64_t chunks = (outer_taps + per_chunk - 1) / per_chunk;
  const int64_t out_size = p.rows * p.Og;
  std::fill(y, y + p.rows * p.O, T(0));
  std::mutex m;
  parallel_for(chunks * p.groups, 1, [&](int64_t lo, int64_t hi) {
    auto patches = std::make_unique<T[]>(size_t(p.rows * run * std::min(per_chunk, outer_taps)));
    std::vector<T> part(static_cast<size_t>(out_size));
    std::vector<T> acc(static_cast<size_t>(out_size * p.groups), T(0));
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t t = i / chunks, ot0 = (i % chunks) * per_chunk;
      const int64_t ot1 = std::min(outer_taps, ot0 + per_chunk), cols = (ot1 - ot0) * run;
      im2col(p, g, x, t, 0, p.rows, ot0, ot1, patches.get());
      gemm_on_thread<T>(p.rows, p.Og, cols, patches.get(), w + ot0 * run * p.O + t * p.Og, p.O,
                        part.data(), p.Og);
      T* a = acc.data() + t * out_size;
      for (int64_t j = 0; j < out_size; ++j) a[j] += part[size_t(j)];
    }
    std::lock_guard<std::mutex> lock(m);
    for (int64_t t = 0; t < p.groups; ++t)
      for (int64_t r = 0; r < p.rows; ++r)
        for (int64_t j = 0; j < p.Og; ++j)
          y[r * p.O + t * p.Og + j] += acc[size_t(t * out_size + r * p.Og + j)];
  }, /*long_chunks=*/true);
}

// Returns whether it ran the epilogue.
template <typename T>
bool conv_typed(const ConvPlan& p, const WindowGeometry& g, const T* x, const T* w, T* y,
                const Epilogue* epilogue) {
  // Floating types only: the accumulators' adds are plain T arithmetic.
  constexpr bool kSplittable = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;
  if constexpr (kSplittable) {
    if (p.nsp > 0 && p.rows * p.Og <= kSplitOutput && p.kcols >= 8 * p.rows &&
        p.taps / p.kernel.back() >= 2) {
      conv_by_taps(p, g, x, w, y);
      return false;
    }
  }
  return conv_by_rows(p, g, x, w, y, epilogue);
}

// The epilogue over all of `out`, in parallel chunks.
void run_epilogue(const Epilogue& epilogue, const Array& out) {
  constexpr int64_t kChunk = 1 << 14;
  const int64_t n = out.size(), chunks = (n + kChunk - 1) / kChunk;
  parallel_for(chunks, 1, [&](int64_t lo, int64_t hi) {
    epilogue(lo * kChunk, std::min(n, hi * kChunk));
  }, /*long_chunks=*/n >= kLongOpWork);
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
          int64_t feature_groups, int64_t batch_groups, const Array& out,
          const Epilogue* epilogue) {
  if (out.size() == 0) return;
  const ConvPlan p = plan_of(lhs, rhs, out, feature_groups, batch_groups);
  if (p.kcols == 0) {
    fill(Scalar::of_int(0), out);
    if (epilogue) run_epilogue(*epilogue, out);
    return;
  }
  // Operands in the result's dtype (preferred_element_type widens them exactly).
  const Array x = dense_as(lhs, out.dtype()), w = dense_as(rhs, out.dtype());
  const bool ran = visit_dtype(out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    return conv_typed<T>(p, geometry, reinterpret_cast<const T*>(x.data()),
                         reinterpret_cast<const T*>(w.data()),
                         reinterpret_cast<T*>(out.mutable_data()), epilogue);
  });
  if (epilogue && !ran) run_epilogue(*epilogue, out);
}

}  // namespace tinyxla::cpu
