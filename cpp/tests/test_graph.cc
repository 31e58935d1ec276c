// Tests of the graph IR and jit: builder validation, the text form round trip, each pass's
// effect, fused results against the eager ops, a 100,000-node chain, the memory peak of a
// jitted chain, in-place reuse, errors inside a graph, and while_loop regions (a 100,000-node
// body, an error inside a loop, 200-deep nesting).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ops/dot.h"
#include "ops/elementwise.h"
#include "ops/layout.h"
#include "ops/reductions.h"
#include "ops/structural.h"
#include "runtime/fault_injection.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"
#include "test_harness.h"
#include "tinyxla/tinyxla.h"

using namespace tinyxla;
using namespace tinyxla::testing;

namespace {

Array random_f32(const Shape& shape, unsigned seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(size_t(num_elements(shape)));
  for (float& x : v) x = dist(rng);
  return Array::from_host(v.data(), shape, DType::F32, 0);
}

// Values of two arrays as doubles (any real dtype).
std::vector<double> as_doubles(const Array& a) {
  Array f = convert(a, DType::F64);
  return host<double>(f);
}

void check_close(const Array& got, const Array& want, double rtol, double atol = 1e-6) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    throw Failure{"type " + type_str({got.shape(), got.dtype()}) + " != " +
                  type_str({want.shape(), want.dtype()})};
  std::vector<double> g = as_doubles(got), w = as_doubles(want);
  for (size_t i = 0; i < g.size(); ++i) {
    bool both_nan = std::isnan(g[i]) && std::isnan(w[i]);
    if (!both_nan && g[i] != w[i] && !(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i])))
      throw Failure{"element " + std::to_string(i) + ": " + std::to_string(g[i]) + " != " +
                    std::to_string(w[i])};
  }
}

// Evaluates a graph with the eager ops: the oracle for compiled results.
std::vector<Array> eval_eager(const Graph& g, const std::vector<Array>& args) {
  std::vector<Array> vals(size_t(g.num_values()));
  for (const Node& n : g.nodes()) {
    auto in = [&](size_t i) { return vals[size_t(n.inputs[i])]; };
    std::vector<Array> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(in(i));
    const ValueType& t = g.type(n.first_result);
    Array r;
    switch (n.kind) {
      case OpKind::parameter: r = args[size_t(n.attr<ops::ParameterAttrs>().index)]; break;
      case OpKind::constant: r = n.constant; break;
      case OpKind::unary: r = unary(n.attr<ops::UnaryAttrs>().op, in(0)); break;
      case OpKind::binary: r = binary(n.attr<ops::BinaryAttrs>().op, in(0), in(1)); break;
      case OpKind::select_n: r = select_n(in(0), std::vector<Array>(ins.begin() + 1, ins.end())); break;
      case OpKind::clamp: r = clamp(in(0), in(1), in(2)); break;
      case OpKind::convert: r = convert(in(0), t.dtype); break;
      case OpKind::bitcast_convert: r = bitcast_convert(in(0), t.dtype); break;
      case OpKind::iota: r = iota(t.dtype, t.shape, n.attr<ops::IotaAttrs>().dimension, 0); break;
      case OpKind::reduce: r = reduce(n.attr<ops::ReduceAttrs>().op, in(0), n.attr<ops::ReduceAttrs>().axes); break;
      case OpKind::argmax: r = argreduce(true, in(0), n.attr<ops::ArgReduceAttrs>().axis, t.dtype); break;
      case OpKind::argmin: r = argreduce(false, in(0), n.attr<ops::ArgReduceAttrs>().axis, t.dtype); break;
      case OpKind::reshape: r = reshape(in(0), t.shape); break;
      case OpKind::transpose: r = transpose(in(0), n.attr<ops::TransposeAttrs>().perm); break;
      case OpKind::broadcast_in_dim: r = broadcast_in_dim(in(0), t.shape, n.attr<ops::BroadcastInDimAttrs>().dims); break;
      case OpKind::slice: {
        const auto& a = n.attr<ops::SliceAttrs>();
        r = slice(in(0), a.start, a.limit, a.strides);
        break;
      }
      case OpKind::pad: {
        const auto& a = n.attr<ops::PadAttrs>();
        r = pad(in(0), in(1), a.low, a.high, a.interior);
        break;
      }
      case OpKind::concatenate: r = concatenate(ins, n.attr<ops::ConcatenateAttrs>().dimension); break;
      case OpKind::rev: r = rev(in(0), n.attr<ops::RevAttrs>().dims); break;
      case OpKind::dot_general: {
        const auto& a = n.attr<ops::DotGeneralAttrs>();
        r = dot_general(in(0), in(1), a.dims, a.preferred);
        break;
      }
      case OpKind::fused: {
        std::vector<Array> outs = eval_eager(*n.body, ins);
        for (size_t k = 0; k < outs.size(); ++k) vals[size_t(n.first_result) + k] = outs[k];
        continue;
      }
    }
    vals[size_t(n.first_result)] = r;
  }
  std::vector<Array> outs;
  for (ValueId v : g.outputs()) outs.push_back(vals[size_t(v)]);
  return outs;
}

int count_kind(const Graph& g, OpKind kind) {
  int c = 0;
  for (const Node& n : g.nodes()) c += n.kind == kind;
  return c;
}

CompileOptions unoptimised() {
  CompileOptions o;
  o.simplify = false;
  o.fuse = false;
  return o;
}

// Compiles `g` optimised and not, runs both and the eager oracle, and compares.
std::shared_ptr<Executable> check_against_eager(const Graph& g, const std::vector<Array>& args,
                                                double rtol, double atol = 1e-6) {
  auto exe = compile(g);
  std::vector<Array> want = eval_eager(g, args);
  std::vector<Array> got = exe->run(args);
  std::vector<Array> plain = compile(g, unoptimised())->run(args);
  for (size_t k = 0; k < want.size(); ++k) {
    check_close(got[k], want[k], rtol, atol);
    check_close(plain[k], want[k], rtol, atol);
  }
  return exe;
}

// f(x) = tanh(x*2+1)*0.5 + exp(-x*x) - sin(x), as jax stages it.
ValueId chain_f(GraphBuilder& b, ValueId x) {
  auto c = [&](float v) { return b.scalar(DType::F32, Scalar::of_float(v)); };
  ValueId t = b.binary(BinaryOp::add, b.binary(BinaryOp::mul, x, c(2)), c(1));
  t = b.binary(BinaryOp::mul, b.unary(UnaryOp::tanh, t), c(0.5f));
  ValueId e = b.unary(UnaryOp::exp, b.unary(UnaryOp::neg, b.binary(BinaryOp::mul, x, x)));
  return b.binary(BinaryOp::sub, b.binary(BinaryOp::add, t, e), b.unary(UnaryOp::sin, x));
}

// norm(X) = (X - X.mean(0)) / X.std(0), as jnp stages it.
ValueId norm(GraphBuilder& b, ValueId x, int64_t rows, int64_t cols) {
  auto c = [&](float v) { return b.scalar(DType::F32, Scalar::of_float(v)); };
  ValueId mean = b.binary(BinaryOp::div, b.reduce(ReduceOp::sum, x, {0}), c(float(rows)));
  ValueId bm = b.broadcast_in_dim(mean, {1, cols}, {1});
  ValueId centered = b.binary(BinaryOp::sub, x, bm);
  ValueId var = b.binary(BinaryOp::div,
                         b.reduce(ReduceOp::sum, b.unary(UnaryOp::square, centered), {0}),
                         c(float(rows)));
  ValueId std = b.unary(UnaryOp::sqrt, var);
  ValueId bs = b.broadcast_in_dim(std, {1, cols}, {1});
  return b.binary(BinaryOp::div, b.binary(BinaryOp::sub, x, bm), bs);
}

// ---- tests ----

void test_builder_validates_like_eager() {
  GraphBuilder b;
  ValueId x = b.parameter({2, 3}, DType::F32);
  ValueId i = b.parameter({3}, DType::I32);
  CHECK(b.type(b.binary(BinaryOp::add, x, b.parameter({3}, DType::F32))).shape == Shape({2, 3}));
  CHECK(b.type(b.binary(BinaryOp::lt, x, x)).dtype == DType::Bool);
  CHECK(b.type(b.unary(UnaryOp::isnan, x)).dtype == DType::Bool);
  CHECK_THROWS(b.binary(BinaryOp::add, x, i), "[add] lax.add requires arguments to have the same dtypes");
  CHECK_THROWS(b.reshape(x, {4}), "[reshape] cannot reshape array of shape (2, 3)");
  CHECK_THROWS(b.reduce(ReduceOp::sum, x, {2}), "contains out-of-bounds indices");
  CHECK_THROWS(b.transpose(x, {0, 0}), "[transpose]");
  CHECK_THROWS(b.unary(UnaryOp::exp, 99), "undefined");
  // Eager and graph give the same message for the same mistake.
  std::string eager;
  try {
    binary(BinaryOp::add, random_f32({2, 3}, 1), random_f32({4}, 1));
  } catch (const Error& e) {
    eager = e.what();
  }
  CHECK_THROWS(b.binary(BinaryOp::add, x, b.parameter({4}, DType::F32)), eager);
  ValueId r = b.reduce(ReduceOp::max, x, {-1});
  CHECK(b.type(r).shape == Shape({2}));
  CHECK(b.graph().node(b.graph().defining_node(r)).attr<ops::ReduceAttrs>().axes == std::vector<int64_t>({1}));
  CHECK(b.convert(x, DType::F32) == x);
}

// A graph with every node kind and awkward constants.
Graph all_kinds_graph() {
  GraphBuilder b;
  ValueId x = b.parameter({2, 3}, DType::F32);
  ValueId y = b.parameter({3, 4}, DType::F32);
  float specials[] = {-0.0f, NAN, INFINITY, -INFINITY, 1e-45f, 0.1f};
  ValueId c = b.constant(specials, {6}, DType::F32);
  std::vector<double> big(40);
  for (size_t k = 0; k < big.size(); ++k) big[k] = 1.0 / double(k + 3);
  ValueId cbig = b.constant(big.data(), {40}, DType::F64);
  complex64 z[2] = {{1, 2}, {-0.5f, 3}};
  ValueId cz = b.constant(z, {2}, DType::C64);
  uint64_t u = ~0ull;
  ValueId cu = b.constant(&u, {}, DType::U64);
  bool t = true;
  ValueId cb = b.constant(&t, {}, DType::Bool);
  ValueId h = b.convert(c, DType::F16);
  ValueId bf = b.convert(c, DType::BF16);
  ValueId s = b.select_n(b.binary(BinaryOp::gt, x, b.scalar(DType::F32, Scalar::of_float(0))),
                         {x, b.unary(UnaryOp::neg, x)});
  ValueId cl = b.clamp(b.scalar(DType::F32, Scalar::of_float(-1)), s,
                       b.scalar(DType::F32, Scalar::of_float(1)));
  ValueId bc = b.bitcast_convert(cl, DType::I32);
  ValueId io = b.iota(DType::I32, {2, 3}, 1);
  ValueId am = b.argreduce(true, x, 1, DType::I32);
  ValueId amin = b.argreduce(false, x, 0, DType::I64);
  ValueId rs = b.reshape(x, {3, 2});
  ValueId tr = b.transpose(x, {1, 0});
  ValueId br = b.broadcast_in_dim(x, {4, 2, 3}, {1, 2});
  ValueId sl = b.slice(x, {0, 1}, {2, 3}, {1, 2});
  ValueId pd = b.pad(x, b.scalar(DType::F32, Scalar::of_float(0)), {1, 0}, {0, 2}, {1, 0});
  ValueId ct = b.concatenate({x, x}, 0);
  ValueId rv = b.rev(x, {0});
  ValueId dg = b.dot_general(x, y, DotDims{{1}, {0}, {}, {}});
  ValueId dg64 = b.dot_general(x, y, DotDims{{1}, {0}, {}, {}}, DType::F64);
  ValueId rd = b.reduce(ReduceOp::and_, b.binary(BinaryOp::and_, io, io), {0, 1});
  b.set_outputs({c, cbig, cz, cu, cb, h, bf, bc, am, amin, rs, tr, br, sl, pd, ct, rv, dg, dg64, rd});
  return b.build();
}

void test_text_round_trip() {
  Graph g = all_kinds_graph();
  g.verify();
  std::string text = g.to_text();
  Graph back = parse_graph(text);
  CHECK(back.identical_to(g));
  CHECK(back.to_text() == text);
  CHECK(text.find("%0 = parameter(0) : f32[2,3]") != std::string::npos);
  CHECK(text.find("dot_general(%0, %1) {lhs_contracting=[1], rhs_contracting=[0], lhs_batch=[], "
                  "rhs_batch=[]} : f64[2,4]") != std::string::npos);
  CHECK(text.find("{value=[-0, nan, inf, -inf, 1.40129846e-45, 0.100000001]}") != std::string::npos);
  CHECK(text.find("{hex=0x") != std::string::npos);  // the f64[40] and complex constants
  // Fused graphs too.
  GraphBuilder b;
  ValueId x = b.parameter({1000}, DType::F32);
  b.set_outputs({chain_f(b, x), b.reduce(ReduceOp::sum, b.binary(BinaryOp::mul, x, x), {0})});
  auto exe = compile(b.build());
  Graph fused = parse_graph(exe->text());
  CHECK(fused.to_text() == exe->text());
  CHECK(fused.identical_to(exe->graph()));
  CHECK(exe->text().find("fused(") != std::string::npos);
  // Malformed text names its line.
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%1 = exp(%7) : f32[3]\nreturn %1"),
               "line 2: undefined value");
  CHECK_THROWS(parse_graph("%0 = parameter(0) : f32[3]\n%1 = exp(%0) : f32[4]\nreturn %1"),
               "differs from the inferred f32[3]");
  CHECK_THROWS(parse_graph("%0 = frobnicate() : f32[3]\nreturn %0"), "unknown op");
}

// Each output of `got` equals `want`'s bit for bit (-0.0 and NaN payloads included).
void check_same_bits(const std::vector<Array>& got, const std::vector<Array>& want) {
  CHECK(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    CHECK(got[k].nbytes() == want[k].nbytes());
    std::vector<char> gb(got[k].nbytes()), wb(want[k].nbytes());
    got[k].copy_to_host(gb.data());
    want[k].copy_to_host(wb.data());
    if (std::memcmp(gb.data(), wb.data(), gb.size()) != 0)
      throw Failure{"output " + std::to_string(k) + " differs from the eager graph"};
  }
}

void test_simplify() {
  GraphBuilder b;
  ValueId x = b.parameter({8}, DType::F32);
  ValueId i = b.parameter({8}, DType::I32);
  auto f = [&](float v) { return b.scalar(DType::F32, Scalar::of_float(v)); };
  ValueId a = b.binary(BinaryOp::mul, x, f(1));                     // -> x
  ValueId p0 = b.binary(BinaryOp::add, a, f(0));                    // stays: -0.0 + 0 = +0
  ValueId m0 = b.binary(BinaryOp::add, x, f(-0.0f));                // -> x
  ValueId s0 = b.binary(BinaryOp::sub, x, f(0));                    // -> x
  ValueId ii = b.binary(BinaryOp::add, i, b.scalar(DType::I32, Scalar::of_int(0)));  // -> i
  ValueId folded = b.binary(BinaryOp::mul, b.binary(BinaryOp::add, f(2), f(3)), x);  // 5 * x
  ValueId rs = b.reshape(b.reshape(x, {2, 4}), {4, 2});
  ValueId tt = b.transpose(b.transpose(rs, {1, 0}), {1, 0});        // -> rs
  ValueId cv = b.convert(b.convert(b.convert(x, DType::F16), DType::F32), DType::F64);
  ValueId lossy = b.convert(b.convert(x, DType::I32), DType::F32);  // kept
  ValueId nn = b.unary(UnaryOp::neg, b.unary(UnaryOp::neg, x));     // -> x
  ValueId big = b.binary(BinaryOp::add, x, b.constant(full({8}, DType::F32, Scalar::of_float(3), 0)));
  b.set_outputs({a, p0, m0, s0, ii, folded, tt, cv, lossy, nn, big});
  Graph g = b.build();
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(g, no_fuse);
  const Graph& s = exe->graph();
  const auto& outs = s.outputs();
  const ValueId px = s.parameters()[0], pi = s.parameters()[1];
  CHECK(outs[0] == px && outs[2] == px && outs[3] == px && outs[4] == pi && outs[9] == px);
  CHECK(outs[1] != px);
  CHECK(s.node(s.defining_node(outs[6])).kind == OpKind::reshape);
  CHECK(s.node(s.defining_node(s.node(s.defining_node(outs[6])).inputs[0])).kind == OpKind::parameter);
  const Node& cvn = s.node(s.defining_node(outs[7]));  // f16 -> f64 directly
  CHECK(cvn.kind == OpKind::convert && s.type(cvn.inputs[0]).dtype == DType::F16);
  const Node& lossy_n = s.node(s.defining_node(outs[8]));
  CHECK(s.type(lossy_n.inputs[0]).dtype == DType::I32);
  const Node& bigc = s.node(s.defining_node(s.node(s.defining_node(outs[10])).inputs[1]));
  CHECK(bigc.kind == OpKind::broadcast_in_dim);  // a broadcast constant is its scalar, broadcast
  const Node& fo = s.node(s.defining_node(outs[5]));
  CHECK(fo.kind == OpKind::binary);
  float five = 0;
  s.node(s.defining_node(fo.inputs[0])).constant.copy_to_host(&five);
  CHECK(five == 5);
  // Same values as the eager graph, -0.0 included.
  // (No denormals: x*1 -> x keeps them where the FTZ kernels flush them, as in XLA.)
  float xs[8] = {-0.0f, 0.0f, 1.5f, -2, NAN, INFINITY, 3e-30f, 7};
  int32_t is[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<Array> args{Array::from_host(xs, {8}, DType::F32, 0), Array::from_host(is, {8}, DType::I32, 0)};
  std::vector<Array> got = exe->run(args), want = eval_eager(g, args);
  check_same_bits(got, want);
}

void test_simplify_through_broadcasts() {
  GraphBuilder b;
  ValueId x = b.parameter({4, 3}, DType::F32);
  ValueId row = b.reduce(ReduceOp::sum, x, {0});  // f32[3]
  auto f = [&](float v) { return b.scalar(DType::F32, Scalar::of_float(v)); };
  ValueId ones = b.broadcast_in_dim(f(1), {4, 3}, {});
  ValueId neg_ones = b.unary(UnaryOp::neg, ones);                        // -> broadcast(-1)
  ValueId pick = b.select_n(b.broadcast_in_dim(b.scalar(DType::Bool, Scalar::of_bool(true)), {4, 3}, {}),
                            {x, neg_ones});                              // -> neg_ones
  ValueId mean = b.binary(BinaryOp::div, row, f(4));
  ValueId mean2 = b.binary(BinaryOp::div, b.broadcast_in_dim(row, {4, 3}, {1}), f(4));  // sunk
  ValueId centered = b.binary(BinaryOp::sub, x, b.broadcast_in_dim(mean, {4, 3}, {1}));
  b.set_outputs({pick, mean2, centered});
  Graph g = b.build();
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(g, no_fuse);
  const Graph& s = exe->graph();
  const Node& p = s.node(s.defining_node(s.outputs()[0]));
  CHECK(p.kind == OpKind::broadcast_in_dim);
  float v = 0;
  s.node(s.defining_node(p.inputs[0])).constant.copy_to_host(&v);
  CHECK(v == -1);
  // The sunk division is the one the centring uses: one node in all.
  const Node& m2 = s.node(s.defining_node(s.outputs()[1]));
  CHECK(m2.kind == OpKind::broadcast_in_dim);
  CHECK(count_kind(s, OpKind::binary) == 2);  // the division (a product by 1/4) and the sub
  float xs[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12.5f};
  std::vector<Array> args{Array::from_host(xs, {4, 3}, DType::F32, 0)};
  std::vector<Array> got = exe->run(args), want = eval_eager(g, args);
  for (size_t k = 0; k < got.size(); ++k) check_close(got[k], want[k], 0, 0);
}

// XLA's simplifier divides by a broadcast or a constant as the product with its reciprocal,
// and JAX's results are its: the compiled graph does too, and so does an eager division whose
// divisor broadcasts (an explicitly broadcast operand, as eval_eager's views, divides).
void test_division_by_broadcast() {
  GraphBuilder b;
  ValueId x = b.parameter({4, 5}, DType::F32);
  ValueId y = b.parameter({4}, DType::F32);
  ValueId by_row = b.binary(BinaryOp::div, x, b.broadcast_in_dim(y, {4, 5}, {0}));
  ValueId by_three = b.binary(BinaryOp::div, x, b.scalar(DType::F32, Scalar::of_float(3)));
  ValueId by_itself = b.binary(BinaryOp::div, x, x);  // no broadcast: a division
  b.set_outputs({by_row, by_three, by_itself});
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(b.build(), no_fuse);
  const Graph& s = exe->graph();
  auto op_of = [&](ValueId v) { return s.node(s.defining_node(v)).attr<ops::BinaryAttrs>().op; };
  CHECK(op_of(s.outputs()[0]) == BinaryOp::mul && op_of(s.outputs()[1]) == BinaryOp::mul);
  CHECK(op_of(s.outputs()[2]) == BinaryOp::div);
  const Node& third = s.node(s.defining_node(s.node(s.defining_node(s.outputs()[1])).inputs[1]));
  CHECK(third.kind == OpKind::constant);  // 1/3, folded
  float xs[20], ys[4] = {3, -7, 0.1f, 1e30f};
  for (int k = 0; k < 20; ++k) xs[k] = float(k) - 9.5f;
  const Array xa = Array::from_host(xs, {4, 5}, DType::F32, 0), ya = Array::from_host(ys, {4}, DType::F32, 0);
  std::vector<Array> got = exe->run({xa, ya});
  const Array eager_row = binary(BinaryOp::div, xa, reshape(ya, {4, 1}));
  const Array eager_three = binary(BinaryOp::div, xa, scalar(DType::F32, Scalar::of_float(3), 0));
  float row[20], three[20], itself[20], erow[20], ethree[20];
  got[0].copy_to_host(row);
  got[1].copy_to_host(three);
  got[2].copy_to_host(itself);
  eager_row.copy_to_host(erow);
  eager_three.copy_to_host(ethree);
  bool reciprocal_differs = false;
  for (int k = 0; k < 20; ++k) {
    const float r = xs[k] * (1.0f / ys[k / 5]), t = xs[k] * (1.0f / 3.0f);
    CHECK(std::memcmp(&row[k], &r, 4) == 0 && std::memcmp(&erow[k], &r, 4) == 0);
    CHECK(std::memcmp(&three[k], &t, 4) == 0 && std::memcmp(&ethree[k], &t, 4) == 0);
    const float q = xs[k] / xs[k];
    CHECK(std::memcmp(&itself[k], &q, 4) == 0 || (q != q && itself[k] != itself[k]));
    reciprocal_differs = reciprocal_differs || r != xs[k] / ys[k / 5] || t != xs[k] / 3.0f;
  }
  CHECK(reciprocal_differs);  // the values tell the two forms apart
}

// XLA's other division rewrites (see passes/simplify.cc): the compiled graph computes
// x / sqrt(y) as x * rsqrt(y) and (x / y) / z as x / (y * z), bit for bit the eager ops of
// those forms; bfloat16 keeps its divisions.
void test_division_rewrites() {
  GraphBuilder b;
  ValueId x = b.parameter({6}, DType::F32), y = b.parameter({6}, DType::F32);
  ValueId z = b.parameter({6}, DType::F32), h = b.parameter({6}, DType::BF16);
  ValueId by_root = b.binary(BinaryOp::div, x, b.unary(UnaryOp::sqrt, y));
  ValueId twice = b.binary(BinaryOp::div, b.binary(BinaryOp::div, x, y), z);
  ValueId half = b.binary(BinaryOp::div, h, b.unary(UnaryOp::sqrt, h));
  b.set_outputs({by_root, twice, half});
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(b.build(), no_fuse);
  const Graph& s = exe->graph();
  const Node& root = s.node(s.defining_node(s.outputs()[0]));
  CHECK(root.attr<ops::BinaryAttrs>().op == BinaryOp::mul);
  CHECK(s.node(s.defining_node(root.inputs[1])).attr<ops::UnaryAttrs>().op == UnaryOp::rsqrt);
  const Node& tw = s.node(s.defining_node(s.outputs()[1]));
  CHECK(tw.attr<ops::BinaryAttrs>().op == BinaryOp::div);
  CHECK(s.node(s.defining_node(tw.inputs[1])).attr<ops::BinaryAttrs>().op == BinaryOp::mul);
  CHECK(s.node(s.defining_node(s.outputs()[2])).attr<ops::BinaryAttrs>().op == BinaryOp::div);
  // Values where both rewritten forms round differently from the divisions.
  float xs[6] = {4.05f, 3.41f, 4.43f, 4.48f, 5.95f, -4.47f};
  float ys[6] = {1.22f, 1.92f, 1.18f, 1.54f, 0.38f, 0.93f};
  float zs[6] = {3.11f, 0.89f, 2.27f, 2.15f, 2.37f, 1.63f};
  const Array xa = Array::from_host(xs, {6}, DType::F32, 0), ya = Array::from_host(ys, {6}, DType::F32, 0);
  const Array za = Array::from_host(zs, {6}, DType::F32, 0);
  const Array ha = convert(ya, DType::BF16);
  std::vector<Array> got = exe->run({xa, ya, za, ha});
  check_same_bits({got[0], got[1], got[2]},
                  {binary(BinaryOp::mul, xa, unary(UnaryOp::rsqrt, ya)),
                   binary(BinaryOp::div, xa, binary(BinaryOp::mul, ya, za)),
                   binary(BinaryOp::div, ha, unary(UnaryOp::sqrt, ha))});
  const std::vector<Array> divided{binary(BinaryOp::div, xa, unary(UnaryOp::sqrt, ya)),
                                   binary(BinaryOp::div, binary(BinaryOp::div, xa, ya), za)};
  for (int k = 0; k < 2; ++k) {
    float a[6], d[6];
    got[size_t(k)].copy_to_host(a);
    divided[size_t(k)].copy_to_host(d);
    CHECK(std::memcmp(a, d, sizeof a) != 0);
  }
}

// A reduce over unit axes only is no reduction: a reshape, bit for bit the eager kernel's
// copy (-0.0 and NaN kept).
void test_simplify_unit_reductions() {
  GraphBuilder b;
  ValueId x = b.parameter({1, 4, 1}, DType::F32);
  ValueId i = b.parameter({4, 1}, DType::I32);
  ValueId sum = b.reduce(ReduceOp::sum, x, {0, 2});
  ValueId mx = b.reduce(ReduceOp::max, x, {2});
  ValueId pr = b.reduce(ReduceOp::prod, x, {0});
  ValueId isum = b.reduce(ReduceOp::sum, i, {1});
  ValueId real = b.reduce(ReduceOp::sum, x, {1});  // over 4 elements: stays
  b.set_outputs({sum, mx, pr, isum, real});
  Graph g = b.build();
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(g, no_fuse);
  const Graph& s = exe->graph();
  CHECK(count_kind(s, OpKind::reduce) == 1);
  auto kind = [&](size_t k) { return s.node(s.defining_node(s.outputs()[k])).kind; };
  CHECK(kind(0) == OpKind::reshape && kind(1) == OpKind::reshape && kind(2) == OpKind::reshape);
  CHECK(kind(3) == OpKind::reshape && kind(4) == OpKind::reduce);
  float xs[4] = {-0.0f, NAN, -INFINITY, 2.5f};
  int32_t is[4] = {-1, 2, INT32_MIN, 7};
  std::vector<Array> args{Array::from_host(xs, {1, 4, 1}, DType::F32, 0),
                          Array::from_host(is, {4, 1}, DType::I32, 0)};
  std::vector<Array> got = exe->run(args), want = eval_eager(g, args);
  check_same_bits(got, want);
  float sums[4] = {1, 1, 1, 1};
  got[0].copy_to_host(sums);
  CHECK(sums[0] == 0 && std::signbit(sums[0]));
}

// A transposed dot read by nothing else becomes the dot with its operands swapped (batch
// dims kept in front); a transpose that is not the swap, or of a dot read twice, stays.
void test_transposed_dot() {
  GraphBuilder b;
  ValueId x = b.parameter({5, 3, 4}, DType::F32), y = b.parameter({5, 3, 6}, DType::F32);
  ValueId m = b.parameter({3, 4}, DType::F32), w = b.parameter({4, 7}, DType::F32);
  ValueId swapped = b.transpose(b.dot_general(x, y, DotDims{{1}, {1}, {0}, {0}}), {0, 2, 1});
  ValueId plain = b.transpose(b.dot_general(m, w, DotDims{{1}, {0}, {}, {}}), {1, 0});
  ValueId twice = b.dot_general(w, w, DotDims{{0}, {0}, {}, {}});  // f32[7,7], read twice
  ValueId kept = b.transpose(twice, {1, 0});
  ValueId other = b.transpose(b.dot_general(x, y, DotDims{{1}, {1}, {0}, {0}}), {2, 1, 0});
  b.set_outputs({swapped, plain, kept, twice, other});
  Graph g = b.build();
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(g, no_fuse);
  const Graph& s = exe->graph();
  const Node& sd = s.node(s.defining_node(s.outputs()[0]));
  CHECK(sd.kind == OpKind::dot_general && sd.inputs[0] == s.parameters()[1]);
  CHECK(sd.attr<ops::DotGeneralAttrs>().dims.lhs_batch == std::vector<int64_t>{0});
  const Node& pd = s.node(s.defining_node(s.outputs()[1]));
  CHECK(pd.kind == OpKind::dot_general && pd.inputs[0] == s.parameters()[3]);
  CHECK(s.node(s.defining_node(s.outputs()[2])).kind == OpKind::transpose);
  CHECK(s.node(s.defining_node(s.outputs()[4])).kind == OpKind::transpose);
  CHECK(count_kind(s, OpKind::transpose) == 2 && count_kind(s, OpKind::dot_general) == 4);
  std::vector<Array> args{random_f32({5, 3, 4}, 1), random_f32({5, 3, 6}, 2),
                          random_f32({3, 4}, 3), random_f32({4, 7}, 4)};
  std::vector<Array> got = exe->run(args), want = eval_eager(g, args);
  for (size_t k = 0; k < got.size(); ++k) check_close(got[k], want[k], 1e-5);
}

void test_cse_and_dce() {
  GraphBuilder b;
  ValueId x = b.parameter({16}, DType::F32);
  ValueId e1 = b.unary(UnaryOp::exp, x), e2 = b.unary(UnaryOp::exp, x);
  ValueId c1 = b.scalar(DType::F32, Scalar::of_float(3)), c2 = b.scalar(DType::F32, Scalar::of_float(3));
  ValueId s = b.binary(BinaryOp::add, b.binary(BinaryOp::mul, e1, c1), b.binary(BinaryOp::mul, e2, c2));
  b.unary(UnaryOp::log, x);  // dead
  b.set_outputs({s});
  CompileOptions no_fuse;
  no_fuse.fuse = false;
  auto exe = compile(b.build(), no_fuse);
  CHECK(count_kind(exe->graph(), OpKind::unary) == 1);
  CHECK(count_kind(exe->graph(), OpKind::constant) == 1);
  CHECK(exe->num_kernels() == 3);  // exp, mul, add
  Array xa = random_f32({16}, 3);
  check_close(exe->run({xa})[0], eval_eager(b.build(), {xa})[0], 1e-6);
}

void test_fusion_counts() {
  {  // an elementwise chain is one kernel
    GraphBuilder b;
    ValueId x = b.parameter({1000}, DType::F32);
    b.set_outputs({chain_f(b, x)});
    auto exe = check_against_eager(b.build(), {random_f32({1000}, 4)}, 1e-6);
    CHECK(exe->num_kernels() == 1);
    CHECK(count_kind(exe->graph(), OpKind::fused) == 1);
  }
  {  // norm: the sum, the variance with its prologue, the output; tiny scalar work apart
    GraphBuilder b;
    ValueId x = b.parameter({1000, 16}, DType::F32);
    b.set_outputs({norm(b, x, 1000, 16)});
    auto exe = check_against_eager(b.build(), {random_f32({1000, 16}, 5)}, 1e-5);
    const Graph& g = exe->graph();
    int big = 0;
    for (const Node& n : g.nodes()) {
      bool reads_x = false;
      for (ValueId v : n.inputs) reads_x = reads_x || num_elements(g.type(v).shape) == 16000;
      big += reads_x;
    }
    CHECK(big == 3);  // three passes over X
  }
  {  // softmax: the max-reduce's producer (one mul) is not recomputed; exp is stored once;
     // the division by the sums is a product with their reciprocals (a small kernel)
    GraphBuilder b;
    ValueId x = b.parameter({64, 100}, DType::F32);
    ValueId logits = b.binary(BinaryOp::mul, x, b.scalar(DType::F32, Scalar::of_float(1.5f)));
    ValueId m = b.broadcast_in_dim(b.reduce(ReduceOp::max, logits, {1}), {64, 1}, {0});
    ValueId e = b.unary(UnaryOp::exp, b.binary(BinaryOp::sub, logits, m));
    ValueId s = b.broadcast_in_dim(b.reduce(ReduceOp::sum, e, {1}), {64, 1}, {0});
    b.set_outputs({b.binary(BinaryOp::div, e, s)});
    auto exe = check_against_eager(b.build(), {random_f32({64, 100}, 6)}, 1e-6);
    CHECK(exe->num_kernels() == 4);
    int muls = 0;
    for (const Node& n : exe->graph().nodes())
      if (n.kind == OpKind::fused)
        for (const Node& k : n.body->nodes()) muls += k.kind == OpKind::binary && k.attr<ops::BinaryAttrs>().op == BinaryOp::mul;
    CHECK(muls == 1);
  }
  {  // a producer needed outside becomes an extra output of the kernel that computes it
    GraphBuilder b;
    ValueId x = b.parameter({256}, DType::F32);
    ValueId e = b.unary(UnaryOp::exp, x);
    ValueId y = b.binary(BinaryOp::add, e, x);
    b.set_outputs({y, e, b.reduce(ReduceOp::sum, y, {0})});
    auto exe = check_against_eager(b.build(), {random_f32({256}, 7)}, 1e-5);
    CHECK(exe->num_kernels() == 1);
    CHECK(exe->graph().node(exe->graph().num_nodes() - 1).num_results == 3);
  }
  {  // sibling consumers of an expensive producer share its kernel; it is never stored
    GraphBuilder b;
    ValueId x = b.parameter({300}, DType::F32);
    ValueId t = b.unary(UnaryOp::exp, x);
    b.set_outputs({b.binary(BinaryOp::add, t, x), b.binary(BinaryOp::mul, t, t)});
    auto exe = check_against_eager(b.build(), {random_f32({300}, 8)}, 1e-6);
    CHECK(exe->num_kernels() == 1);
    CHECK(exe->graph().node(exe->graph().num_nodes() - 1).num_results == 2);
  }
  {  // an MLP's backward ReLU masks: each is stored once, as an extra output of its bias
     // gradient's reduction, although a finished mask kernel recomputes a forward
     // pre-activation whose readers lead back to this mask (not a cycle: a duplicate)
    GraphBuilder b;
    ValueId x = b.parameter({8, 16}, DType::F32), w = b.parameter({16, 16}, DType::F32);
    ValueId c = b.parameter({8, 16}, DType::F32), ct = b.parameter({8, 16}, DType::F32);
    const DotDims mm{{1}, {0}, {}, {}}, mm_t{{1}, {1}, {}, {}};
    ValueId zero = b.scalar(DType::F32, Scalar::of_float(0.f));
    ValueId zeros = b.broadcast_in_dim(zero, {8, 16}, {});
    ValueId pre1 = b.binary(BinaryOp::add, b.dot_general(x, w, mm), c);
    ValueId h1 = b.binary(BinaryOp::max, pre1, zero);
    ValueId pre2 = b.binary(BinaryOp::add, b.dot_general(h1, w, mm), c);
    ValueId s2 = b.select_n(b.binary(BinaryOp::gt, pre2, zero), {zeros, ct});
    ValueId r2 = b.reduce(ReduceOp::sum, s2, {0});
    ValueId s1 = b.select_n(b.binary(BinaryOp::gt, pre1, zero), {zeros, b.dot_general(s2, w, mm_t)});
    ValueId r1 = b.reduce(ReduceOp::sum, s1, {0});
    b.set_outputs({r2, r1, b.dot_general(s1, w, mm_t)});
    auto exe = check_against_eager(b.build(), {random_f32({8, 16}, 11), random_f32({16, 16}, 12),
                                               random_f32({8, 16}, 13), random_f32({8, 16}, 14)},
                                   1e-5);
    int selects = 0;
    for (const Node& n : exe->graph().nodes())
      if (n.kind == OpKind::fused)
        for (const Node& k : n.body->nodes()) selects += k.kind == OpKind::select_n;
    CHECK(selects == 2);
  }
  {  // sibling reductions of one input: one pass
    GraphBuilder b;
    ValueId x = b.parameter({500, 16}, DType::F32);
    b.set_outputs({b.reduce(ReduceOp::sum, x, {0}),
                   b.reduce(ReduceOp::sum, b.binary(BinaryOp::mul, x, x), {0})});
    auto exe = check_against_eager(b.build(), {random_f32({500, 16}, 9)}, 1e-5);
    CHECK(exe->num_kernels() == 1);
  }
}

void test_fused_matches_eager() {
  const Shape shapes[] = {{7}, {1000}, {3, 5, 7}, {300, 40}, {40, 300}, {5, 70000}, {70000, 3}, {2, 3000, 8}};
  unsigned seed = 10;
  for (const Shape& s : shapes) {
    const int nd = int(s.size());
    for (int ax = -1; ax < nd; ++ax) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::prod}) {
        GraphBuilder b;
        ValueId x = b.parameter(s, DType::F32);
        ValueId y = b.parameter(s, DType::F32);
        ValueId v = op == ReduceOp::prod
                        ? b.unary(UnaryOp::exp, b.binary(BinaryOp::mul, x, b.scalar(DType::F32, Scalar::of_float(1e-3f))))
                        : b.binary(BinaryOp::add, b.unary(UnaryOp::tanh, x), b.binary(BinaryOp::mul, x, y));
        std::vector<int64_t> axes;
        if (ax >= 0) axes.push_back(ax);
        else for (int d = 0; d < nd; ++d) axes.push_back(d);
        b.set_outputs({b.reduce(op, v, axes), v});
        // Sums round differently in another order: allow sqrt(count) ulps of the terms.
        int64_t count = 1;
        for (int64_t a : axes) count *= s[size_t(a)];
        try {
          check_against_eager(b.build(), {random_f32(s, seed), random_f32(s, seed + 1)}, 1e-4,
                              1e-6 * 8 * std::sqrt(double(count)));
        } catch (const Failure& f) {
          throw Failure{type_str({s, DType::F32}) + " axis " + std::to_string(ax) + " " +
                        op_name(op) + ": " + f.msg};
        }
        ++seed;
      }
    }
  }
  // Inputs that are views, broadcasts and other dtypes.
  GraphBuilder b;
  ValueId x = b.parameter({64, 32}, DType::F64);
  ValueId r = b.parameter({32}, DType::F64);
  ValueId i = b.parameter({32, 64}, DType::I32);
  ValueId xt = b.transpose(x, {1, 0});
  ValueId v = b.binary(BinaryOp::mul, b.convert(i, DType::F64), xt);
  v = b.binary(BinaryOp::add, v, b.broadcast_in_dim(r, {32, 64}, {0}));
  ValueId w = b.select_n(b.binary(BinaryOp::gt, v, b.scalar(DType::F64, Scalar::of_float(0))),
                         {v, b.unary(UnaryOp::exp, v)});
  ValueId c = b.clamp(b.scalar(DType::F64, Scalar::of_float(-1)), w, b.scalar(DType::F64, Scalar::of_float(3)));
  ValueId ri = b.reduce(ReduceOp::sum, b.convert(c, DType::I32), {0, 1});
  ValueId rr = b.reshape(b.binary(BinaryOp::mul, c, c), {2048});
  b.set_outputs({c, ri, rr, b.reduce(ReduceOp::max, rr, {0})});
  std::vector<int32_t> iv(32 * 64);
  for (size_t k = 0; k < iv.size(); ++k) iv[k] = int32_t(k % 7) - 3;
  Array xa = convert(random_f32({64, 32}, 50), DType::F64), ra = convert(random_f32({32}, 51), DType::F64);
  check_against_eager(b.build(), {xa, ra, Array::from_host(iv.data(), {32, 64}, DType::I32, 0)}, 1e-12);
  // A large transposed operand (copied densely first) and a sliced one (gathered).
  GraphBuilder b2;
  ValueId big = b2.parameter({300, 200}, DType::F32);
  ValueId other = b2.parameter({200, 300}, DType::F32);
  ValueId sl = b2.slice(b2.parameter({400, 300}, DType::F32), {100, 0}, {300, 300}, {1, 1});
  ValueId e = b2.binary(BinaryOp::mul, b2.unary(UnaryOp::exp, b2.transpose(big, {1, 0})), other);
  b2.set_outputs({b2.binary(BinaryOp::sub, e, sl), b2.reduce(ReduceOp::sum, e, {1})});
  check_against_eager(b2.build(), {random_f32({300, 200}, 60), random_f32({200, 300}, 61),
                                   random_f32({400, 300}, 62)}, 1e-5, 1e-4);
}

void test_convert_matches_eager() {
  const double values[] = {0.0, -0.0, 1.5, -2.7, 3e9, -3e9, 1e20, NAN, INFINITY, -INFINITY, 255.9, 65504.0, 1e-40};
  Array src = Array::from_host(values, {13}, DType::F64, 0);
  for (int from = 0; from < kNumDTypes; ++from) {
    Array x = convert(src, DType(from));
    for (int to = 0; to < kNumDTypes; ++to) {
      if (from == to) continue;
      GraphBuilder b;
      ValueId p = b.parameter({13}, DType(from));
      b.set_outputs({b.convert(p, DType(to))});
      Array got = compile(b.build())->run({x})[0];
      Array want = convert(x, DType(to));
      std::vector<char> gb(got.nbytes()), wb(want.nbytes());
      got.copy_to_host(gb.data());
      want.copy_to_host(wb.data());
      if (std::memcmp(gb.data(), wb.data(), gb.size()) != 0) {
        // NaNs may differ in payload only.
        CHECK(is_inexact(DType(to)));
        check_close(is_complex(DType(to)) ? convert(got, real_dtype(DType(to))) : got,
                    is_complex(DType(to)) ? convert(want, real_dtype(DType(to))) : want, 0, 0);
      }
    }
  }
}

void test_long_chain() {
  const int n = 100000;
  GraphBuilder b;
  ValueId x = b.parameter({64}, DType::F32);
  ValueId v = x;
  ValueId one = b.scalar(DType::F32, Scalar::of_float(1));
  for (int k = 0; k < n; ++k) v = k % 2 ? b.binary(BinaryOp::add, v, one) : b.unary(UnaryOp::neg, v);
  b.set_outputs({v});
  Graph g = b.build();
  std::string text = g.to_text();
  Graph back = parse_graph(text);
  CHECK(back.identical_to(g));
  auto exe = compile(g);
  CHECK(exe->num_kernels() == 1);
  std::vector<float> xs(64, 0.25f);
  std::vector<float> got = host<float>(exe->run({Array::from_host(xs.data(), {64}, DType::F32, 0)})[0]);
  // Each (neg, +1) pair maps x to 1 - x: an even number of pairs gives x back.
  CHECK(got[0] == 0.25f && got[63] == 0.25f);
  auto plain = compile(g, unoptimised());
  CHECK(plain->num_kernels() == n);
  got = host<float>(plain->run({Array::from_host(xs.data(), {64}, DType::F32, 0)})[0]);
  CHECK(got[5] == 0.25f);
}

// 20 elementwise ops on 1e6 float32, peak memory within 3 buffers, fused or not.
void test_memory_peak() {
  const int64_t n = 1000000;
  GraphBuilder b;
  ValueId x = b.parameter({n}, DType::F32);
  ValueId v = x;
  for (int k = 0; k < 20; ++k)
    v = k % 3 == 0 ? b.unary(UnaryOp::sin, v)
                   : b.binary(BinaryOp::add, v, b.scalar(DType::F32, Scalar::of_float(float(k))));
  b.set_outputs({v});
  Graph g = b.build();
  Array xa = random_f32({n}, 11);
  const int64_t buffer = n * 4;
  for (bool fused : {true, false}) {
    CompileOptions o;
    o.fuse = fused;
    auto exe = compile(g, o);
    exe->run({xa})[0].wait();  // warm the allocator's cache
    trim_memory_cache();
    const int64_t base = memory_stats().bytes_in_use;
    reset_peak_memory();
    Array out = exe->run({xa})[0];
    out.wait();
    const int64_t peak = memory_stats().peak_bytes_in_use - base + buffer;  // + the input
    if (peak > 3 * buffer + (1 << 20))
      throw Failure{"peak " + std::to_string(peak) + " bytes with fusion " + std::to_string(fused)};
    check_close(out, eval_eager(g, {xa})[0], 1e-5);
  }
}

void test_inplace_respects_holders() {
  GraphBuilder b;
  ValueId x = b.parameter({4096}, DType::F32);
  ValueId e = b.unary(UnaryOp::exp, x);
  ValueId y = b.binary(BinaryOp::mul, b.unary(UnaryOp::sin, e), e);  // sin/mul may reuse e
  b.set_outputs({y});
  CompileOptions o;
  o.fuse = false;
  auto exe = compile(b.build(), o);
  Array xa = random_f32({4096}, 12);
  std::vector<float> before = host<float>(xa);
  Array out = exe->run({xa})[0];
  check_close(out, eval_eager(b.build(), {xa})[0], 1e-6);
  CHECK(host<float>(xa) == before);  // the caller's input is never overwritten
}

void test_errors_surface_at_wait() {
  // A kernel that throws (an injected fault) fails inside the graph: every result gets
  // its error.
  GraphBuilder b;
  ValueId x = b.parameter({8}, DType::F32);
  ValueId s = b.unary(UnaryOp::sin, b.binary(BinaryOp::add, x, x));
  b.set_outputs({s, b.binary(BinaryOp::mul, x, x)});
  auto exe = compile(b.build());
  runtime::arm_fault("fused", 1);
  std::vector<Array> outs = exe->run({random_f32({8}, 1)});
  CHECK_THROWS(outs[0].wait(), "injected fault");
  CHECK_THROWS(outs[1].wait(), "injected fault");
  // A failed argument fails the results.
  GraphBuilder b2;
  ValueId p = b2.parameter({8}, DType::F32);
  b2.set_outputs({b2.unary(UnaryOp::exp, p)});
  auto exe2 = compile(b2.build());
  runtime::arm_fault("unary", 1);
  Array bad = unary(UnaryOp::sin, random_f32({8}, 1));
  CHECK_THROWS(exe2->run({bad})[0].wait(), "[unary] injected fault");
  // Wrong arguments are rejected at the call.
  CHECK_THROWS(exe2->run({}), "[jit] expected 1 arguments, got 0");
  CHECK_THROWS(exe2->run({random_f32({9}, 1)}), "argument 0 has type f32[9]");
  // And the runtime keeps working.
  Array ok = exe2->run({random_f32({8}, 2)})[0];
  ok.wait();
  CHECK(ok.is_ready());
}

void test_outputs_that_are_inputs_or_views() {
  GraphBuilder b;
  ValueId x = b.parameter({3, 4}, DType::F32);
  ValueId t = b.transpose(x, {1, 0});
  ValueId c = b.scalar(DType::F32, Scalar::of_float(2));
  b.set_outputs({x, t, c, t, b.binary(BinaryOp::mul, t, c)});
  auto exe = compile(b.build());
  Array xa = random_f32({3, 4}, 13);
  std::vector<Array> outs = exe->run({xa});
  CHECK(outs[0].buffer() == xa.buffer());
  CHECK(outs[1].buffer() == outs[3].buffer() && outs[1].is_contiguous());
  std::vector<Array> want = eval_eager(b.build(), {xa});
  for (size_t k = 0; k < outs.size(); ++k) check_close(outs[k], want[k], 0);
}

// Random DAGs of elementwise ops, reductions broadcast back, transposes and reshapes:
// the optimised graph fuses and computes what the eager ops compute.
void test_random_graphs() {
  std::mt19937 rng(123);
  const UnaryOp unaries[] = {UnaryOp::exp, UnaryOp::neg, UnaryOp::tanh, UnaryOp::sin, UnaryOp::abs};
  const BinaryOp binaries[] = {BinaryOp::add, BinaryOp::mul, BinaryOp::sub, BinaryOp::max};
  for (int trial = 0; trial < 150; ++trial) {
    GraphBuilder b;
    std::vector<ValueId> vals{b.parameter({8, 8}, DType::F32), b.parameter({8, 8}, DType::F32)};
    auto pick = [&] { return vals[rng() % vals.size()]; };
    auto bounded = [&](ValueId v) { return b.unary(UnaryOp::tanh, v); };
    const int n = 10 + int(rng() % 30);
    for (int k = 0; k < n; ++k) {
      ValueId v;
      switch (rng() % 8) {
        case 0: case 1: v = b.unary(unaries[rng() % 5], bounded(pick())); break;
        case 2: case 3: case 4: v = b.binary(binaries[rng() % 4], pick(), pick()); break;
        case 5: {
          int64_t ax = int64_t(rng() % 2);
          ValueId r = b.reduce(rng() % 2 ? ReduceOp::sum : ReduceOp::max, bounded(pick()), {ax});
          v = b.broadcast_in_dim(r, {8, 8}, {1 - ax});
          break;
        }
        case 6: v = b.transpose(pick(), {1, 0}); break;
        default: v = b.reshape(b.reshape(pick(), {64}), {8, 8}); break;
      }
      vals.push_back(v);
    }
    std::vector<ValueId> outs{vals.back(), vals[vals.size() / 2]};
    b.set_outputs(outs);
    Graph g = b.build();
    std::vector<Array> args{random_f32({8, 8}, 1000 + trial), random_f32({8, 8}, 2000 + trial)};
    try {
      auto exe = check_against_eager(g, args, 1e-4, 1e-5);
      CHECK(parse_graph(exe->text()).identical_to(exe->graph()));
      const Graph& fg = exe->graph();
      CompileOptions no_fuse;
      no_fuse.fuse = false;
      auto simplified = compile(g, no_fuse);
      const Graph& sg = simplified->graph();
      bool chained = false;  // an elementwise node feeding another: fusion must have happened
      for (const Node& nd : sg.nodes())
        if (nd.kind == OpKind::binary || nd.kind == OpKind::unary)
          for (ValueId in : nd.inputs) {
            OpKind k = sg.node(sg.defining_node(in)).kind;
            chained = chained || k == OpKind::unary || k == OpKind::binary;
          }
      CHECK(!chained || count_kind(fg, OpKind::fused) > 0);
    } catch (const Failure& f) {
      throw Failure{"trial " + std::to_string(trial) + ": " + f.msg + "\n" + g.to_text()};
    }
  }
}

// Bodies written by hand: an output that is a reshaped input, a transposed operand, and a
// body the interpreter declines (a reduction over non-adjacent axes) running node by node.
void test_fused_bodies_from_text() {
  Graph g = parse_graph(R"(
%0 = parameter(0) : f32[6,4]
%1 = transpose(%0) {perm=[1,0]} : f32[4,6]
%2, %3, %4 = fused(%1) {
  %0 = parameter(0) : f32[4,6]
  %1 = reshape(%0) : f32[24]
  %2 = exp(%0) : f32[4,6]
  %3 = reduce_sum(%2) {axes=[1]} : f32[4]
  return %1, %2, %3
} : f32[24], f32[4,6], f32[4]
%5 = parameter(1) : f32[3,4,5]
%6 = fused(%5) {
  %0 = parameter(0) : f32[3,4,5]
  %1 = tanh(%0) : f32[3,4,5]
  %2 = reduce_max(%1) {axes=[0,2]} : f32[4]
  return %2
} : f32[4]
return %2, %3, %4, %6
)");
  std::vector<Array> args{random_f32({6, 4}, 21), random_f32({3, 4, 5}, 22)};
  std::vector<Array> got = compile(g, unoptimised())->run(args);
  Array xt = transpose(args[0], {1, 0});
  check_close(got[0], reshape(xt, {24}), 0);
  check_close(got[1], unary(UnaryOp::exp, xt), 0);
  check_close(got[2], reduce(ReduceOp::sum, unary(UnaryOp::exp, xt), {1}), 1e-6);
  check_close(got[3], reduce(ReduceOp::max, unary(UnaryOp::tanh, args[1]), {0, 2}), 0);
}

void test_empty_arrays() {
  GraphBuilder b;
  ValueId x = b.parameter({0, 3}, DType::F32);
  ValueId v = b.unary(UnaryOp::exp, b.binary(BinaryOp::mul, x, x));
  b.set_outputs({v, b.reduce(ReduceOp::sum, v, {0}), b.reduce(ReduceOp::max, v, {0}),
                 b.reduce(ReduceOp::prod, v, {1})});
  Graph g = b.build();
  Array xa = Array::from_host(nullptr, {0, 3}, DType::F32, 0);
  std::vector<Array> outs = compile(g)->run({xa}), want = eval_eager(g, {xa});
  for (size_t k = 0; k < outs.size(); ++k) check_close(outs[k], want[k], 0);
  CHECK(host<float>(outs[1]) == std::vector<float>(3, 0.0f));
  CHECK(host<float>(outs[2]) == std::vector<float>(3, -INFINITY));
}

}  // namespace

// ---- while_loop regions ----

// A loop counting trips to `trips` around `step` (a body graph builder's function of the
// carry): while_loop(true, x) { i, x -> i + 1, step(x), i + 1 < trips }.
Graph counted_loop(const Shape& shape, DType dtype, int trips,
                   const std::function<ValueId(GraphBuilder&, ValueId)>& step) {
  GraphBuilder body;
  ValueId i = body.parameter({}, DType::I32);
  ValueId x = body.parameter(shape, dtype);
  ValueId i1 = body.binary(BinaryOp::add, i, body.scalar(DType::I32, Scalar::of_int(1)));
  body.set_outputs({i1, step(body, x), body.binary(BinaryOp::lt, i1, body.scalar(DType::I32, Scalar::of_int(trips)))});
  GraphBuilder b;
  ValueId p = b.parameter(shape, dtype);
  ValueId zero = b.scalar(DType::I32, Scalar::of_int(0));
  ValueId r = b.while_loop(b.scalar(DType::Bool, Scalar::of_bool(true)), {zero, p}, 0,
                           std::make_shared<const Graph>(body.build()));
  b.set_outputs({r + 1});
  return b.build();
}

void test_loop_body_of_100k_nodes() {
  Graph g = counted_loop({64}, DType::F32, 3, [](GraphBuilder& b, ValueId x) {
    ValueId one = b.scalar(DType::F32, Scalar::of_float(1));
    for (int k = 0; k < 100000; ++k) x = b.binary(BinaryOp::add, x, one);
    return x;
  });
  Graph back = parse_graph(g.to_text());
  CHECK(back.identical_to(g));
  auto exe = compile(back);
  std::vector<float> xs(64, 0.5f);
  std::vector<float> got = host<float>(exe->run({Array::from_host(xs.data(), {64}, DType::F32, 0)})[0]);
  CHECK(got[0] == 300000.5f && got[63] == 300000.5f);
}

void test_loop_kernel_error_surfaces_at_wait() {
  // A kernel of the loop that throws (an injected fault): its error is the result's.
  Graph g = counted_loop({8}, DType::F32, 5, [](GraphBuilder& b, ValueId x) {
    return b.binary(BinaryOp::add, b.unary(UnaryOp::sin, x), x);
  });
  auto exe = compile(g);
  std::vector<int32_t> v(8, 3);
  runtime::arm_fault("fused", 1);
  Array out = exe->run({random_f32({8}, 3)})[0];
  CHECK_THROWS(out.wait(), "injected fault");
  // The runtime, and a loop of the same shape, keep working.
  auto ok = compile(counted_loop({8}, DType::I32, 5, [](GraphBuilder& b, ValueId x) {
    return b.binary(BinaryOp::mul, x, b.scalar(DType::I32, Scalar::of_int(2)));
  }));
  CHECK(host<int32_t>(ok->run({Array::from_host(v.data(), {8}, DType::I32, 0)})[0])[7] == 96);
  runtime::arm_fault("fused", 1);
  CHECK_THROWS(exe->run({random_f32({8}, 3)})[0].wait(), "injected fault");
  exe->run({random_f32({8}, 3)})[0].wait();
}

void test_nested_loops_200_deep() {
  // Each level's body runs the level below once and adds one: 200 levels add 200. The
  // verifier, the printer, the parser and compile walk the nesting without recursion.
  const int depth = 200;
  std::shared_ptr<const Graph> body;
  for (int level = 0; level < depth; ++level) {
    GraphBuilder b;
    ValueId x = b.parameter({2}, DType::F32);
    ValueId y = body ? b.while_loop(b.scalar(DType::Bool, Scalar::of_bool(true)), {x}, 0, body) : x;
    b.set_outputs({b.binary(BinaryOp::add, y, b.scalar(DType::F32, Scalar::of_float(1))),
                   b.scalar(DType::Bool, Scalar::of_bool(false))});
    body = std::make_shared<const Graph>(b.build());
  }
  GraphBuilder b;
  ValueId x = b.parameter({2}, DType::F32);
  b.set_outputs({b.while_loop(b.scalar(DType::Bool, Scalar::of_bool(true)), {x}, 0, body)});
  Graph g = b.build();
  g.verify();
  const std::string text = g.to_text();
  CHECK(text.find(std::string(2 * depth, ' ') + "return") != std::string::npos);
  Graph back = parse_graph(text);
  CHECK(back.identical_to(g));
  CHECK(back.to_text() == text);
  auto exe = compile(back);
  std::vector<float> xs{0.5f, -1.0f};
  std::vector<float> got = host<float>(exe->run({Array::from_host(xs.data(), {2}, DType::F32, 0)})[0]);
  CHECK(got[0] == 200.5f && got[1] == 199.0f);
}

int main() {
  const std::vector<Test> tests = {
      {"builder_validates_like_eager", test_builder_validates_like_eager},
      {"text_round_trip", test_text_round_trip},
      {"simplify", test_simplify},
      {"simplify_through_broadcasts", test_simplify_through_broadcasts},
      {"simplify_unit_reductions", test_simplify_unit_reductions},
      {"division_by_broadcast", test_division_by_broadcast},
      {"division_rewrites", test_division_rewrites},
      {"transposed_dot", test_transposed_dot},
      {"cse_and_dce", test_cse_and_dce},
      {"fusion_counts", test_fusion_counts},
      {"fused_matches_eager", test_fused_matches_eager},
      {"convert_matches_eager", test_convert_matches_eager},
      {"long_chain", test_long_chain},
      {"memory_peak", test_memory_peak},
      {"inplace_respects_holders", test_inplace_respects_holders},
      {"errors_surface_at_wait", test_errors_surface_at_wait},
      {"outputs_that_are_inputs_or_views", test_outputs_that_are_inputs_or_views},
      {"empty_arrays", test_empty_arrays},
      {"fused_bodies_from_text", test_fused_bodies_from_text},
      {"random_graphs", test_random_graphs},
      {"loop_body_of_100k_nodes", test_loop_body_of_100k_nodes},
      {"loop_kernel_error_surfaces_at_wait", test_loop_kernel_error_surfaces_at_wait},
      {"nested_loops_200_deep", test_nested_loops_200_deep},
  };
  return run_tests("graph", tests);
}
