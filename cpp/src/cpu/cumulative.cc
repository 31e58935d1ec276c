// lax.cumsum / cumprod / cummax / cummin / cumlogsumexp: a running combination along one
// axis, forward or reversed. Each step rounds to the element type (half and bfloat16
// combine in float32); cummax/cummin fold with lax.max/min's semantics::max_of/min_of.
#include <algorithm>
#include <cmath>
#include <complex>
#include <type_traits>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "kernels.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

using semantics::narrow;
using semantics::widen;

template <typename W>
W combine(CumulativeOp op, W acc, W x) {
  if constexpr (std::is_same_v<W, complex64> || std::is_same_v<W, complex128>) {
    if (op == CumulativeOp::logsumexp) {
      // log(exp(acc) + exp(x)) around the operand of larger real part, as JAX's logaddexp.
      const W& hi = acc.real() >= x.real() ? acc : x;
      const W& lo = acc.real() >= x.real() ? x : acc;
      if (std::isinf(hi.real()) && hi.real() < 0) return hi;
      return hi + std::log(W(1) + std::exp(lo - hi));
    }
    return op == CumulativeOp::prod ? acc * x : acc + x;
  } else if constexpr (std::is_same_v<W, bool>) {
    switch (op) {
      case CumulativeOp::sum: case CumulativeOp::max: return acc || x;
      default: return acc && x;
    }
  } else {
    switch (op) {
      case CumulativeOp::sum: return W(acc + x);
      case CumulativeOp::prod: return W(acc * x);
      case CumulativeOp::max: return semantics::max_of(acc, x);
      case CumulativeOp::min: return semantics::min_of(acc, x);
      case CumulativeOp::logsumexp:
        if constexpr (std::is_floating_point_v<W>) {
          // log(exp(acc) + exp(x)) without overflow; -inf + -inf stays -inf.
          const W m = std::max(acc, x);
          if (std::isnan(acc) || std::isnan(x)) return acc + x;
          if (std::isinf(m)) return m;
          return m + std::log1p(std::exp(-std::abs(acc - x)));
        } else {
          return acc;
        }
    }
    return acc;
  }
}

template <typename T>
void cumulative_typed(CumulativeOp op, const T* x, T* out, int64_t outer, int64_t n,
                      int64_t inner, bool reverse) {
  // Rows of `inner` contiguous elements: each step combines a whole row with the previous.
  const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(n * inner, 1));
  parallel_for(outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* src = x + o * n * inner;
      T* dst = out + o * n * inner;
      for (int64_t s = 0; s < n; ++s) {
        const int64_t k = reverse ? n - 1 - s : s;
        const T* row = src + k * inner;
        T* orow = dst + k * inner;
        if (s == 0) {
          std::copy(row, row + inner, orow);
          continue;
        }
        const T* prev = dst + (reverse ? k + 1 : k - 1) * inner;
        for (int64_t i = 0; i < inner; ++i)
          orow[i] = narrow<T>(combine(op, widen(prev[i]), widen(row[i])));
      }
    }
  });
}

}  // namespace

void cumulative(CumulativeOp op, const Array& x, int64_t axis, bool reverse, const Array& out) {
  if (out.size() == 0) return;
  Array dense = x;
  if (!x.is_contiguous()) {
    dense = Array(x.shape(), x.dtype(), x.device(), Event::ready());
    copy(x, dense);
  }
  const Shape& shape = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    cumulative_typed(op, reinterpret_cast<const T*>(dense.data()),
                     reinterpret_cast<T*>(out.mutable_data()), outer, shape[size_t(axis)],
                     inner, reverse);
  });
}

}  // namespace tinyxla::cpu
