// lax.reduce_window_{sum,max,min} on the CPU. The trailing dimensions that the window
// leaves alone (window 1, stride 1, no padding or dilation: the channels of a pooling)
// form a contiguous row that each window tap combines at once, so the inner loop
// vectorises; the other dimensions are walked tap by tap, skipping taps on padding or
// dilation holes (they read as the identity).
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "kernels.h"
#include "tinyxla/error.h"
#include "windows.h"

namespace tinyxla::cpu {
namespace {

using semantics::AccOf;
using semantics::narrow;
using semantics::widen;

template <typename Op, typename T>
void reduce_window_typed(const Array& x, const WindowGeometry& g, const Array& out) {
  using Acc = AccOf<Op, T>;
  constexpr bool kNoNanForm =
      (std::is_same_v<Op, semantics::MaxOp> || std::is_same_v<Op, semantics::MinOp>) &&
      (std::is_same_v<Acc, float> || std::is_same_v<Acc, double>);
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
  const T* src = reinterpret_cast<const T*>(x.data());
  T* dst = reinterpret_cast<T*>(out.mutable_data());
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner * taps));
  parallel_for(outer, grain, [&](int64_t lo, int64_t hi) {
    auto acc = std::make_unique<Acc[]>(static_cast<size_t>(inner));
    std::vector<int64_t> o(static_cast<size_t>(nd)), k(static_cast<size_t>(nd));
    int64_t rem = lo;
    for (int d = nd - 1; d >= 0; --d) {
      o[size_t(d)] = rem % os[size_t(d)];
      rem /= os[size_t(d)];
    }
    // One output position's taps into acc; with `exact` false, max and min of floats use the
    // compare-and-select form that vectorises and report whether a NaN was read (the
    // position is then redone exactly).
    auto reduce_taps = [&](bool exact) {
      std::fill(acc.get(), acc.get() + inner, Op::template identity<Acc>());
      std::fill(k.begin(), k.end(), 0);
      bool nan = false;
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
          const T* row = src + off * inner;
          Acc* a = acc.get();
          bool fast = false;
          if constexpr (kNoNanForm) fast = !exact;
          if (fast) {
            if constexpr (kNoNanForm) {
              int seen = 0;
              for (int64_t j = 0; j < inner; ++j) {
                const Acc v = Acc(widen(row[j]));
                seen |= v != v;
                a[j] = Op::no_nan(a[j], v);
              }
              nan = nan || seen;
            }
          } else {
            for (int64_t j = 0; j < inner; ++j)
              a[j] = Op::template apply<Acc>(a[j], Acc(widen(row[j])));
          }
        }
        for (int d = nd - 1; d >= 0; --d) {
          if (++k[size_t(d)] < g.window[size_t(d)]) break;
          k[size_t(d)] = 0;
        }
      }
      return nan;
    };
    for (int64_t i = lo; i < hi; ++i) {
      if (reduce_taps(false)) reduce_taps(true);
      T* orow = dst + i * inner;
      for (int64_t j = 0; j < inner; ++j) orow[j] = narrow<T>(acc[j]);
      for (int d = nd - 1; d >= 0; --d) {
        if (++o[size_t(d)] < os[size_t(d)]) break;
        o[size_t(d)] = 0;
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
