// lax.reduce_window_{sum,max,min} on the CPU. The trailing dimensions that the window
// leaves alone (window 1, stride 1, no padding or dilation: the channels of a pooling)
// form a contiguous row that each window tap combines at once. A window that lies inside
// the input (no padding or base dilation under it) reads its taps at fixed row offsets and
// combines them in blocks of the row kept in registers, vectorised (an AVX2 build of the
// same code where the CPU has it, an AVX-512 kernel for float and double sum, max, min);
// a run of such windows along the last window dimension is one call. Other windows are
// walked tap by tap, skipping taps on padding or dilation holes (they read as the identity).
#include <immintrin.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "kernels.h"
#include "tinyxla/error.h"
#include "vmath.h"
#include "windows.h"

namespace tinyxla::cpu {
namespace {

using semantics::AccOf;
using semantics::narrow;
using semantics::widen;

constexpr int64_t kRowBlock = 64;  // row elements combined at once (accumulators in registers)
constexpr int64_t kLongRow = 1 << 14;  // longer rows split into column blocks over the pool

template <typename Op, typename T>
constexpr bool kNoNanForm =
    (std::is_same_v<Op, semantics::MaxOp> || std::is_same_v<Op, semantics::MinOp>) &&
    (std::is_same_v<AccOf<Op, T>, float> || std::is_same_v<AccOf<Op, T>, double>);

// Columns [j0, j0 + m) of the taps rows[t] + off, combined in tap order into dst[j0, j0 + m)
// (m <= kRowBlock). Max and min of floats use the compare-and-select form, which
// vectorises; a block that read a NaN is redone exactly (NaN is rare). Full blocks pass m
// as the constant kRowBlock, so that the accumulators live in registers: with a variable m
// they were loaded and stored at every tap, and a 2x2 pooling of 64 channels ran at half of
// memory speed.
template <typename Op, typename T>
inline __attribute__((always_inline)) void combine_block(const T* const* rows, int64_t off,
                                                         int64_t taps, int64_t j0, int64_t m,
                                                         T* dst) {
  using Acc = AccOf<Op, T>;
  int seen = 0;
  Acc acc[kRowBlock];
  for (int64_t j = 0; j < m; ++j) acc[j] = Op::template identity<Acc>();
  for (int64_t t = 0; t < taps; ++t) {
    const T* row = rows[t] + off + j0;
    if constexpr (kNoNanForm<Op, T>) {
      for (int64_t j = 0; j < m; ++j) {
        const Acc v = Acc(widen(row[j]));
        seen |= v != v;
        acc[j] = Op::no_nan(acc[j], v);
      }
    } else {
      for (int64_t j = 0; j < m; ++j) acc[j] = Op::template apply<Acc>(acc[j], Acc(widen(row[j])));
    }
  }
  if (seen) {
    for (int64_t j = 0; j < m; ++j) {
      acc[j] = Op::template identity<Acc>();
      for (int64_t t = 0; t < taps; ++t)
        acc[j] = Op::template apply<Acc>(acc[j], Acc(widen(rows[t][off + j0 + j])));
    }
  }
  for (int64_t j = 0; j < m; ++j) dst[j0 + j] = narrow<T>(acc[j]);
}

// `count` windows whose taps lie `step` elements apart, each combining n columns of its
// taps into n elements of dst (one window's taps: rows[t] + w * step).
template <typename Op, typename T>
inline __attribute__((always_inline)) void combine_rows_body(const T* const* rows, int64_t taps,
                                                             int64_t n, int64_t count,
                                                             int64_t step, T* dst) {
  for (int64_t w = 0; w < count; ++w, dst += n) {
    int64_t j0 = 0;
    for (; j0 + kRowBlock <= n; j0 += kRowBlock)
      combine_block<Op, T>(rows, w * step, taps, j0, kRowBlock, dst);
    if (j0 < n) combine_block<Op, T>(rows, w * step, taps, j0, n - j0, dst);
  }
}

template <typename Op, typename T>
void combine_rows_generic(const T* const* rows, int64_t taps, int64_t n, int64_t count,
                          int64_t step, T* dst) {
  combine_rows_body<Op, T>(rows, taps, n, count, step, dst);
}

template <typename Op, typename T>
__attribute__((target("avx2,fma"))) void combine_rows_avx2(const T* const* rows, int64_t taps,
                                                           int64_t n, int64_t count,
                                                           int64_t step, T* dst) {
  combine_rows_body<Op, T>(rows, taps, n, count, step, dst);
}

// Max and min of float and double rows in 512-bit registers. The compiled form of the
// generic body above tested every element for NaN with a blend and reduced the flag across
// the block after every tap: a 2x2 max_pool of (32,64,64,64) took 2.2 ms of one core, where
// a plain loop of maxps takes 1.0-1.1 ms. Here taps combine in pairs, starting from the
// first rather than from the identity, and one unordered compare per pair of vectors finds a
// NaN in either (1.5-1.6 ms): NaN is rare, so a block that read one is redone exactly.
// Float and double sums add here too, in the generic body's order: its compiled form added
// most taps with scalar instructions (a 2x2 sum pooling of the same shape: 2.9 ms -> 1.8).
template <typename T>
struct Zmm;
template <>
struct Zmm<float> {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int64_t kLanes = 16;
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V load(const float* p, Mask m) {
    return _mm512_maskz_loadu_ps(m, p);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static void store(float* p, Mask m,
                                                                           V v) {
    _mm512_mask_storeu_ps(p, m, v);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static Mask unordered(V a, V b) {
    return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V zero() {
    return _mm512_setzero_ps();
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V add(V a, V b) {
    return _mm512_add_ps(a, b);
  }
  // max_no_nan and min_no_nan (element_semantics.h), a vector at a time.
  template <bool kMax>
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V combine(V a, V b) {
    if constexpr (kMax) return _mm512_and_ps(_mm512_max_ps(a, b), _mm512_max_ps(b, a));
    else return _mm512_or_ps(_mm512_min_ps(a, b), _mm512_min_ps(b, a));
  }
};
template <>
struct Zmm<double> {
  using V = __m512d;
  using Mask = __mmask8;
  static constexpr int64_t kLanes = 8;
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V load(const double* p, Mask m) {
    return _mm512_maskz_loadu_pd(m, p);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static void store(double* p, Mask m,
                                                                           V v) {
    _mm512_mask_storeu_pd(p, m, v);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static Mask unordered(V a, V b) {
    return _mm512_cmp_pd_mask(a, b, _CMP_UNORD_Q);
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V zero() {
    return _mm512_setzero_pd();
  }
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V add(V a, V b) {
    return _mm512_add_pd(a, b);
  }
  template <bool kMax>
  [[gnu::target("avx512f,avx512dq"), gnu::always_inline]] static V combine(V a, V b) {
    if constexpr (kMax) return _mm512_and_pd(_mm512_max_pd(a, b), _mm512_max_pd(b, a));
    else return _mm512_or_pd(_mm512_min_pd(a, b), _mm512_min_pd(b, a));
  }
};

template <typename Op, typename T>
constexpr bool kZmmForm = (std::is_same_v<Op, semantics::MaxOp> ||
                           std::is_same_v<Op, semantics::MinOp> ||
                           std::is_same_v<Op, semantics::SumOp>) &&
                          (std::is_same_v<T, float> || std::is_same_v<T, double>);

// Columns [j0, j0 + kVecs * kLanes) of the taps rows[t] + off (the last vector's lanes cut
// to `last`), combined into dst; taps >= 1. The kVecs accumulators stay in registers.
template <typename Op, typename T, int kVecs>
[[gnu::target("avx512f,avx512dq"), gnu::always_inline]] inline void zmm_block(
    const T* const* rows, int64_t off, int64_t taps, int64_t j0, typename Zmm<T>::Mask last,
    T* dst) {
  using Z = Zmm<T>;
  constexpr bool kMax = std::is_same_v<Op, semantics::MaxOp>;
  const auto full = typename Z::Mask(~typename Z::Mask(0));
  auto mask = [&](int q) { return q == kVecs - 1 ? last : full; };
  typename Z::V acc[kVecs];
  if constexpr (std::is_same_v<Op, semantics::SumOp>) {
    // In tap order from the identity, as the generic body adds (pairs would round
    // differently, and -0 + -0 starting from a tap would keep a sign that 0 + -0 drops).
    for (int q = 0; q < kVecs; ++q) acc[q] = Z::zero();
    for (int64_t t = 0; t < taps; ++t)
      for (int q = 0; q < kVecs; ++q)
        acc[q] = Z::add(acc[q], Z::load(rows[t] + off + j0 + q * Z::kLanes, mask(q)));
    for (int q = 0; q < kVecs; ++q) Z::store(dst + j0 + q * Z::kLanes, mask(q), acc[q]);
    return;
  }
  typename Z::Mask nan = 0;
  int64_t t = taps % 2 == 1 ? 1 : 2;  // an odd tap count starts from one tap, else a pair
  for (int q = 0; q < kVecs; ++q) {
    const typename Z::V v = Z::load(rows[0] + off + j0 + q * Z::kLanes, mask(q));
    if (t == 1) {
      nan |= Z::unordered(v, v);
      acc[q] = v;
    } else {
      const typename Z::V w = Z::load(rows[1] + off + j0 + q * Z::kLanes, mask(q));
      nan |= Z::unordered(v, w);
      acc[q] = Z::template combine<kMax>(v, w);
    }
  }
  for (; t < taps; t += 2) {
    const T* a = rows[t] + off + j0;
    const T* b = rows[t + 1] + off + j0;
    for (int q = 0; q < kVecs; ++q) {
      const typename Z::V v = Z::load(a + q * Z::kLanes, mask(q));
      const typename Z::V w = Z::load(b + q * Z::kLanes, mask(q));
      nan |= Z::unordered(v, w);
      acc[q] = Z::template combine<kMax>(acc[q], Z::template combine<kMax>(v, w));
    }
  }
  if (nan == 0) {
    for (int q = 0; q < kVecs; ++q) Z::store(dst + j0 + q * Z::kLanes, mask(q), acc[q]);
    return;
  }
  const int64_t m = (kVecs - 1) * Z::kLanes + __builtin_popcount(unsigned(last));
  for (int64_t j = j0; j < j0 + m; ++j) {
    T r = Op::template identity<T>();
    for (int64_t k = 0; k < taps; ++k) r = Op::template apply<T>(r, rows[k][off + j]);
    dst[j] = r;
  }
}

template <typename Op, typename T>
[[gnu::target("avx512f,avx512dq")]] void combine_rows_avx512(const T* const* rows, int64_t taps,
                                                              int64_t n, int64_t count,
                                                              int64_t step, T* dst) {
  using Z = Zmm<T>;
  constexpr int kVecs = 4;  // 64 floats, 32 doubles a block
  const auto full = typename Z::Mask(~typename Z::Mask(0));
  for (int64_t w = 0; w < count; ++w, dst += n) {
    int64_t j0 = 0;
    for (; j0 + kVecs * Z::kLanes <= n; j0 += kVecs * Z::kLanes)
      zmm_block<Op, T, kVecs>(rows, w * step, taps, j0, full, dst);
    for (; j0 < n; j0 += Z::kLanes) {
      const int64_t m = std::min(n - j0, Z::kLanes);
      zmm_block<Op, T, 1>(rows, w * step, taps, j0, typename Z::Mask((uint64_t(1) << m) - 1), dst);
    }
  }
}

// `count` interior windows, each combining n columns of its taps into n elements of dst;
// window w's taps are rows[t] + w * step.
template <typename Op, typename T>
void combine_rows(const T* const* rows, int64_t taps, int64_t n, int64_t count, int64_t step,
                  T* dst) {
  if constexpr (kZmmForm<Op, T>) {  // taps >= 1: max and min start from the first tap
    static const bool avx512 = vmath::isa_supported(vmath::Isa::Avx512);
    if (avx512 && taps >= 1) return combine_rows_avx512<Op, T>(rows, taps, n, count, step, dst);
  }
  static const bool avx2 = vmath::isa_supported(vmath::Isa::Avx2);
  if (avx2) return combine_rows_avx2<Op, T>(rows, taps, n, count, step, dst);
  combine_rows_generic<Op, T>(rows, taps, n, count, step, dst);
}

template <typename Op, typename T>
void reduce_window_typed(const Array& x, const WindowGeometry& g, const Array& out) {
  using Acc = AccOf<Op, T>;
  const Shape& in = x.shape();
  const Shape& os = out.shape();
  int nd = x.ndim();
  int64_t inner = 1;
  while (nd > 0) {  // the trailing dimensions the window leaves alone
    const size_t d = size_t(nd - 1);
    if (g.window[d] != 1 || g.strides[d] != 1 || g.pad_lo[d] != 0 || g.pad_hi[d] != 0 ||
        g.base_dilation[d] != 1)
      break;
    inner *= in[d];
    --nd;
  }
  int64_t outer = 1, taps = 1;
  for (int d = 0; d < nd; ++d) {
    outer *= os[size_t(d)];
    taps *= g.window[size_t(d)];
  }
  // Interior windows: per dimension, which output positions have every tap inside the
  // input; their taps sit at fixed row offsets from the window's first row.
  std::vector<std::vector<char>> interior(static_cast<size_t>(nd));
  std::vector<int64_t> row_stride(static_cast<size_t>(nd), 1), tap_rows;
  for (int d = nd - 2; d >= 0; --d) row_stride[size_t(d)] = row_stride[size_t(d + 1)] * in[size_t(d + 1)];
  for (int d = 0; d < nd; ++d) {
    const size_t u = size_t(d);
    interior[u].resize(size_t(os[u]));
    for (int64_t o = 0; o < os[u]; ++o) {
      const int64_t first = o * g.strides[u] - g.pad_lo[u];
      const int64_t last = first + (g.window[u] - 1) * g.window_dilation[u];
      interior[u][size_t(o)] = g.base_dilation[u] == 1 && first >= 0 && last < in[u];
    }
  }
  {
    std::vector<int64_t> k(static_cast<size_t>(nd), 0);
    for (int64_t tap = 0; tap < taps; ++tap) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += k[size_t(d)] * g.window_dilation[size_t(d)] * row_stride[size_t(d)];
      tap_rows.push_back(off);
      for (int d = nd - 1; d >= 0; --d) {
        if (++k[size_t(d)] < g.window[size_t(d)]) break;
        k[size_t(d)] = 0;
      }
    }
  }
  const T* src = reinterpret_cast<const T*>(x.data());
  T* dst = reinterpret_cast<T*>(out.mutable_data());
  // Work items: an output position's row, long rows cut into column blocks.
  const int64_t cols = inner > kLongRow ? kLongRow : std::max<int64_t>(inner, 1);
  const int64_t cblocks = (inner + cols - 1) / cols;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, cols * taps));
  parallel_for(outer * cblocks, grain, [&](int64_t lo, int64_t hi) {
    auto acc = std::make_unique<Acc[]>(static_cast<size_t>(cols));
    std::vector<const T*> rows(static_cast<size_t>(taps));
    std::vector<int64_t> o(static_cast<size_t>(nd)), k(static_cast<size_t>(nd));
    // Columns [c0, c1) of one output position's taps into acc, exactly, tap by tap.
    auto reduce_taps = [&](int64_t c0, int64_t c1) {
      std::fill(acc.get(), acc.get() + (c1 - c0), Op::template identity<Acc>());
      std::fill(k.begin(), k.end(), 0);
      for (int64_t tap = 0; tap < taps; ++tap) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < nd && inside; ++d) {
          const size_t u = size_t(d);
          int64_t pos = o[u] * g.strides[u] + k[u] * g.window_dilation[u] - g.pad_lo[u];
          const int64_t bd = g.base_dilation[u];
          if (pos < 0 || (bd != 1 && pos % bd != 0)) {
            inside = false;
          } else {
            pos /= bd;
            inside = pos < in[u];
            off = off * in[u] + pos;
          }
        }
        if (inside) {
          const T* row = src + off * inner + c0;
          Acc* a = acc.get();
          for (int64_t j = 0; j < c1 - c0; ++j)
            a[j] = Op::template apply<Acc>(a[j], Acc(widen(row[j])));
        }
        for (int d = nd - 1; d >= 0; --d) {
          if (++k[size_t(d)] < g.window[size_t(d)]) break;
          k[size_t(d)] = 0;
        }
      }
    };
    int64_t at = -1;  // the output position `o` holds
    for (int64_t it = lo; it < hi; ++it) {
      const int64_t i = it / cblocks, c0 = (it % cblocks) * cols, c1 = std::min(inner, c0 + cols);
      if (at >= 0 && i == at + 1) {
        for (int d = nd - 1; d >= 0; --d) {
          if (++o[size_t(d)] < os[size_t(d)]) break;
          o[size_t(d)] = 0;
        }
      } else if (i != at) {
        int64_t rem = i;
        for (int d = nd - 1; d >= 0; --d) {
          o[size_t(d)] = rem % os[size_t(d)];
          rem /= os[size_t(d)];
        }
      }
      at = i;
      T* orow = dst + i * inner + c0;
      bool inside = true;
      int64_t first = 0;  // the window's first row, when it is interior
      for (int d = 0; d < nd && inside; ++d) {
        const size_t u = size_t(d);
        inside = interior[u][size_t(o[u])] != 0;
        first += (o[u] * g.strides[u] - g.pad_lo[u]) * row_stride[u];
      }
      if (inside) {
        // The interior windows that follow along the last window dimension have the same
        // taps a stride further on: one call combines the run (a call and this loop's
        // bookkeeping for each 64-channel window were 12% of a 2x2 max_pool).
        int64_t count = 1, step = 0;
        if (cblocks == 1 && nd > 0) {
          const size_t u = size_t(nd - 1);
          while (it + count < hi && o[u] + count < os[u] && interior[u][size_t(o[u] + count)])
            ++count;
          step = g.strides[u] * row_stride[u] * inner;
          o[u] += count - 1;
          it += count - 1;
          at += count - 1;
        }
        for (int64_t t = 0; t < taps; ++t)
          rows[size_t(t)] = src + (first + tap_rows[size_t(t)]) * inner + c0;
        combine_rows<Op, T>(rows.data(), taps, c1 - c0, count, step, orow);
      } else {
        reduce_taps(c0, c1);
        for (int64_t j = 0; j < c1 - c0; ++j) orow[j] = narrow<T>(acc[j]);
      }
    }
  }, /*long_chunks=*/double(out.size()) * double(taps) >= double(kLongOpWork));
}

}  // namespace

void reduce_window(ReduceOp op, const Array& x, const WindowGeometry& geometry,
                   const Array& out) {
  if (out.size() == 0) return;
  Array dense = x;
  if (!x.is_contiguous()) {
    dense = Array(x.shape(), x.dtype(), x.device(), Event::ready());
    copy(x, dense);
  }
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    switch (op) {
      case ReduceOp::sum: return reduce_window_typed<semantics::SumOp, T>(dense, geometry, out);
      case ReduceOp::max: return reduce_window_typed<semantics::MaxOp, T>(dense, geometry, out);
      case ReduceOp::min: return reduce_window_typed<semantics::MinOp, T>(dense, geometry, out);
      default:
        throw_error(ErrorKind::InvalidArgument, "reduce_window",
                    std::string("has no kernel for reduce op ") + op_name(op));
    }
  });
}

}  // namespace tinyxla::cpu
