// Reductions (sum, prod, max, min, and, or, xor) and argmax/argmin over any strided view.
// Float sums are pairwise (numpy's accuracy); work splits into fixed blocks whose partial
// results combine in block order, so results do not depend on the number of threads.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "kernels.h"
#include "strided.h"
#include "vmath.h"
#include "tinyxla/error.h"

namespace tinyxla::cpu {
namespace {

constexpr int64_t kBlock = 1 << 16;  // elements per parallel work item
constexpr int64_t kGather = 2048;    // elements gathered at once from a strided view
constexpr int64_t kTile = 1024;      // output columns accumulated together
constexpr int64_t kPairRows = 128;   // rows summed straight before splitting pairwise
constexpr int64_t kLocalColumns = 64;  // columns reduce_columns accumulates in locals

using semantics::AccOf;
using semantics::AndOp;
using semantics::greater;
using semantics::is_nan;
using semantics::kIsComplex;
using semantics::MaxOp;
using semantics::MinOp;
using semantics::OrOp;
using semantics::ProdOp;
using semantics::SumOp;
using semantics::XorOp;

// Element type as compared and accumulated: half types widen to float32.
template <typename T>
using Val = semantics::Compute<T>;

template <typename T>
inline Val<T> load(T v) {
  return semantics::widen(v);
}

template <typename Op, typename A>
constexpr bool kNanLanes = (std::is_same_v<Op, MaxOp> || std::is_same_v<Op, MinOp>) &&
                           std::is_floating_point_v<A>;

template <typename Op>
constexpr bool kArith = std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp>;
// Only inexact sums and products depend on the order: they go pairwise.
template <typename Op, typename A>
constexpr bool kPairwise = kArith<Op> && !std::is_integral_v<A>;

template <typename A, typename T>
inline A to_acc(T v) {
  return A(load(v));
}
template <typename T, typename A>
inline T from_acc(A a) {
  return semantics::narrow<T>(a);
}

// Lanes per dense reduction: 128 bytes of accumulators, at least 4.
template <typename A>
constexpr int64_t kLanes = std::max<int64_t>(4, 128 / int64_t(sizeof(A)));

// Folds lanes [0, L) of r as a tree, halving until `keep` lanes remain (r[j] then combines
// lanes j, j + keep, j + 2 keep, ...).
template <typename Op, typename A>
inline void fold_lanes(A* r, int64_t L, int64_t keep) {
  for (int64_t w = L / 2; w >= keep; w /= 2)
    for (int64_t j = 0; j < w; ++j) r[j] = Op::apply(r[j], r[j + w]);
}

// The L = kLanes<A> lanes of one row of a dense run, combined lane by lane.
template <typename Op, typename T, typename A>
struct ArrayRow {
  static constexpr int64_t L = kLanes<A>;
  A v[L];
  static ArrayRow load(const T* p) {
    ArrayRow r;
    for (int64_t j = 0; j < L; ++j) r.v[j] = to_acc<A>(p[j]);
    return r;
  }
  static ArrayRow from_lanes(const A* a) {
    ArrayRow r;
    for (int64_t j = 0; j < L; ++j) r.v[j] = a[j];
    return r;
  }
  void combine(const ArrayRow& b) {  // v = Op(v, b), lane by lane
    for (int64_t j = 0; j < L; ++j) v[j] = Op::apply(v[j], b.v[j]);
  }
  void store(A* a) const {
    for (int64_t j = 0; j < L; ++j) a[j] = v[j];
  }
};

// The same lanes as 32-byte vectors, for float types read as they are: the row stays in
// registers. (As an array, or copied with memcpy, a row moves in 16-byte pieces, as the
// generic tuning copies memory, and the 32-byte reloads of those stores stall on store
// forwarding: a fifth of a long float sum's time.) Same lanes, same operations, same bits.
template <typename Op, typename A>
struct VectorRow {
  typedef A V __attribute__((vector_size(32)));
  typedef A Unaligned __attribute__((vector_size(32), aligned(alignof(A)), may_alias));
  static constexpr int64_t kPer = 32 / int64_t(sizeof(A)), kVectors = kLanes<A> / kPer;
  V v[kVectors];
  static VectorRow load(const A* p) {
    VectorRow r;
    for (int64_t k = 0; k < kVectors; ++k) r.v[k] = *reinterpret_cast<const Unaligned*>(p + k * kPer);
    return r;
  }
  static VectorRow from_lanes(const A* a) { return load(a); }
  void combine(const VectorRow& b) {
    for (int64_t k = 0; k < kVectors; ++k) v[k] = Op::apply(v[k], b.v[k]);
  }
  void store(A* a) const {
    for (int64_t k = 0; k < kVectors; ++k) *reinterpret_cast<Unaligned*>(a + k * kPer) = v[k];
  }
};

template <typename Op, typename T, typename A>
using RowOf = std::conditional_t<std::is_same_v<T, A> && std::is_floating_point_v<A>,
                                 VectorRow<Op, A>, ArrayRow<Op, T, A>>;

// Lane-wise pairwise reduction: leaves of 16 rows of L lanes (each lane sums 16 elements
// straight, as numpy's pairwise sum: 8 lanes, 128-element leaves) combine lane by lane as a
// balanced binary tree (a binary counter). No recursion and no per-leaf lane tree, so the
// loads stream at memory speed.
template <typename Row>
struct LaneCascade {
  Row v[64];
  int level[64];
  int n = 0;
  void push(Row a) {
    int l = 0;
    for (; n > 0 && level[n - 1] == l; ++l) {
      Row t = v[--n];
      t.combine(a);
      a = t;
    }
    v[n] = a;
    level[n++] = l;
  }
  // The combined lanes (none pushed: `identity`).
  Row result(const Row& identity) const {
    if (n == 0) return identity;
    Row r = v[n - 1];
    for (int i = n - 2; i >= 0; --i) {
      Row t = v[i];
      t.combine(r);
      r = t;
    }
    return r;
  }
};

// A dense run reduced into L = kLanes<A> lanes that vectorise (lane j takes elements j,
// j + L, j + 2L, ...): pairwise (above) for inexact sums and products, one pass for the rest.
template <typename Op, typename T, typename A>
inline __attribute__((always_inline)) void reduce_lanes_body(const T* p, int64_t n, A* lanes) {
  constexpr int64_t L = kLanes<A>;
  alignas(64) A acc[L];
  int64_t i = 0;
  if constexpr (kPairwise<Op, A>) {
    using Row = RowOf<Op, T, A>;
    constexpr int64_t kRows = 16;
    for (int64_t j = 0; j < L; ++j) acc[j] = Op::template identity<A>();
    const Row identity = Row::from_lanes(acc);
    LaneCascade<Row> tree;
    for (; i + kRows * L <= n; i += kRows * L) {
      Row leaf = Row::load(p + i);
      for (int64_t r = 1; r < kRows; ++r) leaf.combine(Row::load(p + i + r * L));
      tree.push(leaf);
    }
    if (i < n) {
      Row leaf = identity;
      for (; i + L <= n; i += L) leaf.combine(Row::load(p + i));
      leaf.store(acc);
      for (int64_t j = 0; i + j < n; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(p[i + j]));
      tree.push(Row::from_lanes(acc));
    }
    return tree.result(identity).store(lanes);
  }
  for (int64_t j = 0; j < L; ++j) acc[j] = Op::template identity<A>();
  if constexpr (kNanLanes<Op, A>) {
    // Float max/min: a plain compare-select plus a NaN flag per lane runs ~1.4x faster
    // than the NaN-sticky select.
    using Flag = std::conditional_t<sizeof(A) == 4, int32_t, int64_t>;
    Flag nan[L] = {0};
    for (; i + L <= n; i += L)
      for (int64_t j = 0; j < L; ++j) {
        A v = to_acc<A>(p[i + j]);
        acc[j] = Op::no_nan(acc[j], v);
        nan[j] |= Flag(v != v);
      }
    for (int64_t j = 0; i + j < n; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(p[i + j]));
    for (int64_t j = 0; j < L; ++j) lanes[j] = nan[j] ? std::numeric_limits<A>::quiet_NaN() : acc[j];
    return;
  }
  for (; i + L <= n; i += L)
    for (int64_t j = 0; j < L; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(p[i + j]));
  for (int64_t j = 0; i + j < n; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(p[i + j]));
  for (int64_t j = 0; j < L; ++j) lanes[j] = acc[j];
}

// A dense run reduced to one value (lanes == nullptr), or to its L lanes.
template <typename Op, typename T, typename A>
inline __attribute__((always_inline)) A reduce_dense_body(const T* p, int64_t n, A* lanes) {
  constexpr int64_t L = kLanes<A>;
  if (lanes) {
    reduce_lanes_body<Op, T, A>(p, n, lanes);
    return lanes[0];
  }
  if (n < L) {  // short rows: a few chains, no lane tree
    A a[4] = {Op::template identity<A>(), Op::template identity<A>(), Op::template identity<A>(),
              Op::template identity<A>()};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int j = 0; j < 4; ++j) a[j] = Op::apply(a[j], to_acc<A>(p[i + j]));
    for (int j = 0; i + j < n; ++j) a[j] = Op::apply(a[j], to_acc<A>(p[i + j]));
    return Op::apply(Op::apply(a[0], a[1]), Op::apply(a[2], a[3]));
  }
  alignas(64) A acc[L];
  reduce_lanes_body<Op, T, A>(p, n, acc);
  fold_lanes<Op, A>(acc, L, 1);
  return acc[0];
}

template <typename Op, typename T, typename A>
A reduce_dense_generic(const T* p, int64_t n, A* lanes) {
  return reduce_dense_body<Op, T, A>(p, n, lanes);
}

// The baseline build moves 16 bytes per instruction, too few to keep up with memory on a
// long float run; the AVX2 and AVX-512 builds of the same lanes and tree (same result, bit
// for bit) stream at memory speed.
template <typename Op, typename T, typename A>
__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) A reduce_dense_avx512(
    const T* p, int64_t n, A* lanes) {
  return reduce_dense_body<Op, T, A>(p, n, lanes);
}

template <typename Op, typename T, typename A>
__attribute__((target("avx2"))) A reduce_dense_avx2(const T* p, int64_t n, A* lanes) {
  return reduce_dense_body<Op, T, A>(p, n, lanes);
}

// Reduces a dense run to one value, or (lanes given) to the kLanes<A> lanes.
template <typename Op, typename T, typename A>
A reduce_dense(const T* p, int64_t n, A* lanes = nullptr) {
  if constexpr (std::is_floating_point_v<T> && std::is_same_v<T, A>) {
    static const bool avx512 = vmath::isa_supported(vmath::Isa::Avx512);
    if (avx512) return reduce_dense_avx512<Op, T, A>(p, n, lanes);
  }
  if constexpr (std::is_arithmetic_v<T> && std::is_arithmetic_v<A>) {
    static const bool avx2 = vmath::isa_supported(vmath::Isa::Avx2);
    if (avx2) return reduce_dense_avx2<Op, T, A>(p, n, lanes);
  }
  return reduce_dense_generic<Op, T, A>(p, n, lanes);
}

// Combines a stream of partial results as a balanced binary tree (a binary counter).
template <typename Op, typename A>
struct Cascade {
  A v[64];
  int level[64];
  int n = 0;
  void push(A a) {
    int l = 0;
    for (; n > 0 && level[n - 1] == l; ++l) a = Op::apply(v[--n], a);
    v[n] = a;
    level[n++] = l;
  }
  A result() const {
    A r = n ? v[n - 1] : Op::template identity<A>();
    for (int i = n - 2; i >= 0; --i) r = Op::apply(v[i], r);
    return r;
  }
};

// Scratch arrays (not std::vector: vector<bool> packs bits, which threads cannot share).
template <typename A>
std::unique_ptr<A[]> make_buf(int64_t n) {
  return std::unique_ptr<A[]>(new A[size_t(n)]);
}

// Row-major walk over a shape: the element offset of successive flat indices.
struct Walker {
  const Shape& shape;
  const Strides& strides;
  int64_t idx[64] = {0};
  int64_t off = 0;
  Walker(const Shape& s, const Strides& t, int64_t flat) : shape(s), strides(t) {
    for (int d = int(s.size()) - 1; d >= 0; --d) {
      idx[d] = flat % s[size_t(d)];
      flat /= s[size_t(d)];
      off += idx[d] * t[size_t(d)];
    }
  }
  void next() {
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      off += strides[size_t(d)];
      if (++idx[d] < shape[size_t(d)]) return;
      off -= idx[d] * strides[size_t(d)];
      idx[d] = 0;
    }
  }
};

// Drops size-1 dims and merges neighbours that walk memory as one dim (order kept).
void coalesce(Shape& shape, Strides& strides) {
  Shape s;
  Strides t;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s.empty() && t.back() == strides[d] * shape[d]) {
      s.back() *= shape[d];
      t.back() = strides[d];
    } else {
      s.push_back(shape[d]);
      t.push_back(strides[d]);
    }
  }
  shape = s;
  strides = t;
}

// Elements [b, e) (row-major) of the view at `base`, reduced; strided views are gathered.
template <typename Op, typename T, typename A>
A reduce_range(const T* base, const Shape& shape, const Strides& strides, int64_t b, int64_t e) {
  if (shape.empty()) return to_acc<A>(*base);
  if (shape.size() == 1 && strides[0] == 1) return reduce_dense<Op, T, A>(base + b, e - b);
  alignas(64) T buf[kGather];
  Cascade<Op, A> parts;
  for (int64_t i = b; i < e; i += kGather) {
    int64_t m = std::min(kGather, e - i);
    gather(reinterpret_cast<const char*>(base), sizeof(T), shape, strides, i, i + m,
           reinterpret_cast<char*>(buf));
    parts.push(reduce_dense<Op, T, A>(buf, m));
  }
  return parts.result();
}

// Reads of this many bytes run for milliseconds at one core's memory speed: long enough to
// wake a worker even while no core is idle.
bool long_reduction(int64_t bytes) { return bytes >= (int64_t(1) << 24); }

// A whole view reduced to one value, in parallel over fixed blocks.
template <typename Op, typename T, typename A>
A reduce_all(const T* base, const Shape& shape, const Strides& strides) {
  const int64_t n = num_elements(shape), nb = (n + kBlock - 1) / kBlock;
  if (nb <= 1) return reduce_range<Op, T, A>(base, shape, strides, 0, n);
  auto parts = make_buf<A>(nb);
  parallel_for(nb, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k)
      parts[k] = reduce_range<Op, T, A>(base, shape, strides, k * kBlock,
                                        std::min(n, (k + 1) * kBlock));
  }, long_reduction(n * int64_t(sizeof(T))));
  Cascade<Op, A> c;
  for (int64_t k = 0; k < nb; ++k) c.push(parts[k]);
  return c.result();
}

// R rows of n columns (rows at stride rs, columns at stride cs) reduced over the rows, n a
// power of two up to kLanes<A>: the rows stream as one dense run whose lane j holds column
// j % n, in parallel over fixed blocks of whole rows (strided rows gathered a block at a
// time, so the layout does not change the result), and each column folds its lanes at the
// end. A tall narrow matrix so reads at memory speed instead of n-wide rows.
template <typename Op, typename T, typename A>
void reduce_interleaved(const T* base, int64_t R, int64_t n, int64_t rs, int64_t cs, T* out) {
  constexpr int64_t L = kLanes<A>;
  static_assert(kBlock % L == 0, "blocks start at lane 0");
  const int64_t total = R * n, nb = (total + kBlock - 1) / kBlock;
  const bool dense = rs == n && cs == 1;
  const Shape shape{R, n};
  const Strides strides{rs, cs};
  auto parts = make_buf<A>(nb * L);
  parallel_for(nb, 1, [&](int64_t b, int64_t e) {
    auto buf = make_buf<T>(dense ? 0 : std::min(total, kBlock));
    for (int64_t k = b; k < e; ++k) {
      const int64_t i = k * kBlock, m = std::min(total - i, kBlock);
      const T* run = base + i;
      if (!dense) {
        gather(reinterpret_cast<const char*>(base), sizeof(T), shape, strides, i, i + m,
               reinterpret_cast<char*>(buf.get()));
        run = buf.get();
      }
      reduce_dense<Op, T, A>(run, m, &parts[k * L]);
    }
  }, long_reduction(total * int64_t(sizeof(T))));
  alignas(64) A lanes[L];
  for (int64_t j = 0; j < L; ++j) {
    Cascade<Op, A> c;
    for (int64_t k = 0; k < nb; ++k) c.push(parts[k * L + j]);
    lanes[j] = c.result();
  }
  fold_lanes<Op, A>(lanes, L, n);
  for (int64_t j = 0; j < n; ++j) out[j] = from_acc<T>(lanes[j]);
}

// The reduction split into kept dims (output order) and reduced dims (any order).
struct Plan {
  int64_t base = 0;  // element offset of the first element read
  Shape kshape, rshape;
  Strides kstrides, rstrides;
};

// Rows [r0, r1) of the reduced dims folded into w accumulators (columns at stride ks),
// pairwise over the rows.
template <typename Op, typename T, typename A>
void reduce_columns(const T* p, int64_t w, int64_t ks, const Plan& plan, int64_t r0, int64_t r1,
                    A* acc) {
  if (kPairwise<Op, A> && r1 - r0 > kPairRows) {
    int64_t mid = r0 + (r1 - r0) / 2;
    reduce_columns<Op, T, A>(p, w, ks, plan, r0, mid, acc);
    auto tmp = make_buf<A>(w);
    std::fill(tmp.get(), tmp.get() + w, Op::template identity<A>());
    reduce_columns<Op, T, A>(p, w, ks, plan, mid, r1, tmp.get());
    for (int64_t j = 0; j < w; ++j) acc[j] = Op::apply(acc[j], tmp[j]);
    return;
  }
  if (ks == 1 && plan.rshape.size() == 1 && w <= kLocalColumns) {
    // Dense rows at one stride (a tall matrix reduced over its rows): accumulators the
    // compiler keeps in registers (acc may alias the rows as far as it knows) and no walker.
    A local[kLocalColumns];
    std::copy(acc, acc + w, local);
    const int64_t rs = plan.rstrides[0];
    const T* row = p + r0 * rs;
    for (int64_t r = r0; r < r1; ++r, row += rs)
      for (int64_t j = 0; j < w; ++j) local[j] = Op::apply(local[j], to_acc<A>(row[j]));
    std::copy(local, local + w, acc);
    return;
  }
  Walker rows(plan.rshape, plan.rstrides, r0);
  for (int64_t r = r0; r < r1; ++r, rows.next()) {
    const T* row = p + rows.off;
    if (ks == 1) {
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(row[j]));
    } else {
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::apply(acc[j], to_acc<A>(row[j * ks]));
    }
  }
}

// Pairwise combination of k partial rows of width w stored one after another.
template <typename Op, typename A>
void combine_rows(A* parts, int64_t k, int64_t w) {
  for (int64_t step = 1; step < k; step *= 2)
    for (int64_t i = 0; i + step < k; i += 2 * step)
      for (int64_t j = 0; j < w; ++j)
        parts[i * w + j] = Op::apply(parts[i * w + j], parts[(i + step) * w + j]);
}

template <typename Op, typename T>
void reduce_typed(const T* x, const Plan& plan, T* out, int64_t nout) {
  using A = AccOf<Op, T>;
  const T* base = x + plan.base;
  const int64_t R = num_elements(plan.rshape);
  if (R == 0) {
    std::fill(out, out + nout, from_acc<T>(Op::template identity<A>()));
    return;
  }
  if (plan.kshape.empty()) {
    *out = from_acc<T>(reduce_all<Op, T, A>(base, plan.rshape, plan.rstrides));
    return;
  }
  const int64_t ks = plan.kstrides.back();
  int64_t rs = std::numeric_limits<int64_t>::max();
  for (int64_t s : plan.rstrides) rs = std::min(rs, s);
  if (rs <= std::abs(ks)) {
    // Rows: each output reduces its own (strided or dense) run of the reduced dims.
    if (R >= 2 * kBlock) {
      Walker o(plan.kshape, plan.kstrides, 0);
      for (int64_t i = 0; i < nout; ++i, o.next())
        out[i] = from_acc<T>(reduce_all<Op, T, A>(base + o.off, plan.rshape, plan.rstrides));
      return;
    }
    const bool dense_rows = plan.rshape.size() == 1 && plan.rstrides[0] == 1;
    parallel_for(nout, std::max<int64_t>(1, kBlock / R), [&](int64_t b, int64_t e) {
      Walker o(plan.kshape, plan.kstrides, b);
      for (int64_t i = b; i < e; ++i, o.next())
        out[i] = from_acc<T>(dense_rows ? reduce_dense<Op, T, A>(base + o.off, R)
                                        : reduce_range<Op, T, A>(base + o.off, plan.rshape,
                                                                 plan.rstrides, 0, R));
    });
    return;
  }
  // Columns: the last kept dim is the tighter one, so whole rows of outputs accumulate
  // together. Items are (outer index, column tile); few items split the rows into blocks.
  const int64_t n = plan.kshape.back();
  if constexpr (std::is_arithmetic_v<A>) {
    if (plan.kshape.size() == 1 && plan.rshape.size() == 1 && n <= kLanes<A> &&
        kLanes<A> % n == 0)
      return reduce_interleaved<Op, T, A>(base, R, n, plan.rstrides[0], ks, out);
  }
  const Shape oshape(plan.kshape.begin(), plan.kshape.end() - 1);
  const Strides ostrides(plan.kstrides.begin(), plan.kstrides.end() - 1);
  const int64_t tiles = (n + kTile - 1) / kTile, items = num_elements(oshape) * tiles;
  const int64_t width = std::min(n, kTile);
  const int64_t blocks =
      items >= 16 ? 1 : std::clamp<int64_t>(R * width / kBlock, 1, std::min<int64_t>(64, R));
  const int64_t rows_per = (R + blocks - 1) / blocks;
  auto parts = make_buf<A>(blocks > 1 ? items * blocks * width : 0);
  parallel_for(items * blocks, std::max<int64_t>(1, kBlock / (R / blocks * width + 1)),
               [&](int64_t b, int64_t e) {
                 auto acc = make_buf<A>(width);
                 for (int64_t it = b; it < e; ++it) {
                   const int64_t item = it / blocks, blk = it % blocks;
                   const int64_t o = item / tiles, c0 = item % tiles * kTile;
                   const int64_t w = std::min(kTile, n - c0);
                   const int64_t r0 = blk * rows_per, r1 = std::min(R, r0 + rows_per);
                   A* a = blocks > 1 ? &parts[it * width] : acc.get();
                   std::fill(a, a + w, Op::template identity<A>());
                   Walker ow(oshape, ostrides, o);
                   reduce_columns<Op, T, A>(base + ow.off + c0 * ks, w, ks, plan, r0, r1, a);
                   if (blocks == 1)
                     for (int64_t j = 0; j < w; ++j) out[o * n + c0 + j] = from_acc<T>(a[j]);
                 }
               });
  if (blocks == 1) return;
  for (int64_t item = 0; item < items; ++item) {
    A* a = &parts[item * blocks * width];
    combine_rows<Op, A>(a, blocks, width);
    const int64_t o = item / tiles, c0 = item % tiles * kTile, w = std::min(kTile, n - c0);
    for (int64_t j = 0; j < w; ++j) out[o * n + c0 + j] = from_acc<T>(a[j]);
  }
}

Plan make_plan(const Array& x, const std::vector<int64_t>& axes, bool idempotent) {
  Plan p;
  std::vector<bool> reduced(size_t(x.ndim()), false);
  for (int64_t a : axes) reduced[size_t(a)] = true;
  std::vector<std::pair<int64_t, int64_t>> rdims;  // (|stride|, size)
  for (size_t d = 0; d < size_t(x.ndim()); ++d) {
    int64_t n = x.shape()[d], s = x.strides()[d];
    if (!reduced[d]) {
      p.kshape.push_back(n);
      p.kstrides.push_back(s);
      continue;
    }
    if (n == 0) {
      p.rshape = {0};
      p.rstrides = {1};
      return p;
    }
    if (s < 0) {  // reduction order is free: walk reversed dims forwards
      p.base += (n - 1) * s;
      s = -s;
    }
    if (s == 0 && idempotent) continue;
    rdims.push_back({s, n});
  }
  // Largest stride first, so dense reduced dims merge into one run.
  std::stable_sort(rdims.begin(), rdims.end(), [](auto a, auto b) { return a.first > b.first; });
  for (auto [s, n] : rdims) {
    p.rshape.push_back(n);
    p.rstrides.push_back(s);
  }
  coalesce(p.kshape, p.kstrides);
  coalesce(p.rshape, p.rstrides);
  return p;
}

// Callers have checked that bitwise ops get integers.
template <typename T>
void reduce_dispatch(ReduceOp op, const T* x, const Plan& plan, T* out, int64_t nout) {
  switch (op) {
    case ReduceOp::sum: return reduce_typed<SumOp>(x, plan, out, nout);
    case ReduceOp::prod: return reduce_typed<ProdOp>(x, plan, out, nout);
    case ReduceOp::max: return reduce_typed<MaxOp>(x, plan, out, nout);
    case ReduceOp::min: return reduce_typed<MinOp>(x, plan, out, nout);
    case ReduceOp::and_:
    case ReduceOp::or_:
    case ReduceOp::xor_:
      if constexpr (std::is_integral_v<T>) {
        if (op == ReduceOp::and_) return reduce_typed<AndOp>(x, plan, out, nout);
        if (op == ReduceOp::or_) return reduce_typed<OrOp>(x, plan, out, nout);
        return reduce_typed<XorOp>(x, plan, out, nout);
      }
      break;
  }
}

// ---- argmax / argmin ----

// v beats the current best b: strictly more extreme, or the first NaN.
template <bool kMax, typename V>
inline bool better(V v, V b) {
  if (is_nan(b)) return false;
  if (is_nan(v)) return true;
  return kMax ? greater(v, b) : greater(b, v);
}

template <typename V>
struct Best {
  V v;
  int64_t i;
};

template <bool kMax, typename T>
Best<Val<T>> scan(const T* p, int64_t s, int64_t i0, int64_t i1) {
  if constexpr (!kIsComplex<T>) {
    if (s == 1 && i1 - i0 >= 64) {
      // Dense runs: the vectorised max/min, then the first element equal to it.
      using Op = std::conditional_t<kMax, MaxOp, MinOp>;
      const Val<T> m = reduce_dense<Op, T, Val<T>>(p + i0, i1 - i0);
      int64_t i = i0;
      if (is_nan(m)) {
        while (!is_nan(load(p[i]))) ++i;
      } else {
        while (load(p[i]) != m) ++i;
      }
      return {m, i};
    }
  }
  Best<Val<T>> best{load(p[i0 * s]), i0};
  for (int64_t i = i0 + 1; i < i1 && !is_nan(best.v); ++i) {
    Val<T> v = load(p[i * s]);
    if (better<kMax>(v, best.v)) best = {v, i};
  }
  return best;
}

template <bool kMax, typename T>
void argreduce_typed(const T* x, const Shape& kshape, const Strides& kstrides, int64_t n,
                     int64_t s, int64_t* out, int64_t nout) {
  using V = Val<T>;
  const int64_t ks = kshape.empty() ? 0 : kstrides.back();
  if (kshape.empty() || std::abs(s) <= std::abs(ks)) {
    if (nout < pool_size() && n >= 2 * kBlock) {
      // A few long rows: scan each in blocks, the earliest block wins ties.
      Walker o(kshape, kstrides, 0);
      const int64_t nb = (n + kBlock - 1) / kBlock;
      std::vector<Best<V>> parts(static_cast<size_t>(nb));
      for (int64_t i = 0; i < nout; ++i, o.next()) {
        parallel_for(nb, 1, [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k)
            parts[size_t(k)] =
                scan<kMax>(x + o.off, s, k * kBlock, std::min(n, (k + 1) * kBlock));
        });
        Best<V> best = parts[0];
        for (const Best<V>& p : parts)
          if (better<kMax>(p.v, best.v)) best = p;
        out[i] = best.i;
      }
      return;
    }
    parallel_for(nout, std::max<int64_t>(1, kBlock / n), [&](int64_t b, int64_t e) {
      Walker o(kshape, kstrides, b);
      for (int64_t i = b; i < e; ++i, o.next()) out[i] = scan<kMax>(x + o.off, s, 0, n).i;
    });
    return;
  }
  // Columns: the kept inner dim is tighter, track a best value per output column.
  const int64_t m = kshape.back();
  const Shape oshape(kshape.begin(), kshape.end() - 1);
  const Strides ostrides(kstrides.begin(), kstrides.end() - 1);
  const int64_t tiles = (m + kTile - 1) / kTile, items = num_elements(oshape) * tiles;
  const int64_t width = std::min(m, kTile);
  const int64_t blocks =
      items >= 16 ? 1 : std::clamp<int64_t>(n * width / kBlock, 1, std::min<int64_t>(64, n));
  const int64_t per = (n + blocks - 1) / blocks;
  std::vector<Best<V>> parts(size_t(items * blocks * width));
  parallel_for(items * blocks, std::max<int64_t>(1, kBlock / (per * width)),
               [&](int64_t b, int64_t e) {
                 for (int64_t it = b; it < e; ++it) {
                   const int64_t item = it / blocks, blk = it % blocks;
                   const int64_t c0 = item % tiles * kTile, w = std::min(kTile, m - c0);
                   const int64_t i0 = blk * per, i1 = std::min(n, i0 + per);
                   Walker ow(oshape, ostrides, item / tiles);
                   const T* p = x + ow.off + c0 * ks;
                   Best<V>* best = &parts[size_t(it * width)];
                   for (int64_t j = 0; j < w; ++j) best[j] = {load(p[i0 * s + j * ks]), i0};
                   for (int64_t i = i0 + 1; i < i1; ++i) {
                     const T* row = p + i * s;
                     for (int64_t j = 0; j < w; ++j) {
                       V v = load(row[j * ks]);
                       if (better<kMax>(v, best[j].v)) best[j] = {v, i};
                     }
                   }
                 }
               });
  for (int64_t item = 0; item < items; ++item) {
    const int64_t o = item / tiles, c0 = item % tiles * kTile, w = std::min(kTile, m - c0);
    Best<V>* first = &parts[size_t(item * blocks * width)];
    for (int64_t blk = 1; blk < blocks; ++blk)
      for (int64_t j = 0; j < w; ++j)
        if (better<kMax>(first[blk * width + j].v, first[j].v))
          first[j] = first[blk * width + j];
    for (int64_t j = 0; j < w; ++j) out[o * m + c0 + j] = first[j].i;
  }
}

}  // namespace

void reduce(ReduceOp op, const Array& x, const std::vector<int64_t>& axes, const Array& out) {
  const bool bitwise = op == ReduceOp::and_ || op == ReduceOp::or_ || op == ReduceOp::xor_;
  if (bitwise && !is_integral(x.dtype()) && !is_bool(x.dtype()))
    throw_error(ErrorKind::TypeError, std::string("reduce_") + op_name(op),
                std::string("requires a boolean or integer operand, got ") +
                    dtype_name(x.dtype()));
  if (out.size() == 0) return;
  if (x.size() != 0 && x.size() == out.size()) return copy(x, out);  // only size-1 axes
  const bool idempotent = op == ReduceOp::max || op == ReduceOp::min || op == ReduceOp::and_ ||
                          op == ReduceOp::or_;
  const Plan plan = make_plan(x, axes, idempotent);
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    reduce_dispatch<T>(op, reinterpret_cast<const T*>(x.data()), plan,
                       reinterpret_cast<T*>(out.mutable_data()), out.size());
  });
}

void argreduce(bool is_max, const Array& x, int64_t axis, const Array& out) {
  const char* name = is_max ? "argmax" : "argmin";
  if (!is_integral(out.dtype()))
    throw_error(ErrorKind::TypeError, name, "index_dtype must be an integer type");
  if (out.size() == 0) return;
  const int64_t n = x.shape()[size_t(axis)], s = x.strides()[size_t(axis)];
  if (n == 0)
    throw_error(ErrorKind::InvalidArgument, name,
                std::string("attempt to get ") + name + " of an empty sequence");
  Shape kshape = x.shape();
  Strides kstrides = x.strides();
  kshape.erase(kshape.begin() + axis);
  kstrides.erase(kstrides.begin() + axis);
  coalesce(kshape, kstrides);
  std::vector<int64_t> idx(size_t(out.size()));
  visit_dtype(x.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = reinterpret_cast<const T*>(x.data());
    if (is_max) argreduce_typed<true>(p, kshape, kstrides, n, s, idx.data(), out.size());
    else argreduce_typed<false>(p, kshape, kstrides, n, s, idx.data(), out.size());
  });
  visit_dtype(out.dtype(), [&](auto zero) {
    using I = decltype(zero);
    if constexpr (std::is_integral_v<I>) {
      I* dst = reinterpret_cast<I*>(out.mutable_data());
      for (size_t i = 0; i < idx.size(); ++i) dst[i] = I(idx[i]);
    }
  });
}

}  // namespace tinyxla::cpu
