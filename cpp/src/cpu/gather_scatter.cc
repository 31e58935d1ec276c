// gather and scatter with XLA's semantics. Each index vector (a row of the indices' last
// dimension) gives the start of one window of the operand; operand batching dims take
// their start from the row's own position. A window that does not fit is clamped (clip),
// or filled (gather) / skipped (scatter) as a whole (fill_or_drop). Gathers run rows in
// parallel; scatters apply rows in order, so duplicate indices accumulate
// deterministically (and for `set` the last row wins): x.at[idx] with one index on one
// thread, other large ones in parallel over parts of the output that each apply the rows in
// that order.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "gather_avx512.h"
#include "kernels.h"
#include "vmath.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

// Elements per parallel chunk of gather rows.
constexpr int64_t kGrainElements = 1 << 14;

// Where each operand dim's window starts and how far it spans.
struct WindowPlan {
  std::vector<int> component;   // per operand dim: the index component giving its start, or -1
  std::vector<int> batch_from;  // per operand dim: the indices batch dim giving its start, or -1
  Shape extent;                 // per operand dim: the window's extent
  std::vector<int64_t> window_dims;  // operand dims with a window axis in the result/updates
  Shape batch_shape;            // the indices' shape without the index vector dim
  int64_t rows = 0, k = 0;
};

WindowPlan plan_windows(const Array& x, const Array& indices, const GatherDims& d) {
  WindowPlan p;
  const size_t rank = size_t(x.ndim());
  p.component.assign(rank, -1);
  p.batch_from.assign(rank, -1);
  p.extent.assign(rank, 1);
  for (size_t c = 0; c < d.start_index_map.size(); ++c) p.component[size_t(d.start_index_map[c])] = int(c);
  std::vector<bool> special(rank, false);
  for (int64_t c : d.collapsed_slice_dims) special[size_t(c)] = true;
  for (size_t b = 0; b < d.operand_batching_dims.size(); ++b) {
    special[size_t(d.operand_batching_dims[b])] = true;
    p.batch_from[size_t(d.operand_batching_dims[b])] = int(d.start_indices_batching_dims[b]);
  }
  for (size_t i = 0; i < rank; ++i)
    if (!special[i]) p.window_dims.push_back(int64_t(i));
  p.batch_shape.assign(indices.shape().begin(), indices.shape().end() - 1);
  p.rows = num_elements(p.batch_shape);
  p.k = indices.shape().back();
  return p;
}

// The indices as dense int32 or int64, read in place when they already are (other
// integer types widen to int64 exactly).
Array dense_indices(const Array& indices) {
  if ((indices.dtype() == DType::I32 || indices.dtype() == DType::I64) && indices.is_contiguous())
    return indices;
  const DType t = indices.dtype() == DType::I32 ? DType::I32 : DType::I64;
  Array out(indices.shape(), t, indices.device(), Event::ready());
  if (indices.size()) convert(indices, out);
  return out;
}

// Calls f(rows) with the index rows as a typed pointer.
template <typename F>
void with_rows(const Array& dense, F&& f) {
  if (dense.dtype() == DType::I32) f(reinterpret_cast<const int32_t*>(dense.data()));
  else f(reinterpret_cast<const int64_t*>(dense.data()));
}

// Index component `v` as the start it gives: `wrap_size` is its operand dim's size when
// the op wraps negative indices (GatherAttrs / ScatterAttrs::wrap_negative), else 0. Every
// scalar gather and scatter path that wraps reads its indices through this (the x[i] and
// x.at[i] vector loops only when they wrap, being bound by their operations per element).
// A mask, not a branch: signs may be mixed, where a branch ran 4.8x the plain gather loop's
// time (a select 1.4x).
inline int64_t wrapped(int64_t v, int64_t wrap_size) { return v + ((v >> 63) & wrap_size); }

// The operand start of row `r` (batch position `pos`) into `start`; false when the
// window does not fit and mode is fill_or_drop. With `wrap`, a negative index component
// first gets its dim's size added.
template <typename I>
bool window_start(const WindowPlan& p, const Shape& x_shape, const I* row,
                  const std::vector<int64_t>& pos, IndexMode mode, bool wrap,
                  std::vector<int64_t>& start) {
  for (size_t d = 0; d < x_shape.size(); ++d) {
    int64_t s = 0;
    if (p.component[d] >= 0) {
      s = wrapped(int64_t(row[p.component[d]]), wrap ? x_shape[d] : 0);
    } else if (p.batch_from[d] >= 0) {
      s = pos[size_t(p.batch_from[d])];
    }
    const int64_t room = x_shape[d] - p.extent[d];
    if (s < 0 || s > room) {
      if (mode == IndexMode::fill_or_drop) return false;
      s = std::clamp<int64_t>(s, 0, room);
    }
    start[d] = s;
  }
  return true;
}

// The dims of a gather's result or a scatter's updates (rank `ndim`) that are not in the
// sorted offset_dims: the ones that run over the index rows, in order.
std::vector<int64_t> non_offset_dims(int64_t ndim, const GatherDims& d) {
  std::vector<int64_t> pos;
  for (int64_t i = 0, w = 0; i < ndim; ++i) {
    if (w < int64_t(d.offset_dims.size()) && d.offset_dims[size_t(w)] == i) ++w;
    else pos.push_back(i);
  }
  return pos;
}

// Batch position of row `r` (row-major over the indices' batch shape).
void unravel(int64_t r, const Shape& shape, std::vector<int64_t>& pos) {
  for (size_t i = shape.size(); i-- > 0;) {
    pos[i] = r % shape[i];
    r /= shape[i];
  }
}

// Walks a window (extents `shape`), calling f(src offset, dst offset) in elements; the
// innermost dim is a plain loop and the scratch index lives as long as the walker, so a
// walk allocates nothing.
class WindowWalker {
 public:
  WindowWalker(Shape shape, Strides src, Strides dst)
      : shape_(std::move(shape)), src_(std::move(src)), dst_(std::move(dst)),
        idx_(shape_.size(), 0) {
    for (int64_t e : shape_) empty_ = empty_ || e == 0;
  }

  // The window's elements, when it is one run at unit stride on both sides (else 0).
  int64_t run() const {
    return shape_.size() == 1 && src_[0] == 1 && dst_[0] == 1 ? shape_[0] : 0;
  }

  template <typename F>
  void walk(F&& f) {
    const size_t n = shape_.size();
    if (empty_) return;
    if (n == 0) return f(int64_t(0), int64_t(0));
    const int64_t inner = shape_[n - 1], is = src_[n - 1], id = dst_[n - 1];
    std::fill(idx_.begin(), idx_.end(), 0);
    int64_t so = 0, d_off = 0;
    while (true) {
      for (int64_t j = 0; j < inner; ++j) f(so + j * is, d_off + j * id);
      size_t i = n - 1;
      while (i-- > 0) {
        so += src_[i];
        d_off += dst_[i];
        if (++idx_[i] < shape_[i]) break;
        so -= idx_[i] * src_[i];
        d_off -= idx_[i] * dst_[i];
        idx_[i] = 0;
      }
      if (i == size_t(-1)) return;
    }
  }

 private:
  Shape shape_;
  Strides src_, dst_;
  std::vector<int64_t> idx_;
  bool empty_ = false;
};

// Window starts from the index components alone (no batching dims): per component, its
// operand dim's stride, room and wrap size (see wrapped). start() gives the element offset
// of a row's window.
struct FastRows {
  int64_t base = 0;
  std::vector<int64_t> stride, room, wrap_size;

  template <typename I>
  bool start(const I* row, IndexMode mode, int64_t* offset) const {
    int64_t s = base;
    for (size_t c = 0; c < stride.size(); ++c) {
      int64_t v = wrapped(int64_t(row[c]), wrap_size[c]);
      if (v < 0 || v > room[c]) {
        if (mode == IndexMode::fill_or_drop) return false;
        v = v < 0 ? 0 : room[c];
      }
      s += v * stride[c];
    }
    *offset = s;
    return true;
  }
};

FastRows fast_rows(const WindowPlan& p, const Array& x, const GatherDims& d, bool wrap) {
  FastRows f;
  f.base = x.offset();
  for (int64_t dim : d.start_index_map) {
    f.stride.push_back(x.strides()[size_t(dim)]);
    f.room.push_back(x.shape()[size_t(dim)] - p.extent[size_t(dim)]);
    f.wrap_size.push_back(wrap ? x.shape()[size_t(dim)] : 0);
  }
  return f;
}

template <size_t kSize, typename I>
void gather_rows(const Array& x, const I* idx, const WindowPlan& p, const GatherDims& d,
                 IndexMode mode, bool wrap, const char* fill, const Array& out) {
  const Strides out_strides = row_major_strides(out.shape());
  const std::vector<int64_t> batch_pos = non_offset_dims(out.ndim(), d);
  Shape wshape;
  Strides src, dst;
  for (size_t j = 0; j < p.window_dims.size(); ++j) {
    wshape.push_back(p.extent[size_t(p.window_dims[j])]);
    src.push_back(x.strides()[size_t(p.window_dims[j])]);
    dst.push_back(out_strides[size_t(d.offset_dims[j])]);
  }
  const int64_t window = std::max<int64_t>(1, num_elements(wshape));
  const char* base = static_cast<const char*>(x.buffer()->data());
  char* dst_data = out.mutable_data();
  bool leading = d.operand_batching_dims.empty();
  for (size_t i = 0; i < batch_pos.size(); ++i) leading = leading && batch_pos[i] == int64_t(i);
  if (leading) {
    // The common case (x[idx], take): row r's window is out[r * window ...], and only the
    // index components move the start.
    const FastRows f = fast_rows(p, x, d, wrap);
    if (window == 1 && p.k == 1) {  // x[idx] of a vector: one tight loop
      using Elem = semantics::ElementBits<kSize>;
      Elem fill_bits;
      std::memcpy(&fill_bits, fill, kSize);
      // The wrap is a template argument, so a plain gather's loop stays as it was.
      auto rows = [&](auto wrapping) {
        parallel_for(p.rows, kGrainElements, [&](int64_t b, int64_t e) {
          // Locals, not the closure's references: the loop's stores would make the compiler
          // reload those at every element.
          const Elem* const from = reinterpret_cast<const Elem*>(base) + f.base;
          Elem* const to = reinterpret_cast<Elem*>(dst_data);
          const I* const at = idx;
          const Elem filler = fill_bits;
          const int64_t stride = f.stride[0], room = f.room[0], wrap_size = f.wrap_size[0];
          const bool clip = mode == IndexMode::clip;
          if constexpr (decltype(wrapping)::value) {
            // The loop's speed is the number of reads in flight, which its length per
            // element bounds: the wrap is a mask, the range one unsigned test, and
            // unrolling takes the loop's own count off. That matched the plain loop on one
            // thread (1e6 of 1e6 float32: 0.89 ms against 0.87).
#pragma GCC unroll 4
            for (int64_t r = b; r < e; ++r) {
              const int64_t v = wrapped(int64_t(at[r]), wrap_size);
              if (uint64_t(v) <= uint64_t(room)) to[r] = from[v * stride];
              else to[r] = clip ? from[(v < 0 ? 0 : room) * stride] : filler;
            }
          } else {
            for (int64_t r = b; r < e; ++r) {
              const int64_t v = int64_t(at[r]);
              if (v >= 0 && v <= room) to[r] = from[v * stride];
              else to[r] = clip ? from[(v < 0 ? 0 : room) * stride] : filler;
            }
          }
        });
      };
      if constexpr ((kSize == 4 || kSize == 8) && std::is_same_v<I, int32_t>) {
        const int64_t n = x.shape()[size_t(d.start_index_map[0])];
        if (f.stride[0] == 1 && n < (int64_t(1) << 31) &&
            vmath::isa_supported(vmath::Isa::Avx512)) {
          using Bits = std::conditional_t<kSize == 4, uint32_t, uint64_t>;
          const gather_avx512::VectorRead how{n, wrap, mode == IndexMode::clip};
          const Bits* from = reinterpret_cast<const Bits*>(base) + f.base;
          Bits* to = reinterpret_cast<Bits*>(dst_data);
          Bits filler;
          std::memcpy(&filler, fill, kSize);
          parallel_for(p.rows, kGrainElements, [&](int64_t b, int64_t e) {
            gather_avx512::rows<Bits>(from, idx, to, b, e, how, filler);
          });
          return;
        }
      }
      if (wrap) rows(std::true_type{});
      else rows(std::false_type{});
      return;
    }
    parallel_for(p.rows, std::max<int64_t>(1, kGrainElements / window), [&](int64_t b, int64_t e) {
      WindowWalker walker(wshape, src, dst);
      for (int64_t r = b; r < e; ++r) {
        char* to = dst_data + r * window * int64_t(kSize);
        int64_t s = 0;
        if (!f.start(idx + r * p.k, mode, &s)) {
          walker.walk([&](int64_t, int64_t dd) { std::memcpy(to + dd * int64_t(kSize), fill, kSize); });
        } else if (window == 1) {
          std::memcpy(to, base + s * int64_t(kSize), kSize);
        } else {
          const char* from = base + s * int64_t(kSize);
          walker.walk([&](int64_t so, int64_t dd) {
            std::memcpy(to + dd * int64_t(kSize), from + so * int64_t(kSize), kSize);
          });
        }
      }
    });
    return;
  }
  parallel_for(p.rows, std::max<int64_t>(1, kGrainElements / window), [&](int64_t b, int64_t e) {
    std::vector<int64_t> pos(p.batch_shape.size()), start(size_t(x.ndim()));
    WindowWalker walker(wshape, src, dst);
    for (int64_t r = b; r < e; ++r) {
      unravel(r, p.batch_shape, pos);
      int64_t o = 0;
      for (size_t i = 0; i < pos.size(); ++i) o += pos[i] * out_strides[size_t(batch_pos[i])];
      char* to = dst_data + o * int64_t(kSize);
      if (!window_start(p, x.shape(), idx + r * p.k, pos, mode, wrap, start)) {
        walker.walk([&](int64_t, int64_t dd) { std::memcpy(to + dd * int64_t(kSize), fill, kSize); });
        continue;
      }
      int64_t s = x.offset();
      for (size_t dim = 0; dim < start.size(); ++dim) s += start[dim] * x.strides()[dim];
      const char* from = base + s * int64_t(kSize);
      walker.walk([&](int64_t so, int64_t dd) {
        std::memcpy(to + dd * int64_t(kSize), from + so * int64_t(kSize), kSize);
      });
    }
  });
}

// Combines an update into an element.
template <typename T, ScatterOp op>
T combine(T a, T b) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    const float r = combine<float, op>(to_float(a), to_float(b));
    if constexpr (std::is_same_v<T, half>) return to_half(r);
    else return to_bfloat16(r);
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScatterOp::set: return b;
      case ScatterOp::add: case ScatterOp::max: return a || b;
      default: return a && b;
    }
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // wraps like XLA, without signed overflow
    switch (op) {
      case ScatterOp::set: return b;
      case ScatterOp::add: return T(U(U(a) + U(b)));
      case ScatterOp::mul: return T(U(U(a) * U(b)));
      case ScatterOp::min: return std::min(a, b);
      case ScatterOp::max: return std::max(a, b);
    }
    return b;
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case ScatterOp::set: return b;
      case ScatterOp::add: return a + b;
      case ScatterOp::mul: return a * b;
      case ScatterOp::min: return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b);
      case ScatterOp::max: return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
    }
    return b;
  } else {  // complex: max and min order lexicographically, as lax.max does
    switch (op) {
      case ScatterOp::set: return b;
      case ScatterOp::add: return a + b;
      case ScatterOp::mul: return a * b;
      case ScatterOp::min: return semantics::min_of(a, b);
      case ScatterOp::max: return semantics::max_of(a, b);
    }
    return b;
  }
}

// The elements [lo, hi) of the output one part of a scatter owns.
struct Owned {
  int64_t lo, hi;
  bool has(int64_t t) const { return t >= lo && t < hi; }
};

// Combines a window of updates (`walker` over offsets so/dd) into `to` = o + t, keeping
// only the elements in `own`; `span` is the window's last offset from its first.
template <typename T, ScatterOp op>
inline __attribute__((always_inline)) void combine_window(T* o, int64_t t, int64_t span, const T* from, WindowWalker& walker,
                    const Owned& own) {
  if (t + span < own.lo || t >= own.hi) return;
  T* to = o + t;
  if (t >= own.lo && t + span < own.hi) {
    if (const int64_t run = walker.run()) {  // a row of x.at[i]: a plain loop that vectorises
      for (int64_t j = 0; j < run; ++j) to[j] = combine<T, op>(to[j], from[j]);
      return;
    }
    walker.walk([&](int64_t so, int64_t dd) { to[dd] = combine<T, op>(to[dd], from[so]); });
    return;
  }
  walker.walk([&](int64_t so, int64_t dd) {
    if (own.has(t + dd)) to[dd] = combine<T, op>(to[dd], from[so]);
  });
}

// How a scatter's windows sit in its updates and in its dense, row-major output.
struct ScatterLayout {
  Strides out_strides;
  std::vector<int64_t> scatter_pos;  // the updates' dims that run over the index rows
  Shape wshape;
  Strides src, dst;
  int64_t span = 0;    // out strides are row-major, so a window's offsets lie in [0, span]
  int64_t window = 1;  // elements per window
  // Row r's updates start at r * row_stride: the rows are the updates' leading dims and
  // the updates are dense, or one scatter dim of any stride (a broadcast value has stride
  // 0). -1 otherwise.
  int64_t row_stride = -1;
};

ScatterLayout scatter_layout(const Array& updates, const WindowPlan& p, const GatherDims& d,
                             const Array& out) {
  ScatterLayout l;
  l.out_strides = row_major_strides(out.shape());
  l.scatter_pos = non_offset_dims(updates.ndim(), d);
  for (size_t j = 0; j < p.window_dims.size(); ++j) {
    l.wshape.push_back(p.extent[size_t(p.window_dims[j])]);
    l.src.push_back(updates.strides()[size_t(d.offset_dims[j])]);
    l.dst.push_back(l.out_strides[size_t(p.window_dims[j])]);
    l.span += std::max<int64_t>(0, l.wshape.back() - 1) * l.dst.back();
  }
  l.window = std::max<int64_t>(1, num_elements(l.wshape));
  bool leading = d.operand_batching_dims.empty();
  for (size_t i = 0; i < l.scatter_pos.size(); ++i)
    leading = leading && l.scatter_pos[i] == int64_t(i);
  if (leading && updates.is_contiguous()) l.row_stride = l.window;
  else if (leading && updates.ndim() == 1 && l.wshape.empty()) l.row_stride = updates.strides()[0];
  return l;
}

// Applies every row in order, each update only where it lands in `own`.
template <typename T, ScatterOp op, typename I>
void scatter_rows_owned(const Array& updates, const I* idx, const WindowPlan& p,
                        const GatherDims& d, IndexMode mode, bool wrap, const Array& out,
                        const ScatterLayout& l, const Owned& own) {
  const T* upd = reinterpret_cast<const T*>(updates.data());
  T* o = reinterpret_cast<T*>(out.mutable_data());
  WindowWalker walker(l.wshape, l.src, l.dst);
  if (l.row_stride >= 0) {
    FastRows f = fast_rows(p, out, d, wrap);
    f.base = 0;  // `o` already points at out's first element
    for (int64_t r = 0; r < p.rows; ++r) {
      int64_t t = 0;
      if (!f.start(idx + r * p.k, mode, &t)) continue;
      const T* from = upd + r * l.row_stride;
      if (l.window == 1) {
        if (own.has(t)) o[t] = combine<T, op>(o[t], from[0]);
      } else {
        combine_window<T, op>(o, t, l.span, from, walker, own);
      }
    }
    return;
  }
  std::vector<int64_t> pos(p.batch_shape.size()), start(size_t(out.ndim()));
  for (int64_t r = 0; r < p.rows; ++r) {
    unravel(r, p.batch_shape, pos);
    if (!window_start(p, out.shape(), idx + r * p.k, pos, mode, wrap, start)) continue;
    int64_t u = 0, t = 0;
    for (size_t i = 0; i < pos.size(); ++i) u += pos[i] * updates.strides()[size_t(l.scatter_pos[i])];
    for (size_t dim = 0; dim < start.size(); ++dim) t += start[dim] * l.out_strides[dim];
    combine_window<T, op>(o, t, l.span, upd + u, walker, own);
  }
}

// x.at[idx] with one index component: row r's updates (from r * row_stride) land as one run
// of `run` elements (1 for a vector) from output element idx[r] * stride. The wrap is a
// template argument (kWrap: wrap_size is not 0): its mask's three operations a row made the
// plain vector loop 14% slower (1e6 of 1e6 float32: 1.64 against 1.43 ms).
struct SingleIndexRows {
  int64_t stride = 0, room = 0, wrap_size = 0, run = 0, row_stride = 0;
  bool clip = false;

  template <bool kWrap, typename I>
  bool start(const I* idx, int64_t r, int64_t* t) const {
    int64_t v = int64_t(idx[r]);
    if constexpr (kWrap) v = wrapped(v, wrap_size);
    if (v < 0 || v > room) {
      if (!clip) return false;
      v = v < 0 ? 0 : room;
    }
    *t = v * stride;
    return true;
  }
};

// The scatter as SingleIndexRows when it is one (else run == 0).
SingleIndexRows single_index_rows(const ScatterLayout& l, const WindowPlan& p,
                                  const GatherDims& d, IndexMode mode, bool wrap,
                                  const Array& out) {
  SingleIndexRows s;
  if (l.row_stride < 0 || p.k != 1) return s;
  const int64_t run = l.wshape.empty() ? 1 : WindowWalker(l.wshape, l.src, l.dst).run();
  if (run == 0) return s;
  const FastRows f = fast_rows(p, out, d, wrap);
  s.stride = f.stride[0];
  s.room = f.room[0];
  s.wrap_size = f.wrap_size[0];
  s.run = run;
  s.row_stride = l.row_stride;
  s.clip = mode == IndexMode::clip;
  return s;
}

// Applies every row in order. One thread: split by destination, each part testing every
// row mispredicted half the tests and ran 2-3x slower than one thread; listing the rows by
// part first costs about what a vector's updates do, and rows of 16 floats (1e6 into 1e5
// rows) are bound by memory latency, the same on one thread and two.
// Integer scatter-add of many updates into a small vector (bincount): four partial sums
// taken in turn, added at the end. With one, an update often waits on the store of an
// earlier one to the same element (2.6x slower in a C reproduction); integer sums wrap, so
// any order gives the same bits.
constexpr int64_t kPartialSums = 4;
constexpr int64_t kPartialSumsMinRows = int64_t(1) << 14;
constexpr int64_t kPartialSumsMaxElements = int64_t(1) << 14;

template <bool kWrap, typename T, typename I>
void add_in_partial_sums(const SingleIndexRows& s, const I* idx, const T* upd, T* o,
                         int64_t rows, int64_t size) {
  using U = std::make_unsigned_t<T>;
  std::vector<U> part(static_cast<size_t>(kPartialSums * size), U(0));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t t = 0;
    if (!s.start<kWrap>(idx, r, &t)) continue;
    U& slot = part[size_t((r % kPartialSums) * size + t)];
    slot = U(slot + U(upd[r * s.row_stride]));
  }
  for (int64_t t = 0; t < size; ++t) {
    U sum = U(o[t]);
    for (int64_t k = 0; k < kPartialSums; ++k) sum = U(sum + part[size_t(k * size + t)]);
    o[t] = T(sum);
  }
}

template <typename T, ScatterOp op, bool kWrap, typename I>
void apply_single_index_rows(const SingleIndexRows& s, const I* idx, const T* upd, T* o,
                             int64_t rows, int64_t size) {
  if constexpr (op == ScatterOp::add && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (s.run == 1 && rows >= kPartialSumsMinRows && size <= kPartialSumsMaxElements)
      return add_in_partial_sums<kWrap>(s, idx, upd, o, rows, size);
  }
  if (s.run == 1) {  // a vector: one tight loop
    if constexpr (kWrap) {
      // Locals, so that the stores do not make the compiler reload them, and unrolled: the
      // loop is bound by its operations per row, and the wrap's mask adds three.
      const int64_t n = s.wrap_size, room = s.room, stride = s.stride, step = s.row_stride;
      const bool clip = s.clip;
#pragma GCC unroll 4
      for (int64_t r = 0; r < rows; ++r) {
        int64_t v = wrapped(int64_t(idx[r]), n);
        if (uint64_t(v) > uint64_t(room)) {
          if (!clip) continue;
          v = v < 0 ? 0 : room;
        }
        o[v * stride] = combine<T, op>(o[v * stride], upd[r * step]);
      }
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      int64_t t = 0;
      if (!s.start<kWrap>(idx, r, &t)) continue;
      o[t] = combine<T, op>(o[t], upd[r * s.row_stride]);
    }
    return;
  }
  // Rows land at random: fetching a row some rows ahead overlaps the cache misses.
  constexpr int64_t kAhead = 16;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t t = 0, ahead = 0;
    if (r + kAhead < rows && s.start<kWrap>(idx, r + kAhead, &ahead)) __builtin_prefetch(o + ahead, 1);
    if (!s.start<kWrap>(idx, r, &t)) continue;
    T* to = o + t;
    const T* from = upd + r * s.row_stride;
    for (int64_t j = 0; j < s.run; ++j) to[j] = combine<T, op>(to[j], from[j]);
  }
}

// Other scatters large enough to split: the output splits into contiguous parts, one per
// pool thread, and every part applies, in row order, the updates that land in it. Every
// element so sees its updates in the serial order: results are bit-identical to one
// thread's, duplicate indices (add, set's last-row-wins) included.
constexpr int64_t kParallelUpdates = 1 << 15;
constexpr int64_t kMinPartElements = 1 << 12;

template <typename T, ScatterOp op, typename I>
void scatter_rows(const Array& updates, const I* idx, const WindowPlan& p, const GatherDims& d,
                  IndexMode mode, bool wrap, const Array& out) {
  const ScatterLayout l = scatter_layout(updates, p, d, out);
  const int64_t size = out.size();
  const int64_t parts = std::min<int64_t>(pool_size(), size / kMinPartElements);
  const bool split = parts >= 2 && updates.size() >= kParallelUpdates;
  const SingleIndexRows s = single_index_rows(l, p, d, mode, wrap, out);
  if (s.run > 0) {
    auto apply = [&](auto wrapping) {
      apply_single_index_rows<T, op, decltype(wrapping)::value>(
          s, idx, reinterpret_cast<const T*>(updates.data()),
          reinterpret_cast<T*>(out.mutable_data()), p.rows, size);
    };
    if (s.wrap_size) apply(std::true_type{});
    else apply(std::false_type{});
    return;
  }
  if (!split) return scatter_rows_owned<T, op>(updates, idx, p, d, mode, wrap, out, l, Owned{0, size});
  const int64_t per = (size + parts - 1) / parts;
  parallel_for(parts, 1, [&](int64_t b, int64_t e) {
    scatter_rows_owned<T, op>(updates, idx, p, d, mode, wrap, out, l,
                              Owned{b * per, std::min(size, e * per)});
  });
}

}  // namespace

void gather(const Array& x, const Array& indices, const GatherDims& dims,
            const std::vector<int64_t>& slice_sizes, IndexMode mode, bool wrap_negative,
            const Array& fill_value, const Array& out) {
  if (out.size() == 0) return;
  WindowPlan p = plan_windows(x, indices, dims);
  p.extent = slice_sizes;
  const size_t elem = itemsize(x.dtype());
  std::vector<char> fill(elem, 0);
  if (mode == IndexMode::fill_or_drop) std::memcpy(fill.data(), fill_value.data(), elem);
  bool empty = x.size() == 0;
  for (int64_t s : slice_sizes) empty = empty || s == 0;
  if (empty) {  // every window is empty: nothing to read
    for (int64_t i = 0; i < out.size(); ++i) std::memcpy(out.mutable_data() + i * int64_t(elem), fill.data(), elem);
    return;
  }
  const Array idx = dense_indices(indices);
  with_rows(idx, [&](const auto* rows) {
    switch (elem) {
      case 1: return gather_rows<1>(x, rows, p, dims, mode, wrap_negative, fill.data(), out);
      case 2: return gather_rows<2>(x, rows, p, dims, mode, wrap_negative, fill.data(), out);
      case 4: return gather_rows<4>(x, rows, p, dims, mode, wrap_negative, fill.data(), out);
      case 8: return gather_rows<8>(x, rows, p, dims, mode, wrap_negative, fill.data(), out);
      default: return gather_rows<16>(x, rows, p, dims, mode, wrap_negative, fill.data(), out);
    }
  });
}

void scatter(ScatterOp op, const Array& x, const Array& indices, const Array& updates,
             const GatherDims& dims, IndexMode mode, bool wrap_negative, const Array& out) {
  if (out.size() == 0) return;
  const bool in_place = out.buffer() == x.buffer() && out.offset() == x.offset() &&
                        out.strides() == x.strides();
  if (!in_place) copy(x, out);
  if (updates.size() == 0) return;
  WindowPlan p = plan_windows(x, indices, dims);
  for (size_t j = 0; j < p.window_dims.size(); ++j)
    p.extent[size_t(p.window_dims[j])] = updates.shape()[size_t(dims.offset_dims[j])];
  const Array idx = dense_indices(indices);
  with_rows(idx, [&](const auto* rows) {
    visit_dtype(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      switch (op) {
        case ScatterOp::set: return scatter_rows<T, ScatterOp::set>(updates, rows, p, dims, mode, wrap_negative, out);
        case ScatterOp::add: return scatter_rows<T, ScatterOp::add>(updates, rows, p, dims, mode, wrap_negative, out);
        case ScatterOp::mul: return scatter_rows<T, ScatterOp::mul>(updates, rows, p, dims, mode, wrap_negative, out);
        case ScatterOp::min: return scatter_rows<T, ScatterOp::min>(updates, rows, p, dims, mode, wrap_negative, out);
        case ScatterOp::max: return scatter_rows<T, ScatterOp::max>(updates, rows, p, dims, mode, wrap_negative, out);
      }
    });
  });
}

}  // namespace tinyxla::cpu
