// Tests of gather, scatter, dynamic_slice and dynamic_update_slice: the eager ops against
// loops written here, out-of-bounds modes, duplicate indices, validation errors, the graph
// nodes' text round trip, jitted updates writing into a dead operand's buffer, and the
// simplifier's fold of jnp's negative-index normalisation into the gather and scatter, and
// the vector gather's AVX-512 and scalar loops.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ops/indexing.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "test_harness.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

std::vector<float> iota_f32(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i);
  return v;
}

Array i32(int32_t v) { return scalar(DType::I32, Scalar::of_int(v), 0); }

const GatherDims kRows{{1}, {0}, {0}, {}, {}};  // x[i] rows of a matrix

void test_gather_rows_clip_and_fill() {
  Array x = from(iota_f32(12), {4, 3}, DType::F32);
  Array idx = from(std::vector<int32_t>{2, 9, -1, 0}, {4, 1}, DType::I32);
  auto clip = host<float>(gather(x, idx, kRows, {1, 3}, IndexMode::clip, Array()));
  CHECK((clip == std::vector<float>{6, 7, 8, 9, 10, 11, 0, 1, 2, 0, 1, 2}));
  Array fill_value = scalar(DType::F32, Scalar::of_float(-5), 0);
  auto fill = host<float>(gather(x, idx, kRows, {1, 3}, IndexMode::fill_or_drop, fill_value));
  CHECK((fill == std::vector<float>{6, 7, 8, -5, -5, -5, -5, -5, -5, 0, 1, 2}));
}

void test_gather_of_a_strided_view_with_wide_indices() {
  // The transpose of a 3x4 matrix, indexed by int64 (row, column) pairs.
  Array x = transpose(from(iota_f32(12), {3, 4}, DType::F32), {1, 0});
  Array idx = from(std::vector<int64_t>{0, 0, 3, 2, 1, 1}, {3, 2}, DType::I64);
  const GatherDims elems{{}, {0, 1}, {0, 1}, {}, {}};
  auto got = host<float>(gather(x, idx, elems, {1, 1}, IndexMode::clip, Array()));
  CHECK((got == std::vector<float>{0, 11, 5}));  // xT[0,0], xT[3,2] = x[2,3], xT[1,1]
}

void test_scatter_ops_accumulate_duplicates_in_order() {
  Array x = from(std::vector<int32_t>{1, 2, 3, 4}, {4}, DType::I32);
  Array idx = from(std::vector<int32_t>{1, 3, 1, 7, -1}, {5, 1}, DType::I32);
  Array upd = from(std::vector<int32_t>{5, 6, 7, 8, 9}, {5}, DType::I32);
  const GatherDims one{{}, {0}, {0}, {}, {}};
  auto run = [&](ScatterOp op, IndexMode mode) { return host<int32_t>(scatter(op, x, idx, upd, one, mode)); };
  CHECK((run(ScatterOp::set, IndexMode::fill_or_drop) == std::vector<int32_t>{1, 7, 3, 6}));
  CHECK((run(ScatterOp::add, IndexMode::fill_or_drop) == std::vector<int32_t>{1, 14, 3, 10}));
  CHECK((run(ScatterOp::mul, IndexMode::fill_or_drop) == std::vector<int32_t>{1, 70, 3, 24}));
  CHECK((run(ScatterOp::min, IndexMode::fill_or_drop) == std::vector<int32_t>{1, 2, 3, 4}));
  CHECK((run(ScatterOp::max, IndexMode::fill_or_drop) == std::vector<int32_t>{1, 7, 3, 6}));
  // clip: 7 lands on 3 and -1 on 0.
  CHECK((run(ScatterOp::add, IndexMode::clip) == std::vector<int32_t>{10, 14, 3, 18}));
  CHECK((host<int32_t>(x) == std::vector<int32_t>{1, 2, 3, 4}));  // the operand is untouched
}

void test_validation() {
  Array x = from(iota_f32(12), {4, 3}, DType::F32);
  Array fidx = from(std::vector<float>{1}, {1, 1}, DType::F32);
  Array idx = from(std::vector<int32_t>{1}, {1, 1}, DType::I32);
  CHECK_THROWS(gather(x, fidx, kRows, {1, 3}, IndexMode::clip, Array()), "integer type");
  CHECK_THROWS(gather(x, idx, kRows, {2, 3}, IndexMode::clip, Array()), "collapse slice dims");
  CHECK_THROWS(gather(x, idx, kRows, {1, 4}, IndexMode::clip, Array()), "out of range");
  CHECK_THROWS(gather(x, idx, kRows, {1, 3}, IndexMode::fill_or_drop, Array()), "fill value");
  Array upd = from(std::vector<float>{1, 2, 3, 4}, {1, 4}, DType::F32);
  CHECK_THROWS(scatter(ScatterOp::add, x, idx, upd, kRows, IndexMode::clip), "must not exceed");
  Array upd_i = from(std::vector<int32_t>{1, 2, 3}, {1, 3}, DType::I32);
  CHECK_THROWS(scatter(ScatterOp::add, x, idx, upd_i, kRows, IndexMode::clip), "same dtypes");
  CHECK_THROWS(dynamic_slice(x, {i32(0)}, {1, 1}), "Length of slice indices must match");
  CHECK_THROWS(dynamic_update_slice(x, upd, {i32(0), i32(0)}), "must be smaller");
}

void test_dynamic_slices_clamp() {
  Array x = from(iota_f32(12), {3, 4}, DType::F32);
  auto s = host<float>(dynamic_slice(x, {i32(2), i32(-7)}, {2, 2}));
  CHECK((s == std::vector<float>{4, 5, 8, 9}));  // starts clamped to (1, 0)
  Array u = from(std::vector<float>{-1, -2}, {1, 2}, DType::F32);
  auto d = host<float>(dynamic_update_slice(x, u, {i32(5), i32(3)}));  // clamped to (2, 2)
  CHECK((d == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -2}));
}

void test_graph_text_round_trip() {
  GraphBuilder b;
  ValueId x = b.parameter({4, 3}, DType::F32);
  ValueId i = b.parameter({2, 1}, DType::I32);
  ValueId s = b.parameter({}, DType::I32);
  ValueId fill = b.scalar(DType::F32, Scalar::of_float(0.5));
  ValueId g = b.gather(x, i, kRows, {1, 3}, IndexMode::fill_or_drop, fill);
  ValueId sc = b.scatter(ScatterOp::max, x, i, g, kRows, IndexMode::clip);
  ValueId ds = b.dynamic_slice(sc, {s, s}, {2, 2});
  ValueId dus = b.dynamic_update_slice(sc, ds, {s, s});
  b.set_outputs({dus, g});
  const std::string text = b.graph().to_text();
  CHECK(text.find("scatter_max(%0, %1, %4) {update_window_dims=[1]") != std::string::npos);
  CHECK(text.find("slice_sizes=[1,3], mode=1") != std::string::npos);
  Graph parsed = parse_graph(text);
  CHECK(parsed.identical_to(b.graph()));
  CHECK(parsed.to_text() == text);
}

void test_jitted_updates_reuse_a_dead_buffer() {
  // y = x * 2; y[i] += u three times; return y: the updates write into y's buffer and the
  // last into the output's, so only those two buffers are allocated.
  const int64_t n = 1 << 20;
  GraphBuilder b;
  ValueId x = b.parameter({n}, DType::F32);
  ValueId i = b.parameter({2, 1}, DType::I32);
  ValueId u = b.parameter({2}, DType::F32);
  ValueId y = b.binary(BinaryOp::mul, x, b.full({n}, DType::F32, Scalar::of_float(2)));
  const GatherDims one{{}, {0}, {0}, {}, {}};
  for (int k = 0; k < 3; ++k) y = b.scatter(ScatterOp::add, y, i, u, one, IndexMode::fill_or_drop);
  b.set_outputs({y});
  auto exe = compile(b.graph());
  Array xs = from(iota_f32(n), {n}, DType::F32);
  Array is = from(std::vector<int32_t>{3, 3}, {2, 1}, DType::I32);
  Array us = from(std::vector<float>{1, 2}, {2}, DType::F32);
  exe->run({xs, is, us})[0].wait();
  reset_peak_memory();
  const int64_t before = memory_stats().bytes_in_use;
  Array out = exe->run({xs, is, us})[0];
  out.wait();
  const double peak = double(memory_stats().peak_bytes_in_use - before) / double(4 * n);
  CHECK(peak < 2.5);
  auto v = host<float>(out);
  CHECK(v[3] == 6 + 9 && v[2] == 4 && v[4] == 8);
  CHECK(host<float>(xs)[3] == 3);
}

// select_n(i < 0, i, i + n): jnp's normalisation of negative indices, as it stages it.
ValueId normalised(GraphBuilder& b, ValueId i, int64_t n) {
  const ValueType t = b.type(i);
  auto splat = [&](int64_t v) {
    return b.broadcast_in_dim(b.scalar(t.dtype, Scalar::of_int(v)), t.shape, {});
  };
  return b.select_n(b.binary(BinaryOp::lt, i, splat(0)), {i, b.binary(BinaryOp::add, i, splat(n))});
}

// i[..., None]: one column of gather indices.
ValueId column(GraphBuilder& b, ValueId i) {
  Shape shape = b.type(i).shape;
  std::vector<int64_t> dims(shape.size());
  for (size_t d = 0; d < dims.size(); ++d) dims[d] = int64_t(d);
  shape.push_back(1);
  return b.broadcast_in_dim(i, shape, dims);
}

// Whether `v` is a gather or scatter with wrap_negative set.
bool wraps(const Graph& g, ValueId v) {
  const Node& n = g.node(g.defining_node(v));
  if (n.kind == OpKind::scatter) return n.attr<ops::ScatterAttrs>().wrap_negative;
  return n.kind == OpKind::gather && n.attr<ops::GatherAttrs>().wrap_negative;
}

// Gathers of jnp-normalised indices (x[i] clamped and filled, m[i, j], m[i] rows, m[:, i])
// read the raw indices with wrap_negative set, and give the unsimplified graph's values bit
// for bit on negative, in-range and out-of-range indices; int8 indices normalise in int8 and
// widen after, as jnp stages them. A normalisation that a scatter reads too (an embedding
// and its gradient) folds into both; one by another size than the operand dim's, or one
// that another op reads too, stays as it is.
void test_simplify_folds_index_normalisation_into_gather() {
  const std::vector<int64_t> raw_i{0, 3, 9, 10, 127, -1, -5, -10, -11, -128, 4, -2};
  const std::vector<int64_t> raw_j{1, -1, 2, -3, 5, -5, -6, 4, 0, 6, -128, 127};
  for (DType t : {DType::I32, DType::I64, DType::I8}) {
    GraphBuilder b;
    ValueId v = b.parameter({10}, DType::F32);
    ValueId m = b.parameter({2, 5}, DType::F32);
    ValueId i = b.parameter({12}, t);
    ValueId j = b.parameter({12}, t);
    const DType index = t == DType::I8 ? DType::I32 : t;
    auto idx = [&](ValueId k, int64_t n) { return column(b, b.convert(normalised(b, k, n), index)); };
    const GatherDims one{{}, {0}, {0}, {}, {}}, two{{}, {0, 1}, {0, 1}, {}, {}};
    const GatherDims cols{{0}, {1}, {1}, {}, {}};
    ValueId fill = b.scalar(DType::F32, Scalar::of_float(-7));
    std::vector<ValueId> outs{
        b.gather(v, idx(i, 10), one, {1}, IndexMode::clip, -1),
        b.gather(v, idx(i, 10), one, {1}, IndexMode::fill_or_drop, fill),
        b.gather(m, b.concatenate({idx(i, 2), idx(j, 5)}, 1), two, {1, 1}, IndexMode::fill_or_drop, fill),
        b.gather(m, idx(i, 2), kRows, {1, 5}, IndexMode::clip, -1),
        b.gather(m, idx(j, 5), cols, {2, 1}, IndexMode::fill_or_drop, fill),
        b.gather(v, idx(i, 7), one, {1}, IndexMode::clip, -1),
    };
    // Indices that a scatter reads too (an embedding and its gradient): both fold.
    const ValueId shared = idx(i, 10);
    outs.push_back(b.gather(v, shared, one, {1}, IndexMode::clip, -1));
    outs.push_back(b.scatter(ScatterOp::add, v, shared, outs.back(), one, IndexMode::fill_or_drop));
    // Indices that a float conversion reads too: the normalisation stays for it, and the
    // gather keeps reading it.
    const ValueId kept = idx(i, 10);
    outs.push_back(b.gather(v, kept, one, {1}, IndexMode::clip, -1));
    outs.push_back(b.convert(kept, DType::F32));
    b.set_outputs(outs);
    const Graph g = b.build();
    CompileOptions no_fuse;
    no_fuse.fuse = false;
    auto exe = compile(g, no_fuse);
    const Graph& s = exe->graph();
    for (size_t k : {0, 1, 2, 3, 4, 6, 7}) CHECK(wraps(s, s.outputs()[k]));
    CHECK(!wraps(s, s.outputs()[5]) && !wraps(s, s.outputs()[8]));
    const std::string text = s.to_text();
    CHECK(text.find("mode=0, wrap_negative=1}") != std::string::npos);
    CHECK(parse_graph(text).to_text() == text);

    std::vector<float> m_values(10);
    for (size_t k = 0; k < 10; ++k) m_values[k] = float(k) + 0.5f;
    auto indices = [&](const std::vector<int64_t>& raw) {
      return convert(from(raw, {int64_t(raw.size())}, DType::I64), t);
    };
    const std::vector<Array> args{from(iota_f32(10), {10}, DType::F32), from(m_values, {2, 5}, DType::F32),
                                  indices(raw_i), indices(raw_j)};
    CompileOptions plain;
    plain.simplify = false;
    plain.fuse = false;
    const std::vector<Array> got = exe->run(args), want = compile(g, plain)->run(args);
    for (size_t k = 0; k < got.size(); ++k) CHECK(host<float>(got[k]) == host<float>(want[k]));
    // x[i] clamped, as numpy counts from the end and jax clamps: 127 -> 9, -11 -> -1 -> 0.
    CHECK((host<float>(got[0]) == std::vector<float>{0, 3, 9, 9, 9, 9, 5, 0, 0, 0, 4, 8}));
    CHECK((host<float>(got[1]) == std::vector<float>{0, 3, 9, -7, -7, 9, 5, 0, -7, -7, 4, 8}));
  }
}

// x[i] of a vector takes AVX-512 gathers for 4- and 8-byte elements with int32 indices
// where the CPU has them, the scalar loops otherwise: both against a loop written here, on
// lengths that leave rows over from the 16-row blocks, with and without the negative-index
// wrap, clamped and filled.
template <typename T>
void check_vector_gather(DType dtype, int64_t n) {
  std::vector<T> values(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) values[size_t(k)] = T(k * 3 + 1);
  std::vector<int64_t> raw;
  for (int64_t r = 0; r < 53; ++r) raw.push_back((r * 7919) % (4 * n + 7) - 2 * n - 3);
  const T filler = T(-9);
  for (bool wrap : {false, true}) {
    for (IndexMode mode : {IndexMode::clip, IndexMode::fill_or_drop}) {
      std::vector<T> want;
      for (int64_t v : raw) {
        if (wrap && v < 0) v += n;
        const bool in = v >= 0 && v < n;
        want.push_back(in || mode == IndexMode::clip ? values[size_t(std::clamp<int64_t>(v, 0, n - 1))] : filler);
      }
      for (DType t : {DType::I32, DType::I64}) {
        GraphBuilder b;
        ValueId x = b.parameter({n}, dtype);
        ValueId i = b.parameter({int64_t(raw.size())}, t);
        ValueId fill = b.scalar(dtype, Scalar::of_float(double(filler)));
        const GatherDims one{{}, {0}, {0}, {}, {}};
        b.set_outputs({b.gather(x, column(b, wrap ? normalised(b, i, n) : i), one, {1}, mode,
                                mode == IndexMode::clip ? -1 : fill)});
        auto exe = compile(b.build());
        CHECK(wraps(exe->graph(), exe->graph().outputs()[0]) == wrap);
        const Array got = exe->run({from(values, {n}, dtype), convert(from(raw, {int64_t(raw.size())}, DType::I64), t)})[0];
        CHECK(host<T>(got) == want);
      }
    }
  }
}

void test_vector_gather_paths() {
  for (int64_t n : {1, 37, 1000}) {
    check_vector_gather<float>(DType::F32, n);
    check_vector_gather<double>(DType::F64, n);
    check_vector_gather<int8_t>(DType::I8, std::min<int64_t>(n, 37));
  }
}

// Scatters of every kind at jnp-normalised indices (v.at[i] clamped and dropped: the vector
// loop; m.at[i] rows: the row loop; m.at[i, j] and m.at[:, j]: the general loop) read the
// raw indices with wrap_negative set, and give the unsimplified graph's values bit for bit
// on negative, in-range and out-of-range indices, duplicates (9 and -1 are one element)
// applied in the same order. A normalisation that a gather reads too (an embedding and its
// gradient) folds into both; one by another size than the operand dim's, or one that
// another op reads too, stays as it is.
void test_simplify_folds_index_normalisation_into_scatter() {
  const std::vector<int64_t> raw_i{0, 3, 9, 10, 127, -1, -5, -10, -11, -128, 4, -2};
  const std::vector<int64_t> raw_j{1, -1, 2, -3, 5, -5, -6, 4, 0, 6, -128, 127};
  for (ScatterOp op : {ScatterOp::set, ScatterOp::add, ScatterOp::mul, ScatterOp::min, ScatterOp::max}) {
    for (DType t : {DType::I32, DType::I64, DType::I8}) {
      GraphBuilder b;
      ValueId v = b.parameter({10}, DType::F32);
      ValueId m = b.parameter({2, 5}, DType::F32);
      ValueId i = b.parameter({12}, t);
      ValueId j = b.parameter({12}, t);
      ValueId u = b.parameter({12}, DType::F32);
      ValueId rows = b.parameter({12, 5}, DType::F32);
      ValueId cols = b.parameter({2, 12}, DType::F32);
      const DType index = t == DType::I8 ? DType::I32 : t;
      auto idx = [&](ValueId k, int64_t n) { return column(b, b.convert(normalised(b, k, n), index)); };
      const GatherDims one{{}, {0}, {0}, {}, {}}, two{{}, {0, 1}, {0, 1}, {}, {}};
      const GatherDims by_cols{{0}, {1}, {1}, {}, {}};
      std::vector<ValueId> outs{
          b.scatter(op, v, idx(i, 10), u, one, IndexMode::clip),
          b.scatter(op, v, idx(i, 10), u, one, IndexMode::fill_or_drop),
          b.scatter(op, m, idx(i, 2), rows, kRows, IndexMode::clip),
          b.scatter(op, m, b.concatenate({idx(i, 2), idx(j, 5)}, 1), u, two, IndexMode::fill_or_drop),
          b.scatter(op, m, idx(j, 5), cols, by_cols, IndexMode::fill_or_drop),
          b.scatter(op, v, idx(i, 7), u, one, IndexMode::clip),
      };
      const ValueId shared = idx(i, 10);
      outs.push_back(b.gather(v, shared, one, {1}, IndexMode::clip, -1));
      outs.push_back(b.scatter(op, v, shared, outs.back(), one, IndexMode::fill_or_drop));
      const ValueId kept = idx(i, 10);
      outs.push_back(b.scatter(op, v, kept, u, one, IndexMode::fill_or_drop));
      outs.push_back(b.convert(kept, DType::F32));
      b.set_outputs(outs);
      const Graph g = b.build();
      CompileOptions no_fuse;
      no_fuse.fuse = false;
      auto exe = compile(g, no_fuse);
      const Graph& s = exe->graph();
      for (size_t k : {0, 1, 2, 3, 4, 6, 7}) CHECK(wraps(s, s.outputs()[k]));
      CHECK(!wraps(s, s.outputs()[5]) && !wraps(s, s.outputs()[8]));
      const std::string text = s.to_text();
      CHECK(text.find("mode=1, wrap_negative=1}") != std::string::npos);
      CHECK(parse_graph(text).to_text() == text);

      auto values = [](int64_t n, float scale) {
        std::vector<float> out(static_cast<size_t>(n));
        for (int64_t k = 0; k < n; ++k) out[size_t(k)] = (float(k % 7) - 2.75f) * scale;
        return out;
      };
      auto indices = [&](const std::vector<int64_t>& raw) {
        return convert(from(raw, {int64_t(raw.size())}, DType::I64), t);
      };
      const std::vector<Array> args{from(values(10, 1.0f), {10}, DType::F32), from(values(10, 0.5f), {2, 5}, DType::F32),
                                    indices(raw_i), indices(raw_j), from(values(12, 1.3f), {12}, DType::F32),
                                    from(values(60, 0.7f), {12, 5}, DType::F32),
                                    from(values(24, 1.1f), {2, 12}, DType::F32)};
      CompileOptions plain;
      plain.simplify = false;
      plain.fuse = false;
      const std::vector<Array> got = exe->run(args), want = compile(g, plain)->run(args);
      for (size_t k = 0; k < got.size(); ++k) CHECK(host<float>(got[k]) == host<float>(want[k]));
    }
  }
  // v.at[i].add(u) dropping out-of-range rows, as jax 0.10.2 gives it: -1 and 9 both add
  // to v[9], -10 to v[0]; 10, 127, -11 and -128 drop.
  GraphBuilder b;
  ValueId v = b.parameter({10}, DType::F32);
  ValueId i = b.parameter({12}, DType::I32);
  ValueId u = b.parameter({12}, DType::F32);
  b.set_outputs({b.scatter(ScatterOp::add, v, column(b, normalised(b, i, 10)), u,
                           GatherDims{{}, {0}, {0}, {}, {}}, IndexMode::fill_or_drop)});
  auto exe = compile(b.build());
  CHECK(wraps(exe->graph(), exe->graph().outputs()[0]));
  const std::vector<float> ones(12, 1.0f);
  const std::vector<Array> got = exe->run({from(std::vector<float>(10, 0.0f), {10}, DType::F32),
                                           convert(from(raw_i, {12}, DType::I64), DType::I32),
                                           from(ones, {12}, DType::F32)});
  CHECK((host<float>(got[0]) == std::vector<float>{2, 0, 0, 1, 1, 1, 0, 0, 1, 2}));

  // Many int32 updates into a small vector (the partial-sums loop) and float ones into a
  // large vector (the unrolled loop), clamped and dropped: folded as unfolded.
  for (int64_t n : {100, 5000}) {
    const int64_t rows = 20000;
    for (DType dtype : {DType::I32, DType::F32}) {
      GraphBuilder big;
      ValueId x = big.parameter({n}, dtype);
      ValueId k = big.parameter({rows}, DType::I32);
      ValueId upd = big.parameter({rows}, dtype);
      const GatherDims one{{}, {0}, {0}, {}, {}};
      big.set_outputs({big.scatter(ScatterOp::add, x, column(big, normalised(big, k, n)), upd, one, IndexMode::clip),
                       big.scatter(ScatterOp::add, x, column(big, normalised(big, k, n)), upd, one,
                                   IndexMode::fill_or_drop)});
      const Graph g = big.build();
      auto folded = compile(g);
      CHECK(wraps(folded->graph(), folded->graph().outputs()[0]) && wraps(folded->graph(), folded->graph().outputs()[1]));
      CompileOptions plain;
      plain.simplify = false;
      std::vector<int64_t> raw(static_cast<size_t>(rows));
      std::vector<double> values(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        raw[size_t(r)] = (r * 7919) % (3 * n + 5) - 2 * n;
        values[size_t(r)] = double(r % 13) * 0.37 - 2.0;
      }
      const std::vector<Array> args{convert(from(std::vector<double>(size_t(n), 0.5), {n}, DType::F64), dtype),
                                    convert(from(raw, {rows}, DType::I64), DType::I32),
                                    convert(from(values, {rows}, DType::F64), dtype)};
      const std::vector<Array> got_big = folded->run(args), want = compile(g, plain)->run(args);
      for (size_t o = 0; o < 2; ++o) {
        if (dtype == DType::I32) CHECK(host<int32_t>(got_big[o]) == host<int32_t>(want[o]));
        else CHECK(host<float>(got_big[o]) == host<float>(want[o]));
      }
    }
  }
}

}  // namespace

int main() {
  const std::vector<Test> tests = {
      {"gather_rows_clip_and_fill", test_gather_rows_clip_and_fill},
      {"gather_of_a_strided_view_with_wide_indices", test_gather_of_a_strided_view_with_wide_indices},
      {"scatter_ops_accumulate_duplicates_in_order", test_scatter_ops_accumulate_duplicates_in_order},
      {"validation", test_validation},
      {"dynamic_slices_clamp", test_dynamic_slices_clamp},
      {"graph_text_round_trip", test_graph_text_round_trip},
      {"jitted_updates_reuse_a_dead_buffer", test_jitted_updates_reuse_a_dead_buffer},
      {"simplify_folds_index_normalisation_into_gather", test_simplify_folds_index_normalisation_into_gather},
      {"vector_gather_paths", test_vector_gather_paths},
      {"simplify_folds_index_normalisation_into_scatter", test_simplify_folds_index_normalisation_into_scatter},
  };
  return run_tests("gather_scatter", tests);
}
