// lax's select_and_gather_add and select_and_scatter_add on the CPU: max and min pooling's
// derivatives. Each window selects its first maximum (minimum) in tap order, padding and
// dilation holes reading as the identity; a window that selects a hole contributes 0.
// As in reduce_window, trailing dimensions the window leaves alone form rows handled a
// block at a time, and an interior window's taps sit at fixed row offsets.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
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

using semantics::Compute;
using semantics::narrow;
using semantics::widen;

constexpr int64_t kBlock = 64;  // row elements selected at once

// Where the windows of `geometry` over an operand of shape `in` read: rows of `inner`
// elements, the window's dimensions [0, nd), and each output position's tap rows.
struct WindowWalk {
  int nd = 0;
  int64_t inner = 1, taps = 1, outer = 1;
  Shape in, out;
  std::vector<int64_t> row_stride, tap_rows;
  std::vector<std::vector<char>> interior;
  const WindowGeometry* g = nullptr;

  WindowWalk(const Shape& operand, const Shape& windows, const WindowGeometry& geometry)
      : in(operand), out(windows), g(&geometry) {
    nd = int(in.size());
    while (nd > 0) {
      const size_t d = size_t(nd - 1);
      if (g->window[d] != 1 || g->strides[d] != 1 || g->pad_lo[d] != 0 || g->pad_hi[d] != 0 ||
          g->base_dilation[d] != 1)
        break;
      inner *= in[d];
      --nd;
    }
    row_stride.assign(size_t(nd), 1);
    for (int d = nd - 2; d >= 0; --d) row_stride[size_t(d)] = row_stride[size_t(d + 1)] * in[size_t(d + 1)];
    interior.resize(size_t(nd));
    for (int d = 0; d < nd; ++d) {
      const size_t u = size_t(d);
      outer *= out[u];
      taps *= g->window[u];
      interior[u].resize(size_t(out[u]));
      for (int64_t o = 0; o < out[u]; ++o) {
        const int64_t first = o * g->strides[u] - g->pad_lo[u];
        const int64_t last = first + (g->window[u] - 1) * g->window_dilation[u];
        interior[u][size_t(o)] = g->base_dilation[u] == 1 && first >= 0 && last < in[u];
      }
    }
    std::vector<int64_t> k(static_cast<size_t>(nd), 0);
    for (int64_t t = 0; t < taps; ++t) {
      int64_t off = 0;
      for (int d = 0; d < nd; ++d) off += k[size_t(d)] * g->window_dilation[size_t(d)] * row_stride[size_t(d)];
      tap_rows.push_back(off);
      advance(k, g->window);
    }
  }

  // The next index of a row-major counter over `sizes`.
  void advance(std::vector<int64_t>& idx, const std::vector<int64_t>& sizes) const {
    for (int d = nd - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < sizes[size_t(d)]) return;
      idx[size_t(d)] = 0;
    }
  }

  // The row of each tap of the window at output position `o` (-1: a hole).
  void rows_of(const std::vector<int64_t>& o, std::vector<int64_t>& k, int64_t* rows) const {
    bool inside = true;
    int64_t first = 0;
    for (int d = 0; d < nd && inside; ++d) {
      const size_t u = size_t(d);
      inside = interior[u][size_t(o[u])] != 0;
      first += (o[u] * g->strides[u] - g->pad_lo[u]) * row_stride[u];
    }
    if (inside) {
      for (int64_t t = 0; t < taps; ++t) rows[t] = first + tap_rows[size_t(t)];
      return;
    }
    std::fill(k.begin(), k.end(), 0);
    for (int64_t t = 0; t < taps; ++t) {
      int64_t off = 0;
      bool ok = true;
      for (int d = 0; d < nd && ok; ++d) {
        const size_t u = size_t(d);
        int64_t pos = o[u] * g->strides[u] + k[u] * g->window_dilation[u] - g->pad_lo[u];
        const int64_t bd = g->base_dilation[u];
        if (pos < 0 || (bd != 1 && pos % bd != 0)) {
          ok = false;
        } else {
          pos /= bd;
          ok = pos < in[u];
          off = off * in[u] + pos;
        }
      }
      rows[t] = ok ? off : -1;
      advance(k, g->window);
    }
  }

  // Output positions [lo, hi) in order: fn(position, tap rows).
  template <typename Fn>
  void walk(int64_t lo, int64_t hi, Fn&& fn) const {
    std::vector<int64_t> o(static_cast<size_t>(nd)), k(static_cast<size_t>(nd)),
        rows(static_cast<size_t>(taps));
    int64_t rem = lo;
    for (int d = nd - 1; d >= 0; --d) {
      o[size_t(d)] = rem % out[size_t(d)];
      rem /= out[size_t(d)];
    }
    for (int64_t i = lo; i < hi; ++i) {
      rows_of(o, k, rows.data());
      fn(i, rows.data());
      advance(o, out);
    }
  }
};

// ---- per-tap steps over m <= kBlock row elements: a portable loop, and AVX2 for float32 ----

// Where tap t's row is strictly better than value, it becomes the value and t the best.
template <typename V, bool kMax>
void select_step(const V* row, int64_t m, int32_t t, V* value, int32_t* best) {
  for (int64_t j = 0; j < m; ++j) {
    const V v = row[j];
    const bool take = kMax ? semantics::greater(v, value[j]) : semantics::greater(value[j], v);
    value[j] = take ? v : value[j];
    best[j] = take ? t : best[j];
  }
}
// dst takes row where best == k (gather), adds src there (scatter), or is src there and 0
// elsewhere (scatter of windows that tile the operand).
template <typename T>
void take_step(const T* row, const int32_t* best, int32_t k, int64_t m, T* dst) {
  for (int64_t j = 0; j < m; ++j) dst[j] = best[j] == k ? row[j] : dst[j];
}
template <typename T>
void add_step(const T* src, const int32_t* best, int32_t k, int64_t m, T* row) {
  using V = Compute<T>;
  for (int64_t j = 0; j < m; ++j)
    row[j] = best[j] == k ? narrow<T>(V(widen(row[j])) + V(widen(src[j]))) : row[j];
}
template <typename T>
void put_step(const T* src, const int32_t* best, int32_t k, int64_t m, T* row) {
  using V = Compute<T>;  // 0 + s, as the accumulation gives (a -0 cotangent lands as +0)
  for (int64_t j = 0; j < m; ++j) row[j] = best[j] == k ? narrow<T>(V(0) + V(widen(src[j]))) : T{};
}

// The portable loops become branches on each element's comparison; these are blends.
template <bool kMax>
__attribute__((target("avx2"))) void select_step_avx2(const float* row, int64_t m, int32_t t,
                                                      float* value, int32_t* best) {
  const __m256i tv = _mm256_set1_epi32(t);
  int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    const __m256 v = _mm256_loadu_ps(row + j), cur = _mm256_loadu_ps(value + j);
    const __m256 take = kMax ? _mm256_cmp_ps(v, cur, _CMP_GT_OQ) : _mm256_cmp_ps(v, cur, _CMP_LT_OQ);
    _mm256_storeu_ps(value + j, _mm256_blendv_ps(cur, v, take));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(best + j));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(best + j),
                        _mm256_blendv_epi8(b, tv, _mm256_castps_si256(take)));
  }
  select_step<float, kMax>(row + j, m - j, t, value + j, best + j);
}
// mode 0: take (gather), 1: add (scatter), 2: put (scatter of tiling windows).
template <int kMode>
__attribute__((target("avx2"))) void move_step_avx2(const float* from, const int32_t* best,
                                                    int32_t k, int64_t m, float* to) {
  const __m256i kv = _mm256_set1_epi32(k);
  const __m256 zero = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= m; j += 8) {
    const __m256 hit = _mm256_castsi256_ps(_mm256_cmpeq_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(best + j)), kv));
    const __m256 f = _mm256_loadu_ps(from + j);
    __m256 r;
    if constexpr (kMode == 0) r = _mm256_blendv_ps(_mm256_loadu_ps(to + j), f, hit);
    else if constexpr (kMode == 1) {
      const __m256 old = _mm256_loadu_ps(to + j);
      r = _mm256_blendv_ps(old, _mm256_add_ps(old, f), hit);
    } else {
      r = _mm256_blendv_ps(zero, _mm256_add_ps(zero, f), hit);
    }
    _mm256_storeu_ps(to + j, r);
  }
  if constexpr (kMode == 0) take_step(from + j, best + j, k, m - j, to + j);
  else if constexpr (kMode == 1) add_step(from + j, best + j, k, m - j, to + j);
  else put_step(from + j, best + j, k, m - j, to + j);
}

bool have_avx2() {
  static const bool yes = vmath::isa_supported(vmath::Isa::Avx2);
  return yes;
}

template <int kMode, typename T>
void move_step(const T* from, const int32_t* best, int32_t k, int64_t m, T* to) {
  if constexpr (std::is_same_v<T, float>) {
    if (have_avx2()) return move_step_avx2<kMode>(from, best, k, m, to);
  }
  if constexpr (kMode == 0) take_step(from, best, k, m, to);
  else if constexpr (kMode == 1) add_step(from, best, k, m, to);
  else put_step(from, best, k, m, to);
}

// The selected tap of elements [j0, j0 + m) of a window's rows (-1: a hole).
template <typename T, bool kMax>
void select_taps(const T* x, int64_t inner, const int64_t* rows, int64_t taps, int64_t j0,
                 int64_t m, int32_t* best) {
  using V = Compute<T>;
  V value[kBlock], wide[kBlock];
  const V identity = kMax ? semantics::lowest<V>() : semantics::highest<V>();
  for (int64_t t = 0; t < taps; ++t) {
    if (rows[t] < 0) {
      if (t == 0) std::fill(value, value + m, identity), std::fill(best, best + m, -1);
      continue;  // a hole reads as the identity: never strictly better
    }
    const T* row = x + rows[t] * inner + j0;
    const V* v = reinterpret_cast<const V*>(row);
    if constexpr (!std::is_same_v<T, V>) {
      for (int64_t j = 0; j < m; ++j) wide[j] = V(widen(row[j]));
      v = wide;
    }
    if (t == 0) {
      std::copy(v, v + m, value);
      std::fill(best, best + m, 0);
    } else if constexpr (std::is_same_v<V, float>) {
      if (have_avx2()) select_step_avx2<kMax>(v, m, int32_t(t), value, best);
      else select_step<V, kMax>(v, m, int32_t(t), value, best);
    } else {
      select_step<V, kMax>(v, m, int32_t(t), value, best);
    }
  }
}

// Each window's values of its selected tap: per tap a select over the row (vectorised),
// no gathers.
template <typename T, bool kMax>
void gather_typed(const WindowWalk& w, const T* t, const T* x, T* out) {
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, w.inner * w.taps));
  parallel_for(w.outer, grain, [&](int64_t lo, int64_t hi) {
    int32_t best[kBlock];
    w.walk(lo, hi, [&](int64_t i, const int64_t* rows) {
      for (int64_t j0 = 0; j0 < w.inner; j0 += kBlock) {
        const int64_t m = std::min(kBlock, w.inner - j0);
        select_taps<T, kMax>(x, w.inner, rows, w.taps, j0, m, best);
        T* dst = out + i * w.inner + j0;
        std::fill(dst, dst + m, T{});
        for (int64_t k = 0; k < w.taps; ++k)
          if (rows[k] >= 0) move_step<0>(t + rows[k] * w.inner + j0, best, int32_t(k), m, dst);
      }
    });
  }, double(w.outer) * double(w.inner * w.taps) >= double(kLongOpWork));
}

// Each window's source element added into its selected tap: per tap a masked add over the
// row (vectorised). Windows that tile the operand exactly write each element once instead.
template <typename T, bool kMax>
void scatter_typed(const WindowWalk& w, const T* src, const T* x, T* out) {
  bool overlap = false, tiles = true;
  for (int d = 0; d < w.nd; ++d) {
    const size_t u = size_t(d);
    const WindowGeometry& g = *w.g;
    overlap = overlap || g.strides[u] < (g.window[u] - 1) * g.window_dilation[u] + 1;
    tiles = tiles && g.strides[u] == g.window[u] && g.window_dilation[u] == 1 &&
            g.base_dilation[u] == 1 && g.pad_lo[u] == 0 && w.out[u] * g.strides[u] == w.in[u];
  }
  if (!tiles) std::fill(out, out + num_elements(w.in), T{});
  // Overlapping windows may add into one element: the positions then split only over the
  // leading dimensions the window leaves alone (each its own slab of the operand).
  int free = 0;
  while (free < w.nd && w.g->window[size_t(free)] == 1 && w.g->strides[size_t(free)] == 1 &&
         w.g->pad_lo[size_t(free)] == 0 && w.g->pad_hi[size_t(free)] == 0 &&
         w.g->base_dilation[size_t(free)] == 1)
    ++free;
  int64_t units = w.outer, per_unit = 1;
  if (overlap) {
    units = 1;
    for (int d = 0; d < free; ++d) units *= w.out[size_t(d)];
    per_unit = units ? w.outer / units : 0;
  }
  const int64_t work = w.inner * w.taps * per_unit;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, work));
  parallel_for(units, grain, [&](int64_t lo, int64_t hi) {
    int32_t best[kBlock];
    w.walk(lo * per_unit, hi * per_unit, [&](int64_t i, const int64_t* rows) {
      for (int64_t j0 = 0; j0 < w.inner; j0 += kBlock) {
        const int64_t m = std::min(kBlock, w.inner - j0);
        select_taps<T, kMax>(x, w.inner, rows, w.taps, j0, m, best);
        const T* s = src + i * w.inner + j0;
        for (int64_t k = 0; k < w.taps; ++k) {
          if (rows[k] < 0) continue;
          T* row = out + rows[k] * w.inner + j0;
          if (tiles) move_step<2>(s, best, int32_t(k), m, row);
          else move_step<1>(s, best, int32_t(k), m, row);
        }
      }
    });
  }, double(w.outer) * double(w.inner * w.taps) >= double(kLongOpWork));
}

Array dense(const Array& x) {
  if (x.is_contiguous()) return x;
  Array d(x.shape(), x.dtype(), x.device(), Event::ready());
  copy(x, d);
  return d;
}

template <bool kScatter>
void select_window(ReduceOp op, const Array& values, const Array& operand,
                   const WindowGeometry& geometry, const Array& out) {
  const char* name = kScatter ? "select_and_scatter_add" : "select_and_gather_add";
  if (op != ReduceOp::max && op != ReduceOp::min)
    throw_error(ErrorKind::InvalidArgument, name,
                std::string("selects by max or min, not ") + op_name(op));
  if (out.size() == 0) return;
  const Array v = dense(values), x = dense(operand);
  const WindowWalk w(x.shape(), kScatter ? v.shape() : out.shape(), geometry);
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* vp = reinterpret_cast<const T*>(v.data());
    const T* xp = reinterpret_cast<const T*>(x.data());
    T* op_out = reinterpret_cast<T*>(out.mutable_data());
    if constexpr (kScatter) {
      if (op == ReduceOp::max) scatter_typed<T, true>(w, vp, xp, op_out);
      else scatter_typed<T, false>(w, vp, xp, op_out);
    } else {
      if (op == ReduceOp::max) gather_typed<T, true>(w, vp, xp, op_out);
      else gather_typed<T, false>(w, vp, xp, op_out);
    }
  });
}

}  // namespace

void select_and_gather_add(ReduceOp op, const Array& tangent, const Array& operand,
                           const WindowGeometry& geometry, const Array& out) {
  select_window<false>(op, tangent, operand, geometry, out);
}

void select_and_scatter_add(ReduceOp op, const Array& source, const Array& operand,
                            const WindowGeometry& geometry, const Array& out) {
  select_window<true>(op, source, operand, geometry, out);
}

}  // namespace tinyxla::cpu
