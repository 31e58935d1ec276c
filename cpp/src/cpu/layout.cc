// Data-movement kernels: dense copy of a strided view, copy into a view, pad, concatenate.
#include <algorithm>
#include <cstdlib>

#include "../core/thread_pool.h"
#include "kernels.h"
#include "strided.h"

namespace tinyxla::cpu {
namespace {

// Work chunks of about this many bytes amortise a parallel_for hand-out.
constexpr int64_t kGrainBytes = 1 << 18;

// Drops size-1 dims and merges neighbours that walk memory as one dim, for every stride
// set at once, so inner runs get as long as the layouts allow. Row-major order is kept.
template <size_t N>
void coalesce(Shape& shape, Strides* (&strides)[N]) {
  Shape s;
  Strides t[N];
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !s.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = t[k].back() == (*strides[k])[d] * shape[d];
    if (merge) {
      s.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) t[k].back() = (*strides[k])[d];
    } else {
      s.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) t[k].push_back((*strides[k])[d]);
    }
  }
  shape = s;
  for (size_t k = 0; k < N; ++k) *strides[k] = t[k];
}


template <size_t kSize>
void copy_rows(const char* src, char* dst, const Shape& shape, const Strides& ss,
               const Strides& ds) {
  using E = semantics::ElementBits<kSize>;
  const int nd = int(shape.size());
  const int64_t inner = shape[size_t(nd - 1)], is = ss[size_t(nd - 1)], os = ds[size_t(nd - 1)];
  const int64_t rows = num_elements(shape) / inner;
  parallel_for(rows, std::max<int64_t>(1, kGrainBytes / int64_t(kSize) / inner),
               [&](int64_t b, int64_t e) {
                 int64_t idx[64] = {0};
                 int64_t rem = b, so = 0, doff = 0;
                 for (int d = nd - 2; d >= 0; --d) {
                   idx[d] = rem % shape[size_t(d)];
                   rem /= shape[size_t(d)];
                   so += idx[d] * ss[size_t(d)];
                   doff += idx[d] * ds[size_t(d)];
                 }
                 for (int64_t r = b; r < e; ++r) {
                   const E* in = reinterpret_cast<const E*>(src) + so;
                   E* out = reinterpret_cast<E*>(dst) + doff;
                   if (is == 1 && os == 1) {
                     std::memcpy(out, in, size_t(inner) * kSize);
                   } else {
                     for (int64_t j = 0; j < inner; ++j) out[j * os] = in[j * is];
                   }
                   for (int d = nd - 2; d >= 0; --d) {
                     so += ss[size_t(d)];
                     doff += ds[size_t(d)];
                     if (++idx[d] < shape[size_t(d)]) break;
                     so -= idx[d] * ss[size_t(d)];
                     doff -= idx[d] * ds[size_t(d)];
                     idx[d] = 0;
                   }
                 }
               });
}

// Copies the view (src, shape, src strides) onto the view (dst, shape, dst strides).
void strided_copy(const char* src, Strides ss, char* dst, Strides ds, Shape shape,
                  size_t elem) {
  if (num_elements(shape) == 0) return;
  Strides* all[2] = {&ss, &ds};
  coalesce(shape, all);
  if (shape.empty()) {
    std::memcpy(dst, src, elem);
    return;
  }
  switch (elem) {
    case 1: return copy_rows<1>(src, dst, shape, ss, ds);
    case 2: return copy_rows<2>(src, dst, shape, ss, ds);
    case 4: return copy_rows<4>(src, dst, shape, ss, ds);
    case 8: return copy_rows<8>(src, dst, shape, ss, ds);
    default: return copy_rows<16>(src, dst, shape, ss, ds);
  }
}

template <size_t kSize>
void fill_typed(const char* value, char* dst, int64_t n) {
  semantics::ElementBits<kSize> v;
  std::memcpy(&v, value, kSize);
  parallel_for(n, kGrainBytes / int64_t(kSize), [&](int64_t b, int64_t e) {
    std::fill(reinterpret_cast<decltype(v)*>(dst) + b, reinterpret_cast<decltype(v)*>(dst) + e, v);
  });
}

void fill_value(const char* value, size_t elem, char* dst, int64_t n) {
  switch (elem) {
    case 1: return fill_typed<1>(value, dst, n);
    case 2: return fill_typed<2>(value, dst, n);
    case 4: return fill_typed<4>(value, dst, n);
    case 8: return fill_typed<8>(value, dst, n);
    default: return fill_typed<16>(value, dst, n);
  }
}

// Dense copy of a view whose memory-tightest dim p is not its last dim q (a transpose).
// Small tiles of about one cache line a side go through an L1 buffer, so each source and
// destination line is touched once even when power-of-two strides map them to one set.
template <size_t kSize>
void tiled_copy(const char* src, const Shape& shape, const Strides& ss, int p, char* dst) {
  using E = semantics::ElementBits<kSize>;
  constexpr int64_t kT = std::max<int64_t>(8, 64 / int64_t(kSize)), kBig = 8 * kT;
  const int q = int(shape.size()) - 1;
  const Strides ds = row_major_strides(shape);
  Shape oshape;
  Strides osrc, odst;
  for (int d = 0; d < q; ++d) {
    if (d == p) continue;
    oshape.push_back(shape[size_t(d)]);
    osrc.push_back(ss[size_t(d)]);
    odst.push_back(ds[size_t(d)]);
  }
  const int64_t np = shape[size_t(p)], nq = shape[size_t(q)];
  const int64_t tp = (np + kBig - 1) / kBig, tq = (nq + kBig - 1) / kBig;
  const int64_t sp = ss[size_t(p)], sq = ss[size_t(q)], dp = ds[size_t(p)];
  parallel_for(num_elements(oshape) * tp * tq,
               std::max<int64_t>(1, kGrainBytes / int64_t(kSize) / (kBig * kBig)),
               [&](int64_t b, int64_t e) {
                 E tmp[kT][kT];
                 for (int64_t it = b; it < e; ++it) {
                   int64_t rem = it / (tp * tq), so = 0, doff = 0;
                   for (int d = int(oshape.size()) - 1; d >= 0; --d) {
                     so += rem % oshape[size_t(d)] * osrc[size_t(d)];
                     doff += rem % oshape[size_t(d)] * odst[size_t(d)];
                     rem /= oshape[size_t(d)];
                   }
                   const int64_t i0 = it % (tp * tq) / tq * kBig, j0 = it % tq * kBig;
                   const int64_t i1 = std::min(np, i0 + kBig), j1 = std::min(nq, j0 + kBig);
                   for (int64_t ti = i0; ti < i1; ti += kT) {
                     const int64_t ni = std::min(kT, i1 - ti);
                     for (int64_t tj = j0; tj < j1; tj += kT) {
                       const int64_t nj = std::min(kT, j1 - tj);
                       const E* in = reinterpret_cast<const E*>(src) + so + ti * sp + tj * sq;
                       E* out = reinterpret_cast<E*>(dst) + doff + ti * dp + tj;
                       for (int64_t j = 0; j < nj; ++j)
                         for (int64_t i = 0; i < ni; ++i) tmp[j][i] = in[i * sp + j * sq];
                       for (int64_t i = 0; i < ni; ++i)
                         for (int64_t j = 0; j < nj; ++j) out[i * dp + j] = tmp[j][i];
                     }
                   }
                 }
               });
}

}  // namespace

void copy(const Array& x, const Array& out) {
  if (out.size() == 0) return;
  const size_t elem = itemsize(x.dtype());
  Shape shape = x.shape();
  Strides strides = x.strides();
  Strides* all[1] = {&strides};
  coalesce(shape, all);
  char* dst = out.mutable_data();
  // Tile when some other dim is tighter in memory than the last one.
  const int q = int(shape.size()) - 1;
  int p = -1;
  auto tight = [&](int d) { return std::abs(strides[size_t(d)]); };
  for (int d = 0; d < q; ++d)
    if (tight(d) != 0 && (p < 0 || tight(d) < tight(p))) p = d;
  if (p >= 0 && tight(q) != 0 && tight(p) < tight(q) && shape[size_t(p)] >= 8 &&
      shape[size_t(q)] >= 8) {
    switch (elem) {
      case 1: return tiled_copy<1>(x.data(), shape, strides, p, dst);
      case 2: return tiled_copy<2>(x.data(), shape, strides, p, dst);
      case 4: return tiled_copy<4>(x.data(), shape, strides, p, dst);
      case 8: return tiled_copy<8>(x.data(), shape, strides, p, dst);
      default: return tiled_copy<16>(x.data(), shape, strides, p, dst);
    }
  }
  parallel_for(out.size(), kGrainBytes / int64_t(elem), [&](int64_t b, int64_t e) {
    gather(x.data(), elem, shape, strides, b, e, dst + b * int64_t(elem));
  });
}

void pad(const Array& x, const Array& padding_value, const std::vector<int64_t>& lo,
         const std::vector<int64_t>& hi, const std::vector<int64_t>& interior, const Array& out) {
  if (out.size() == 0) return;
  const size_t elem = itemsize(x.dtype()), nd = size_t(x.ndim());
  // The part of x that lands inside out, and where: element i of dim d goes to
  // lo + i * (interior + 1), kept when that is within [0, out dim).
  Shape count(nd);
  Strides src_strides = x.strides(), dst_strides(nd);
  const Strides out_strides = row_major_strides(out.shape());
  int64_t src_off = 0, dst_off = 0;
  bool covers = true;  // x fills out entirely: no padding value shows
  for (size_t d = 0; d < nd; ++d) {
    const int64_t step = interior[d] + 1, n = x.shape()[d], m = out.shape()[d];
    const int64_t first = lo[d] >= 0 ? 0 : (-lo[d] + step - 1) / step;
    const int64_t end = m - lo[d] <= 0 ? 0 : std::min(n, (m - lo[d] + step - 1) / step);
    count[d] = std::max<int64_t>(0, end - first);
    src_off += first * x.strides()[d];
    dst_off += (lo[d] + first * step) * out_strides[d];
    dst_strides[d] = out_strides[d] * step;
    covers = covers && lo[d] <= 0 && hi[d] <= 0 && (interior[d] == 0 || n <= 1);
  }
  char* dst = out.mutable_data();
  if (!covers) fill_value(padding_value.data(), elem, dst, out.size());
  if (num_elements(count) == 0) return;
  strided_copy(x.data() + src_off * int64_t(elem), src_strides, dst + dst_off * int64_t(elem),
               dst_strides, count, elem);
}

void concatenate(const std::vector<Array>& xs, int64_t dimension, const Array& out) {
  if (out.size() == 0) return;
  const size_t elem = itemsize(out.dtype());
  const Strides out_strides = row_major_strides(out.shape());
  char* dst = out.mutable_data();
  int64_t pos = 0;
  for (const Array& x : xs) {
    strided_copy(x.data(), x.strides(), dst + pos * out_strides[size_t(dimension)] * int64_t(elem),
                 out_strides, x.shape(), elem);
    pos += x.shape()[size_t(dimension)];
  }
}

void copy_into(const Array& x, const Array& dst) {
  strided_copy(x.data(), x.strides(), dst.mutable_data(), dst.strides(), x.shape(),
               itemsize(x.dtype()));
}

}  // namespace tinyxla::cpu
