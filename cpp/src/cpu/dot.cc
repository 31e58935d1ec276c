// dot_general: OpenBLAS gemm/gemv/dot for float and complex types (half types and wider
// outputs convert around them), our own AVX-512 sgemm for float32 products where the CPU
// has it and our AVX2 one for small float32 products elsewhere (and on Zen 4), a blocked
// loop for integers and bool.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>

#include "../core/thread_pool.h"
#include "gemm.h"
#include "kernels.h"
#include "strided.h"
#include "tinyxla/error.h"
#include "vmath.h"

namespace tinyxla::cpu {
namespace {

// OpenBLAS runs on the calling thread only (set once, see blas_on_one_thread): large
// products are split over our pool instead, so that devices running products at the same
// time share the cores through one pool rather than each waking BLAS threads of its own,
// and a descheduled thread never holds a fixed share of the work.
// Batches of gemms below this m*n*k (and batches of gemvs and dots) are spread over
// the pool one product per work item; larger gemms are split in blocks of rows.
constexpr double kGemmSingleThread = 65536.0 * 4;
// Flops worth one pool hand-out.
constexpr double kParallelWork = 1 << 16;
// m*k of a single gemv from which it is split over the pool.
constexpr double kGemvSplit = 1 << 17;
// m*n*k of a gemm work item (about 0.5 ms) from which waking a worker pays on a busy machine.
constexpr double kLongChunkWork = double(1 << 24);
// m*n*k up to which float32 gemms run on our AVX2 kernel rather than OpenBLAS's, whose
// setup and packing dominate there.
constexpr double kSmallGemm = double(1 << 18);
// Rows (or columns) per gemm work item: a multiple of OpenBLAS's register blocking.
constexpr int64_t kGemmBlock = 64;

void blas_on_one_thread() {
  static const bool done = [] {
    scipy_openblas_set_num_threads(1);
    return true;
  }();
  (void)done;
}

// One operand as a batch of rows x cols matrices (element strides; rows/cols may be 1).
struct View {
  const char* data = nullptr;
  Shape bshape;
  Strides bstrides;
  int64_t rows = 1, cols = 1, rs = 0, cs = 0;
};

// How BLAS reads a rows x cols matrix: row-major with leading dimension ld, or transposed.
struct Layout {
  CBLAS_TRANSPOSE trans;
  int64_t ld;
};

std::optional<Layout> blas_layout(const View& v) {
  const int64_t r = v.rows, c = v.cols;
  if ((c == 1 || v.cs == 1) && (r == 1 || v.rs >= std::max<int64_t>(1, c)))
    return Layout{CblasNoTrans, r == 1 ? std::max<int64_t>(1, c) : v.rs};
  if ((r == 1 || v.rs == 1) && (c == 1 || v.cs >= std::max<int64_t>(1, r)))
    return Layout{CblasTrans, c == 1 ? std::max<int64_t>(1, r) : v.cs};
  return std::nullopt;
}

// The increment of a vector (a view with one of rows/cols equal to 1) for BLAS, if any.
std::optional<int64_t> vec_inc(const View& v) {
  const int64_t n = std::max(v.rows, v.cols), s = v.rows > 1 ? v.rs : v.cs;
  if (n <= 1) return 1;
  if (s >= 1) return s;
  return std::nullopt;
}

// The dims of a group as one (size, stride) dim, when they walk memory as one.
std::optional<std::pair<int64_t, int64_t>> merge_dims(const Array& x,
                                                      const std::vector<int64_t>& dims) {
  int64_t size = 1, stride = 0;
  bool any = false;
  for (int64_t d : dims) {
    const int64_t n = x.shape()[size_t(d)], s = x.strides()[size_t(d)];
    if (n == 1) continue;
    if (any && stride != s * n) return std::nullopt;
    size = any ? size * n : n;
    stride = s;
    any = true;
  }
  return std::make_pair(size, stride);
}

std::optional<View> make_view(const Array& x, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  auto r = merge_dims(x, rows), c = merge_dims(x, cols);
  if (!r || !c) return std::nullopt;
  View v;
  v.data = x.data();
  for (int64_t d : batch) {
    v.bshape.push_back(x.shape()[size_t(d)]);
    v.bstrides.push_back(x.strides()[size_t(d)]);
  }
  std::tie(v.rows, v.rs) = *r;
  std::tie(v.cols, v.cs) = *c;
  return v;
}

int64_t min_stride(const Array& x, const std::vector<int64_t>& dims) {
  int64_t m = INT64_MAX;
  for (int64_t d : dims)
    if (x.shape()[size_t(d)] > 1) m = std::min(m, std::abs(x.strides()[size_t(d)]));
  return m;
}

std::vector<int64_t> cat(std::vector<int64_t> a, const std::vector<int64_t>& b,
                         const std::vector<int64_t>& c) {
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

// A dense copy of x in dtype t with its dims in the order `perm`.
Array dense_copy(const Array& x, DType t, const std::vector<int64_t>& perm) {
  Shape shape;
  Strides strides;
  for (int64_t d : perm) {
    shape.push_back(x.shape()[size_t(d)]);
    strides.push_back(x.strides()[size_t(d)]);
  }
  Array src(shape, strides, x.offset(), x.dtype(), x.device(), x.buffer(), x.event());
  Array dense(shape, t, x.device(), Event::ready());
  if (t == x.dtype()) copy(src, dense);
  else convert(src, dense);
  return dense;
}

// x as a dense batch x rows x cols copy in dtype ct, or batch x cols x rows (read back
// transposed) when the source is closer to that order, so the copy reads memory forwards.
View materialize(const Array& x, DType ct, const std::vector<int64_t>& batch,
                 const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                 std::vector<Array>& keep) {
  const bool swap = min_stride(x, rows) < min_stride(x, cols);
  keep.push_back(dense_copy(x, ct, swap ? cat(batch, cols, rows) : cat(batch, rows, cols)));
  const Array& dense = keep.back();
  View v;
  v.data = dense.data();
  v.bshape.assign(dense.shape().begin(), dense.shape().begin() + int64_t(batch.size()));
  v.bstrides.assign(dense.strides().begin(), dense.strides().begin() + int64_t(batch.size()));
  for (int64_t d : rows) v.rows *= x.shape()[size_t(d)];
  for (int64_t d : cols) v.cols *= x.shape()[size_t(d)];
  v.rs = swap ? 1 : v.cols;
  v.cs = swap ? v.rows : 1;
  return v;
}

template <typename T>
struct Blas;
template <>
struct Blas<float> {
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a,
                   int lda, const float* b, int ldb, float* c, int ldc) {
    scipy_cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE t, int m, int n, const float* a, int lda, const float* x,
                   int incx, float* y) {
    scipy_cblas_sgemv(CblasRowMajor, t, m, n, 1.f, a, lda, x, incx, 0.f, y, 1);
  }
  static float dot(int n, const float* x, int incx, const float* y, int incy) {
    return scipy_cblas_sdot(n, x, incx, y, incy);
  }
};
template <>
struct Blas<double> {
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a,
                   int lda, const double* b, int ldb, double* c, int ldc) {
    scipy_cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1., a, lda, b, ldb, 0., c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE t, int m, int n, const double* a, int lda, const double* x,
                   int incx, double* y) {
    scipy_cblas_dgemv(CblasRowMajor, t, m, n, 1., a, lda, x, incx, 0., y, 1);
  }
  static double dot(int n, const double* x, int incx, const double* y, int incy) {
    return scipy_cblas_ddot(n, x, incx, y, incy);
  }
};
template <>
struct Blas<complex64> {
  using T = complex64;
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const T* a,
                   int lda, const T* b, int ldb, T* c, int ldc) {
    const T one(1), zero(0);
    scipy_cblas_cgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE t, int m, int n, const T* a, int lda, const T* x, int incx,
                   T* y) {
    const T one(1), zero(0);
    scipy_cblas_cgemv(CblasRowMajor, t, m, n, &one, a, lda, x, incx, &zero, y, 1);
  }
  static T dot(int n, const T* x, int incx, const T* y, int incy) {
    T r;
    scipy_cblas_cdotu_sub(n, x, incx, y, incy, &r);
    return r;
  }
};
template <>
struct Blas<complex128> {
  using T = complex128;
  static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const T* a,
                   int lda, const T* b, int ldb, T* c, int ldc) {
    const T one(1), zero(0);
    scipy_cblas_zgemm(CblasRowMajor, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, ldc);
  }
  static void gemv(CBLAS_TRANSPOSE t, int m, int n, const T* a, int lda, const T* x, int incx,
                   T* y) {
    const T one(1), zero(0);
    scipy_cblas_zgemv(CblasRowMajor, t, m, n, &one, a, lda, x, incx, &zero, y, 1);
  }
  static T dot(int n, const T* x, int incx, const T* y, int incy) {
    T r;
    scipy_cblas_zdotu_sub(n, x, incx, y, incy, &r);
    return r;
  }
};

int blas_int(int64_t v) {
  if (v > INT_MAX)
    throw_error(ErrorKind::InvalidArgument, "dot_general",
                "a dimension or stride of " + std::to_string(v) + " exceeds BLAS's 32-bit range");
  return int(v);
}

// Runs fn(lhs offset, rhs offset, batch index) over the batch, spread over the pool;
// `work` flops a call. `long_chunks` as parallel_for's (calls that compute for long).
template <typename F>
void for_batch(const View& a, const View& b, int64_t nb, double work, F fn,
               bool long_chunks = false) {
  auto run = [&](int64_t lo, int64_t hi) {
    int64_t ia[64] = {0};
    int64_t rem = lo, oa = 0, ob = 0;
    const int nd = int(a.bshape.size());
    for (int d = nd - 1; d >= 0; --d) {
      ia[d] = rem % a.bshape[size_t(d)];
      rem /= a.bshape[size_t(d)];
      oa += ia[d] * a.bstrides[size_t(d)];
      ob += ia[d] * b.bstrides[size_t(d)];
    }
    for (int64_t i = lo; i < hi; ++i) {
      fn(oa, ob, i);
      for (int d = nd - 1; d >= 0; --d) {
        oa += a.bstrides[size_t(d)];
        ob += b.bstrides[size_t(d)];
        if (++ia[d] < a.bshape[size_t(d)]) break;
        oa -= ia[d] * a.bstrides[size_t(d)];
        ob -= ia[d] * b.bstrides[size_t(d)];
        ia[d] = 0;
      }
    }
  };
  parallel_for(nb, std::max<int64_t>(1, int64_t(kParallelWork / work)), run, long_chunks);
}

// Element offsets of batch item i in a and b.
std::pair<int64_t, int64_t> batch_offsets(const View& a, const View& b, int64_t i) {
  int64_t oa = 0, ob = 0;
  for (int d = int(a.bshape.size()) - 1; d >= 0; --d) {
    const int64_t id = i % a.bshape[size_t(d)];
    i /= a.bshape[size_t(d)];
    oa += id * a.bstrides[size_t(d)];
    ob += id * b.bstrides[size_t(d)];
  }
  return {oa, ob};
}

// Large gemms as blocks of kGemmBlock rows of c (or columns, when c is wider than tall),
// each a single-threaded gemm, over the pool. Few, large items: each gemm call packs its
// share of b (or a) again.
template <typename T>
void blocked_gemm(const View& a, const View& b, int64_t M, int64_t N, int64_t K, int64_t nb,
                  T* c) {
  const T* pa = reinterpret_cast<const T*>(a.data);
  const T* pb = reinterpret_cast<const T*>(b.data);
  const Layout la = *blas_layout(a), lb = *blas_layout(b);
  const int lda = blas_int(la.ld), ldb = blas_int(lb.ld), n = blas_int(N), k = blas_int(K);
  blas_int(M);
  const bool by_rows = M >= N;
  const int64_t extent = by_rows ? M : N, blocks = (extent + kGemmBlock - 1) / kGemmBlock;
  const int64_t units = nb * blocks;
  const double unit_work = double(kGemmBlock) * double(by_rows ? N : M) * double(K);
  const int64_t grain = std::max<int64_t>(
      {1, int64_t(kGemmSingleThread / unit_work), units / (2 * int64_t(pool_size()))});
  parallel_for(units, grain, [&](int64_t lo, int64_t hi) {
    // Consecutive blocks of one product go to BLAS as one call.
    for (int64_t u = lo; u < hi;) {
      const int64_t i = u / blocks, first = u % blocks;
      const int64_t last = std::min(blocks, first + (hi - u));
      const int64_t b0 = first * kGemmBlock, b1 = std::min(extent, last * kGemmBlock);
      const auto [oa, ob] = batch_offsets(a, b, i);
      T* ci = c + i * M * N;
      if (by_rows) {
        // Rows b0..b1 of a: a row offset in a stored matrix, a column offset in a transposed one.
        const int64_t off = la.trans == CblasNoTrans ? b0 * la.ld : b0;
        Blas<T>::gemm(la.trans, lb.trans, int(b1 - b0), n, k, pa + oa + off, lda, pb + ob, ldb,
                      ci + b0 * N, n);
      } else {
        const int64_t off = lb.trans == CblasNoTrans ? b0 : b0 * lb.ld;
        Blas<T>::gemm(la.trans, lb.trans, blas_int(M), int(b1 - b0), k, pa + oa, lda,
                      pb + ob + off, ldb, ci + b0, n);
      }
      u += last - first;
    }
  }, /*long_chunks=*/unit_work * double(grain) >= kLongChunkWork);
}

// The operand as gemm reads it: row-major with row stride ld, or transposed.
gemm::Operand gemm_operand(const View& v, int64_t offset) {
  const Layout l = *blas_layout(v);
  const float* p = reinterpret_cast<const float*>(v.data) + offset;
  return l.trans == CblasNoTrans ? gemm::Operand{p, l.ld, 1} : gemm::Operand{p, 1, l.ld};
}

// Float32 gemms (M, N > 1) on our AVX-512 kernel: small products one per work item as
// with BLAS, a large one split over the pool by the kernel itself (sharing packed
// blocks of b), a batch of many large ones one product per work item (waking workers
// on a busy machine from kLongChunkWork, as blocked_gemm's blocks).
void own_sgemm(const View& a, const View& b, int64_t M, int64_t N, int64_t K, int64_t nb,
               float* c) {
  const double work = double(M) * double(N) * double(K);
  if (work > kGemmSingleThread && nb < 4 * int64_t(pool_size())) {
    for (int64_t i = 0; i < nb; ++i) {
      const auto [oa, ob] = batch_offsets(a, b, i);
      gemm::sgemm(M, N, K, gemm_operand(a, oa), gemm_operand(b, ob), c + i * M * N, N, true);
    }
    return;
  }
  for_batch(a, b, nb, work, [&](int64_t oa, int64_t ob, int64_t i) {
    gemm::sgemm(M, N, K, gemm_operand(a, oa), gemm_operand(b, ob), c + i * M * N, N, false);
  }, /*long_chunks=*/work >= kLongChunkWork);
}

template <typename T>
void blas_product(const View& a, const View& b, int64_t M, int64_t N, int64_t K, int64_t nb,
                  T* c) {
  if constexpr (std::is_same_v<T, float>) {
    const double work = double(M) * double(N) * double(K);
    const bool small = M > 1 && N > 1 && work <= kSmallGemm;
    // Where 512-bit FMAs run in halves, the AVX2 kernel's 6 x 16 tiles fit small products
    // better than the AVX-512 kernel's 14 x 32 (64^3 on Zen 4: 4.7 against 4.9 us).
    if (M > 1 && N > 1 && vmath::isa_supported(vmath::Isa::Avx512) &&
        !(small && vmath::avx512_in_halves()))
      return own_sgemm(a, b, M, N, K, nb, c);
    if (small && vmath::isa_supported(vmath::Isa::Avx2)) {
      for_batch(a, b, nb, work, [&](int64_t oa, int64_t ob, int64_t i) {
        gemm::small_sgemm(M, N, K, gemm_operand(a, oa), gemm_operand(b, ob), c + i * M * N, N);
      });
      return;
    }
  }
  blas_on_one_thread();
  const T* pa = reinterpret_cast<const T*>(a.data);
  const T* pb = reinterpret_cast<const T*>(b.data);
  const int m = blas_int(M), n = blas_int(N), k = blas_int(K);
  const int64_t cs = M * N;
  const double work = double(M) * double(N) * double(K);
  if (M == 1 && N == 1) {
    const int ia = blas_int(*vec_inc(a)), ib = blas_int(*vec_inc(b));
    for_batch(a, b, nb, work, [&](int64_t oa, int64_t ob, int64_t i) {
      c[i] = Blas<T>::dot(k, pa + oa, ia, pb + ob, ib);
    });
  } else if (N == 1 || M == 1) {
    // A matrix times a vector; for M == 1 the matrix is b and the product is b^T a.
    const View& mat = N == 1 ? a : b;
    const T* pm = N == 1 ? pa : pb;
    const T* pv = N == 1 ? pb : pa;
    const Layout l = *blas_layout(mat);
    const int inc = blas_int(*vec_inc(N == 1 ? b : a)), ld = blas_int(l.ld);
    // BLAS sees the stored matrix: rows x cols untransposed, cols x rows transposed.
    const int rows = blas_int(mat.rows), cols = blas_int(mat.cols);
    const bool stored_t = l.trans == CblasTrans;
    const CBLAS_TRANSPOSE t = (N == 1) == stored_t ? CblasTrans : CblasNoTrans;
    const int srows = stored_t ? cols : rows, scols = stored_t ? rows : cols;
    if (nb == 1 && work >= kGemvSplit) {
      // One large product: slices of the output over the pool, each a gemv over the stored
      // rows (untransposed) or columns (transposed) that make it. A matrix that fits in
      // the last-level cache is read from it at more than one core's bandwidth.
      const int64_t out = t == CblasNoTrans ? srows : scols;
      // One slice per thread: measured 2 us faster than four on a 10000 x 100 product.
      const int64_t threads = pool_size();
      const int64_t grain = std::max<int64_t>(64, (out + threads - 1) / threads);
      parallel_for(out, grain, [&](int64_t lo, int64_t hi) {
        const int len = int(hi - lo);
        if (t == CblasNoTrans)
          Blas<T>::gemv(t, len, scols, pm + lo * ld, ld, pv, inc, c + lo);
        else
          Blas<T>::gemv(t, srows, len, pm + lo, ld, pv, inc, c + lo);
      });
      return;
    }
    for_batch(a, b, nb, work, [&](int64_t oa, int64_t ob, int64_t i) {
      const T* mp = pm + (N == 1 ? oa : ob);
      const T* vp = pv + (N == 1 ? ob : oa);
      Blas<T>::gemv(t, srows, scols, mp, ld, vp, inc, c + i * cs);
    });
  } else if (work <= kGemmSingleThread) {
    const Layout la = *blas_layout(a), lb = *blas_layout(b);
    const int lda = blas_int(la.ld), ldb = blas_int(lb.ld);
    for_batch(a, b, nb, work, [&](int64_t oa, int64_t ob, int64_t i) {
      Blas<T>::gemm(la.trans, lb.trans, m, n, k, pa + oa, lda, pb + ob, ldb, c + i * cs, n);
    });
  } else {
    blocked_gemm(a, b, M, N, K, nb, c);
  }
}

// Integer and bool products, accumulated in the output type (integers wrap): the operands
// are dense batch x M x K and batch x K x N in that type. Each row of a meets b a panel of
// kJ columns at a time (i-k-j order), so consecutive rows reuse the panel from cache.
template <typename T>
void own_product(const T* a, const T* b, int64_t M, int64_t N, int64_t K, int64_t nb, T* c) {
  // Wide unsigned accumulators wrap without undefined behaviour; bool is or-of-ands.
  using Acc = std::conditional_t<std::is_same_v<T, bool>, bool,
                                 std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>>;
  constexpr int64_t kJ = 512;
  parallel_for(nb * M, std::max<int64_t>(1, kParallelWork / std::max<int64_t>(1, N * K)),
               [&](int64_t lo, int64_t hi) {
                 Acc acc[kJ];
                 for (int64_t j0 = 0; j0 < N; j0 += kJ) {
                   const int64_t nj = std::min(kJ, N - j0);
                   for (int64_t row = lo; row < hi; ++row) {
                     const T* arow = a + row * K;
                     const T* panel = b + row / M * K * N + j0;
                     std::fill(acc, acc + nj, Acc(0));
                     for (int64_t k = 0; k < K; ++k) {
                       const Acc av = Acc(arow[k]);
                       const T* brow = panel + k * N;
                       if constexpr (std::is_same_v<T, bool>) {
                         if (av)
                           for (int64_t j = 0; j < nj; ++j) acc[j] = acc[j] | brow[j];
                       } else {
                         for (int64_t j = 0; j < nj; ++j) acc[j] += av * Acc(brow[j]);
                       }
                     }
                     T* crow = c + row * N + j0;
                     for (int64_t j = 0; j < nj; ++j) crow[j] = T(acc[j]);
                   }
                 }
               });
}

// The dtype the product is computed in.
DType compute_dtype(DType in, DType out) {
  auto either = [&](DType t) { return in == t || out == t; };
  if (is_complex(in) || is_complex(out))
    return either(DType::C128) || either(DType::F64) ? DType::C128 : DType::C64;
  if (is_floating(in) || is_floating(out)) return either(DType::F64) ? DType::F64 : DType::F32;
  return out;
}

// The contracting pairs in an order that lets both operands merge them into one dim: as
// given, or sorted by either side's strides; failing that, one where at least one side merges.
// False when the order is the given one, left unwritten (one pair: no allocation on every
// product).
bool contracting_order(const Array& lhs, const Array& rhs, const DotDims& dims,
                       std::vector<int64_t>& lcon, std::vector<int64_t>& rcon) {
  const size_t n = dims.lhs_contracting.size();
  if (n <= 1) return false;
  std::vector<size_t> orders[3];
  for (auto& o : orders) {
    o.resize(n);
    std::iota(o.begin(), o.end(), size_t(0));
  }
  auto by = [&](const Array& x, const std::vector<int64_t>& con) {
    return [&x, &con](size_t a, size_t b) {
      return x.strides()[size_t(con[a])] > x.strides()[size_t(con[b])];
    };
  };
  std::stable_sort(orders[1].begin(), orders[1].end(), by(lhs, dims.lhs_contracting));
  std::stable_sort(orders[2].begin(), orders[2].end(), by(rhs, dims.rhs_contracting));
  auto pick = [&](const std::vector<size_t>& o) {
    lcon.clear();
    rcon.clear();
    for (size_t i : o) {
      lcon.push_back(dims.lhs_contracting[i]);
      rcon.push_back(dims.rhs_contracting[i]);
    }
  };
  for (const auto& o : orders) {
    pick(o);
    if (merge_dims(lhs, lcon) && merge_dims(rhs, rcon)) return true;
  }
  for (const auto& o : orders) {
    pick(o);
    if (merge_dims(lhs, lcon) || merge_dims(rhs, rcon)) return true;
  }
  pick(orders[0]);
  return true;
}

// The dims of an operand of `rank` that are neither batch nor contracting.
std::vector<int64_t> free_dims(int64_t rank, const std::vector<int64_t>& batch,
                               const std::vector<int64_t>& contracting) {
  std::vector<int64_t> out;
  out.reserve(size_t(rank));
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end())
      out.push_back(d);
  return out;
}

}  // namespace

void dot_general(const Array& lhs, const Array& rhs, const DotDims& dims, const Array& out) {
  if (out.size() == 0) return;
  std::vector<int64_t> lsorted, rsorted;
  const bool sorted = contracting_order(lhs, rhs, dims, lsorted, rsorted);
  const std::vector<int64_t>& lcon = sorted ? lsorted : dims.lhs_contracting;
  const std::vector<int64_t>& rcon = sorted ? rsorted : dims.rhs_contracting;
  const std::vector<int64_t> lfree = free_dims(lhs.ndim(), dims.lhs_batch, dims.lhs_contracting);
  const std::vector<int64_t> rfree = free_dims(rhs.ndim(), dims.rhs_batch, dims.rhs_contracting);
  int64_t M = 1, N = 1, K = 1, nb = 1;
  for (int64_t d : lfree) M *= lhs.shape()[size_t(d)];
  for (int64_t d : rfree) N *= rhs.shape()[size_t(d)];
  for (int64_t d : lcon) K *= lhs.shape()[size_t(d)];
  for (int64_t d : dims.lhs_batch) nb *= lhs.shape()[size_t(d)];
  if (K == 0) {
    std::memset(out.mutable_data(), 0, out.nbytes());
    return;
  }

  const DType ct = compute_dtype(lhs.dtype(), out.dtype());
  if (!is_inexact(ct)) {
    const Array a = dense_copy(lhs, ct, cat(dims.lhs_batch, lfree, lcon));
    const Array b = dense_copy(rhs, ct, cat(dims.rhs_batch, rcon, rfree));
    visit_dtype(ct, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T>)
        own_product(reinterpret_cast<const T*>(a.data()), reinterpret_cast<const T*>(b.data()),
                    M, N, K, nb, reinterpret_cast<T*>(out.mutable_data()));
    });
    return;
  }

  std::vector<Array> keep;  // temporaries that views point into
  auto prepare = [&](const Array& x, const std::vector<int64_t>& batch,
                     const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                     bool vector) {
    if (x.dtype() == ct) {
      std::optional<View> v = make_view(x, batch, rows, cols);
      if (v && (vector ? vec_inc(*v).has_value() : blas_layout(*v).has_value())) return *v;
    }
    return materialize(x, ct, batch, rows, cols, keep);
  };
  const View a = prepare(lhs, dims.lhs_batch, lfree, lcon, M == 1);
  const View b = prepare(rhs, dims.rhs_batch, rcon, rfree, N == 1);
  // The product in ct: into out, or a temporary converted into it (no copy of out: an
  // Array's copy allocates its shape and strides).
  std::optional<Array> wide;
  if (ct != out.dtype()) wide.emplace(out.shape(), ct, out.device(), Event::ready());
  const Array& result = wide ? *wide : out;
  visit_dtype(ct, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, complex64> || std::is_same_v<T, complex128>)
      blas_product<T>(a, b, M, N, K, nb, reinterpret_cast<T*>(result.mutable_data()));
  });
  if (wide) convert(*wide, out);
}

}  // namespace tinyxla::cpu
