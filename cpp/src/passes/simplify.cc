// Algebraic simplification and constant folding in one forward sweep. Every rewrite is exact
// (bit for bit, NaN and -0.0 included), as XLA's simplifier: x*1, x/1, x-(+0), x+(-0.0) and
// integer x+0 fold to x, but float x+0 does not (-0.0 + 0 is +0.0). The inexact rewrites are
// XLA's too, whose results JAX users see: its float divisions and powers (XlaFloatRewriter).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../ir/fused_body.h"
#include "../ops/dot.h"
#include "../ops/elementwise.h"
#include "../ops/indexing.h"
#include "../ops/layout.h"
#include "../ops/reductions.h"
#include "../ops/structural.h"
#include "passes.h"

namespace tinyxla::passes {
namespace {

using namespace ops;

// Runs node `n` on ready constants `ins` by its definition: a dense ready result of `type`.
Array evaluate(const Node& n, const ValueType& type, const std::vector<Array>& ins) {
  const OpDef& def = op_def(n.kind);
  if (def.is_view()) return dense_copy(ready_view(n, type, ins[0]));
  Array out(type.shape, type.dtype, 0, Event::ready());
  def.run(n.attrs, ins, {out});
  return out;
}

// Constant subgraphs fold when no operand and no result has more elements than this.
constexpr int64_t kFoldLimit = 1024;
// Rewrites of one node chain at most this many times (each one shortens a chain).
constexpr int kMaxRewrites = 8;

// Whether every element of `v` (a constant, possibly broadcast) equals `value`; with
// `sign`, zeros must also have the sign bit `negative`.
bool splat_equals(const Graph& g, ValueId v, double value, bool sign = false,
                  bool negative = false) {
  const Node* n = &g.node(g.defining_node(v));
  while (n->kind == OpKind::broadcast_in_dim) n = &g.node(g.defining_node(n->inputs[0]));
  if (n->kind != OpKind::constant) return false;
  const Array& c = n->constant;
  if (!c.is_ready() || c.event()->has_error() || c.size() > kFoldLimit) return false;
  std::vector<char> bytes(c.nbytes());
  c.copy_to_host(bytes.data());
  return visit_dtype(c.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* p = reinterpret_cast<const T*>(bytes.data());
    for (int64_t i = 0; i < c.size(); ++i) {
      double x, imag = 0;
      if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        x = to_float(p[i]);
      } else if constexpr (std::is_same_v<T, complex64> || std::is_same_v<T, complex128>) {
        x = double(p[i].real());
        imag = double(p[i].imag());
      } else {
        x = double(p[i]);
      }
      if (x != value || imag != 0 || (sign && std::signbit(x) != negative)) return false;
    }
    return true;
  });
}

// Whether every value of `from` converts to `to` exactly.
bool lossless(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  const size_t fs = itemsize(from), ts = itemsize(to);
  if (is_integral(from)) {
    if (is_integral(to))
      return is_signed_int(from) == is_signed_int(to) ? ts > fs : (is_signed_int(to) && ts > fs);
    if (to == DType::F32 || to == DType::C64) return fs <= 2;
    if (to == DType::F64 || to == DType::C128) return fs <= 4;
    return false;
  }
  if (is_floating(from)) {
    if (to == DType::F32 || to == DType::C64) return from == DType::F16 || from == DType::BF16;
    if (to == DType::F64 || to == DType::C128) return from != DType::F64 || to == DType::C128;
    return false;
  }
  return from == DType::C64 && to == DType::C128;
}

bool is_iota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != int64_t(i)) return false;
  return true;
}

// Whether every axis in `axes` has size 1 in `shape`.
bool unit_axes(const Shape& shape, const std::vector<int64_t>& axes) {
  for (int64_t d : axes)
    if (shape[size_t(d)] != 1) return false;
  return true;
}

// One rewrite step: `*same` gets an existing value equal to n, or n changes in place.
// Returns false when nothing applies.
bool rewrite(const Graph& g, Node& n, const ValueType& type, ValueId* same) {
  auto producer = [&](size_t i) -> const Node& { return g.node(g.defining_node(n.inputs[i])); };
  auto in_type = [&](size_t i) -> const ValueType& { return g.type(n.inputs[i]); };
  auto take = [&](size_t i) {
    if (in_type(i) != type) return false;
    *same = n.inputs[i];
    return true;
  };
  switch (n.kind) {
    case OpKind::unary:
      if (n.attr<UnaryAttrs>().op == UnaryOp::neg && producer(0).kind == OpKind::unary &&
          producer(0).attr<UnaryAttrs>().op == UnaryOp::neg) {
        *same = producer(0).inputs[0];
        return true;
      }
      return false;
    case OpKind::binary: {
      const BinaryOp op = n.attr<BinaryAttrs>().op;
      const DType t = in_type(0).dtype;
      if (is_complex(t)) return false;  // (a+bi)*(1+0i) is NaN for an infinite a or b
      if (op == BinaryOp::mul) {
        if (splat_equals(g, n.inputs[1], 1) && take(0)) return true;
        if (splat_equals(g, n.inputs[0], 1) && take(1)) return true;
      }
      if (op == BinaryOp::div && splat_equals(g, n.inputs[1], 1)) return take(0);
      if (op == BinaryOp::pow && is_floating(t) && splat_equals(g, n.inputs[1], 1)) return take(0);
      if (op == BinaryOp::add) {
        if (is_integral(t) || t == DType::Bool) {
          if (splat_equals(g, n.inputs[1], 0) && take(0)) return true;
          if (splat_equals(g, n.inputs[0], 0) && take(1)) return true;
        } else if (is_floating(t)) {  // only x + (-0.0) is x for every x
          if (splat_equals(g, n.inputs[1], 0, true, true) && take(0)) return true;
          if (splat_equals(g, n.inputs[0], 0, true, true) && take(1)) return true;
        }
      }
      if (op == BinaryOp::sub && (is_integral(t) || is_floating(t)) &&
          splat_equals(g, n.inputs[1], 0, is_floating(t), false))
        return take(0);
      return false;
    }
    case OpKind::select_n: {
      if (n.inputs.size() == 1) return take(1);
      // A constant selector picks its case (a jnp.var with a static ddof: where(n > 0, ...)).
      for (size_t c = 0; c + 1 < n.inputs.size(); ++c)
        if (splat_equals(g, n.inputs[0], double(c))) return take(c + 1);
      return false;
    }
    case OpKind::convert: {
      const DType to = n.attr<ConvertAttrs>().dtype;
      if (in_type(0).dtype == to) return take(0);
      const Node& p = producer(0);
      if (p.kind != OpKind::convert) return false;
      const DType x = g.type(p.inputs[0]).dtype, middle = p.attr<ConvertAttrs>().dtype;
      // Integers wrap into integers but floats saturate, so int -> float -> int keeps both.
      const bool same_rule = !is_integral(to) || !is_integral(x) || is_integral(middle);
      if (lossless(x, middle) && same_rule) {
        n.inputs[0] = p.inputs[0];
        return true;
      }
      return false;
    }
    case OpKind::reshape: {
      if (in_type(0).shape == n.attr<ReshapeAttrs>().shape) return take(0);
      const Node& p = producer(0);
      if (p.kind == OpKind::reshape) {
        n.inputs[0] = p.inputs[0];
        return true;
      }
      return false;
    }
    case OpKind::transpose: {
      std::vector<int64_t>& perm = n.attr<TransposeAttrs>().perm;
      if (is_iota(perm)) return take(0);
      const Node& p = producer(0);
      if (p.kind == OpKind::transpose) {
        const std::vector<int64_t>& inner = p.attr<TransposeAttrs>().perm;
        std::vector<int64_t> composed(perm.size());
        for (size_t j = 0; j < perm.size(); ++j) composed[j] = inner[size_t(perm[j])];
        perm = composed;
        n.inputs[0] = p.inputs[0];
        return true;
      }
      return false;
    }
    case OpKind::broadcast_in_dim: {
      BroadcastInDimAttrs& a = n.attr<BroadcastInDimAttrs>();
      if (in_type(0).shape == a.shape && is_iota(a.dims)) return take(0);
      const Node& p = producer(0);
      if (p.kind == OpKind::broadcast_in_dim) {
        const std::vector<int64_t>& inner = p.attr<BroadcastInDimAttrs>().dims;
        std::vector<int64_t> dims(inner.size());
        for (size_t i = 0; i < dims.size(); ++i) dims[i] = a.dims[size_t(inner[i])];
        a.dims = dims;
        n.inputs[0] = p.inputs[0];
        return true;
      }
      return false;
    }
    case OpKind::slice: {
      const SliceAttrs& a = n.attr<SliceAttrs>();
      bool full = true;
      for (size_t i = 0; i < a.start.size() && full; ++i)
        full = a.start[i] == 0 && a.limit[i] == in_type(0).shape[i] && a.strides[i] == 1;
      return full && take(0);
    }
    case OpKind::rev:
      return n.attr<RevAttrs>().dims.empty() && take(0);
    case OpKind::reduce: {
      const std::vector<int64_t>& axes = n.attr<ReduceAttrs>().axes;
      if (axes.empty()) return take(0);
      // Over unit axes only (a broadcast's transpose leaves them) there is nothing to
      // combine: the eager kernel copies x, as XLA's simplifier makes it a reshape.
      if (!unit_axes(in_type(0).shape, axes)) return false;
      n = make_node(OpKind::reshape, ReshapeAttrs{type.shape}, {n.inputs[0]});
      return true;
    }
    default:
      return false;
  }
}

bool is_splat(const Array& a) {
  for (int64_t s : a.strides())
    if (s != 0) return false;
  return true;
}

// Broadcasts stay: a scalar broadcast is a free view and fuses as a scalar.
bool foldable(OpKind kind) {
  return kind != OpKind::parameter && kind != OpKind::constant && kind != OpKind::fused &&
         kind != OpKind::while_loop &&
         kind != OpKind::broadcast_in_dim;
}

// Evaluates a node whose operands are all ready constants; an empty Array when the node
// cannot run (its error will then surface when the graph runs).
Array fold(const Graph& g, const Node& n, const ValueType& type) {
  if (!foldable(n.kind) || has_side_effects(n) || n.num_results != 1 || num_elements(type.shape) > kFoldLimit)
    return Array();
  std::vector<Array> ins;
  for (ValueId v : n.inputs) {
    const Node& p = g.node(g.defining_node(v));
    if (p.kind != OpKind::constant || p.constant.size() > kFoldLimit || !p.constant.is_ready() ||
        p.constant.event()->has_error())
      return Array();
    ins.push_back(p.constant);
  }
  try {
    return evaluate(n, type, ins);
  } catch (const std::exception&) {
    return Array();
  }
}

// The 0-d constant that `v` broadcasts (or is), when ready; else an empty Array.
Array splat_scalar(const Graph& g, ValueId v) {
  const Node* n = &g.node(g.defining_node(v));
  if (n->kind == OpKind::broadcast_in_dim) n = &g.node(g.defining_node(n->inputs[0]));
  if (n->kind != OpKind::constant || n->constant.ndim() != 0 || !n->constant.is_ready() ||
      n->constant.event()->has_error())
    return Array();
  return n->constant;
}

// An elementwise node whose operands all broadcast scalar constants: its scalar result
// (the broadcast of which replaces it, however large), or an empty Array.
Array fold_splats(const Graph& g, const Node& n, const ValueType& type) {
  if (!is_elementwise(n.kind) || n.num_results != 1) return Array();
  std::vector<Array> ins;
  for (ValueId v : n.inputs) {
    ins.push_back(splat_scalar(g, v));
    if (!ins.back().buffer()) return Array();
  }
  try {
    return evaluate(n, {Shape{}, type.dtype}, ins);
  } catch (const std::exception&) {
    return Array();
  }
}

// XLA's simplifier rewrites float divisions and powers, inexactly, and JAX's jit results are
// its (checked against JAX 0.10.2, which takes them in this order):
//   exp(A) / exp(B) -> exp(A - B)          A / exp(B) -> A * exp(-B)
//   A / pow(B, C) -> A * pow(B, -C)        A / sqrt(B) -> A * rsqrt(B)
//   A / rsqrt(B) -> A * sqrt(B)            A / broadcast or constant B -> A * (1 / B)
//   (A / B) / (C / D) -> (A * D) / (B * C) (A / B) / C -> A / (B * C)
//   A / (B / C) -> (A * C) / B
//   pow(A, 2) -> A * A    pow(A, 3) -> A * A * A    pow(A, -1) -> 1 / A
//   pow(A, 0.5) -> (A == -inf ? inf : |sqrt(A)|)   (LLVM's, in XLA:CPU's compiled loops)
// for the types of has_xla_float_rewrites. The reciprocal of a broadcast is taken at the
// broadcast operand's size and broadcast as it was; eager division by a broadcast divisor
// takes that form too. New nodes fold when their operands are small constants.
class XlaFloatRewriter {
 public:
  explicit XlaFloatRewriter(Graph& out) : out_(out) {}

  // Rewrites division or power `n` (of result type `type`) by the first rule that applies.
  bool rewrite(Node& n, const ValueType& type) {
    if (n.kind != OpKind::binary || !has_xla_float_rewrites(type.dtype)) return false;
    const BinaryOp op = n.attr<BinaryAttrs>().op;
    if (op == BinaryOp::pow) return rewrite_power(n, type);
    if (op != BinaryOp::div) return false;
    const ValueId x = n.inputs[0], y = n.inputs[1];
    if (splat_equals(out_, y, 1)) return false;  // x / 1 is x
    // Copies: adding nodes below may move the nodes they would point into.
    const Node px = out_.node(out_.defining_node(x)), py = out_.node(out_.defining_node(y));
    if (is_unary(px, UnaryOp::exp) && is_unary(py, UnaryOp::exp)) {
      n = make_node(OpKind::unary, UnaryAttrs{UnaryOp::exp},
                    {binary(BinaryOp::sub, px.inputs[0], py.inputs[0])});
      return true;
    }
    if (const ValueId r = reciprocal_of_function(py); r >= 0) {
      n = make_node(OpKind::binary, BinaryAttrs{BinaryOp::mul}, {x, r});
      return true;
    }
    const bool broadcast = py.kind == OpKind::broadcast_in_dim &&
                           size(py.inputs[0]) < size(y);
    if (broadcast || py.kind == OpKind::constant || size(y) < num_elements(type.shape)) {
      const ValueId small = broadcast ? py.inputs[0] : y;
      ValueId r = reciprocal(small);
      if (broadcast) {
        Node b = py;
        b.inputs = {r};
        r = out_.add_node(std::move(b), {out_.type(y)});
      }
      n = make_node(OpKind::binary, BinaryAttrs{BinaryOp::mul}, {x, r});
      return true;
    }
    const bool x_div = is_binary(px, BinaryOp::div), y_div = is_binary(py, BinaryOp::div);
    if (x_div && y_div) {
      n.inputs = {binary(BinaryOp::mul, px.inputs[0], py.inputs[1]),
                  binary(BinaryOp::mul, px.inputs[1], py.inputs[0])};
    } else if (x_div) {
      n.inputs = {px.inputs[0], binary(BinaryOp::mul, px.inputs[1], y)};
    } else if (y_div) {
      n.inputs = {binary(BinaryOp::mul, x, py.inputs[1]), py.inputs[0]};
    } else {
      return false;
    }
    return true;
  }

  // pow(A, 0.5) -> (A == -inf ? inf : |sqrt(A)|): LLVM's, which XLA:CPU's compiled loops take
  // after its simplifier (so the division rules above still see the power).
  static bool is_square_root(const Graph& g, const Node& n) {
    return n.kind == OpKind::binary && n.attr<BinaryAttrs>().op == BinaryOp::pow &&
           has_xla_float_rewrites(g.type(n.first_result).dtype) &&
           g.type(n.inputs[0]).shape == g.type(n.first_result).shape && splat_equals(g, n.inputs[1], 0.5);
  }
  void square_root(Node& n, const ValueType& type) {
    const ValueId a = n.inputs[0];
    const ValueId neg_inf = binary(BinaryOp::eq, a, constant(type.dtype, -INFINITY), DType::Bool);
    const ValueId inf = add(make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{type.shape, {}},
                                      {constant(type.dtype, INFINITY)}),
                            type);
    n = make_node(OpKind::select_n, NoAttrs{}, {neg_inf, unary(UnaryOp::abs, unary(UnaryOp::sqrt, a)), inf});
  }

 private:
  bool rewrite_power(Node& n, const ValueType& type) {
    const ValueId a = n.inputs[0], e = n.inputs[1];
    if (out_.type(a).shape != type.shape) return false;
    if (splat_equals(out_, e, 0)) {
      n = make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{type.shape, {}},
                    {constant(type.dtype, 1)});
    } else if (splat_equals(out_, e, 2)) {
      n = make_node(OpKind::binary, BinaryAttrs{BinaryOp::mul}, {a, a});
    } else if (splat_equals(out_, e, 3)) {
      n = make_node(OpKind::binary, BinaryAttrs{BinaryOp::mul}, {binary(BinaryOp::mul, a, a), a});
    } else if (splat_equals(out_, e, -1)) {
      n = make_node(OpKind::binary, BinaryAttrs{BinaryOp::div}, {constant(type.dtype, 1), a});
    } else {
      return false;
    }
    return true;
  }

  static bool is_unary(const Node& p, UnaryOp op) {
    return p.kind == OpKind::unary && p.attr<UnaryAttrs>().op == op;
  }
  static bool is_binary(const Node& p, BinaryOp op) {
    return p.kind == OpKind::binary && p.attr<BinaryAttrs>().op == op;
  }
  int64_t size(ValueId v) const { return num_elements(out_.type(v).shape); }

  // 1 / p's value when p is exp, pow, sqrt or rsqrt (their rules with A = 1); else -1.
  ValueId reciprocal_of_function(const Node& p) {
    if (is_unary(p, UnaryOp::exp))
      return unary(UnaryOp::exp, unary(UnaryOp::neg, p.inputs[0]));
    if (is_unary(p, UnaryOp::sqrt)) return unary(UnaryOp::rsqrt, p.inputs[0]);
    if (is_unary(p, UnaryOp::rsqrt)) return unary(UnaryOp::sqrt, p.inputs[0]);
    if (is_binary(p, BinaryOp::pow))
      return binary(BinaryOp::pow, p.inputs[0], unary(UnaryOp::neg, p.inputs[1]));
    return -1;
  }

  ValueId reciprocal(ValueId v) {
    if (const ValueId r = reciprocal_of_function(out_.node(out_.defining_node(v))); r >= 0) return r;
    return binary(BinaryOp::div, constant(out_.type(v).dtype, 1), v);
  }

  ValueId constant(DType t, double value) {
    Node c = make_node(OpKind::constant, NoAttrs{});
    c.constant = scalar(t, Scalar::of_float(value), 0);
    return out_.add_node(std::move(c), {ValueType{Shape{}, t}});
  }

  ValueId unary(UnaryOp op, ValueId a) {
    return add(make_node(OpKind::unary, UnaryAttrs{op}, {a}), out_.type(a));
  }
  // `dtype`: the result's, when not the operands'.
  ValueId binary(BinaryOp op, ValueId a, ValueId b, std::optional<DType> dtype = std::nullopt) {
    const ValueType& ta = out_.type(a);
    return add(make_node(OpKind::binary, BinaryAttrs{op}, {a, b}),
               {infer::binary_shape(op_name(op), ta.shape, out_.type(b).shape), dtype.value_or(ta.dtype)});
  }
  ValueId add(Node n, const ValueType& type) {
    Array folded = fold(out_, n, type);
    if (folded.buffer()) {
      n = make_node(OpKind::constant, NoAttrs{});
      n.constant = folded;
    }
    return out_.add_node(std::move(n), {type});
  }

  Graph& out_;
};

// For a unary, binary or convert node whose operands are broadcasts of one shape along the
// same dims (or scalar constants): that broadcast, to compute the op on the smaller operands
// (less work, and CSE then finds it computed unbroadcast elsewhere, as a mean reused in a
// variance). Null otherwise.
const Node* common_broadcast(const Graph& g, const Node& n) {
  if (n.kind != OpKind::unary && n.kind != OpKind::binary && n.kind != OpKind::convert)
    return nullptr;
  const Node* common = nullptr;
  for (ValueId v : n.inputs) {
    const Node& p = g.node(g.defining_node(v));
    if (p.kind == OpKind::broadcast_in_dim && g.type(p.inputs[0]).shape.size() > 0) {
      if (common && (common->attr<BroadcastInDimAttrs>().dims != p.attr<BroadcastInDimAttrs>().dims ||
                     g.type(common->inputs[0]).shape !=
                                                   g.type(p.inputs[0]).shape))
        return nullptr;
      common = &p;
    } else if (!splat_scalar(g, v).buffer()) {
      return nullptr;
    }
  }
  return common;
}

// For a transpose of a dot_general read by nothing else that only swaps the lhs and rhs
// free dims of its result (batch ++ lhs free ++ rhs free): the dot with its operands
// swapped, which writes that order directly (as XLA's simplifier does; a transposed
// gradient dot then feeds its accumulation densely instead of as a strided view).
std::optional<Node> transposed_dot(const Graph& g, const Node& t, const std::vector<int>& uses) {
  const ValueId v = t.inputs[0];
  const Node& d = g.node(g.defining_node(v));
  if (d.kind != OpKind::dot_general || uses[size_t(v)] != 1) return std::nullopt;
  const DotDims& dims = d.attr<DotGeneralAttrs>().dims;
  const int64_t nb = int64_t(dims.lhs_batch.size());
  const int64_t nl = int64_t(g.type(d.inputs[0]).shape.size()) - nb - int64_t(dims.lhs_contracting.size());
  const int64_t nr = int64_t(g.type(d.inputs[1]).shape.size()) - nb - int64_t(dims.rhs_contracting.size());
  if (nl == 0 || nr == 0) return std::nullopt;
  std::vector<int64_t> swapped;
  for (int64_t i = 0; i < nb; ++i) swapped.push_back(i);
  for (int64_t i = 0; i < nr; ++i) swapped.push_back(nb + nl + i);
  for (int64_t i = 0; i < nl; ++i) swapped.push_back(nb + i);
  if (t.attr<TransposeAttrs>().perm != swapped) return std::nullopt;
  Node n = d;
  std::swap(n.inputs[0], n.inputs[1]);
  DotDims& nd = n.attr<DotGeneralAttrs>().dims;
  std::swap(nd.lhs_contracting, nd.rhs_contracting);
  std::swap(nd.lhs_batch, nd.rhs_batch);
  return n;
}

// The signed integer index whose negative-index normalisation for an axis of `size` is `v`:
// v = select_n(lt(i, 0), i, add(i, size)), what jnp indexing computes (as JAX's jaxpr does)
// and exactly what wrap_negative (GatherAttrs, ScatterAttrs) does to i. -1 otherwise.
ValueId normalised_from(const Graph& g, ValueId v, int64_t size) {
  const Node& s = g.node(g.defining_node(v));
  if (s.kind != OpKind::select_n || s.inputs.size() != 3) return -1;
  const ValueId i = s.inputs[1];
  if (!is_signed_int(g.type(i).dtype)) return -1;
  const Node& lt = g.node(g.defining_node(s.inputs[0]));
  if (lt.kind != OpKind::binary || lt.attr<BinaryAttrs>().op != BinaryOp::lt ||
      lt.inputs[0] != i || !splat_equals(g, lt.inputs[1], 0))
    return -1;
  const Node& add = g.node(g.defining_node(s.inputs[2]));
  if (add.kind != OpKind::binary || add.attr<BinaryAttrs>().op != BinaryOp::add) return -1;
  const bool adds_size = (add.inputs[0] == i && splat_equals(g, add.inputs[1], double(size))) ||
                         (add.inputs[1] == i && splat_equals(g, add.inputs[0], double(size)));
  return adds_size ? i : -1;
}

// Ops between jnp's normalisation of an index and the gather or scatter reading it that
// commute with the wrap: shape ops, and a convert widening a signed integer (the
// normalisation in the narrower type cannot overflow, as its `size` constant fits that type).
bool wrap_commutes(const Graph& g, const Node& n) {
  if (n.kind == OpKind::broadcast_in_dim || n.kind == OpKind::reshape) return true;
  if (n.kind != OpKind::convert) return false;
  const DType from = g.type(n.inputs[0]).dtype, to = n.attr<ConvertAttrs>().dtype;
  return is_signed_int(from) && is_signed_int(to) && itemsize(to) >= itemsize(from);
}

// Index chains longer than this are not looked through (jnp makes at most three).
constexpr int kMaxIndexChain = 4;

// The value that `v` is computed from by wrap_commutes ops, which go into `chain`
// outermost first.
ValueId chain_root(const Graph& g, ValueId v, std::vector<int>& chain) {
  for (int d = 0; d < kMaxIndexChain; ++d) {
    const int p = g.defining_node(v);
    if (!wrap_commutes(g, g.node(p))) break;
    chain.push_back(p);
    v = g.node(p).inputs[0];
  }
  return v;
}

// Whether `v` is never negative: a constant of a signed integer type without a negative
// element, or an iota (a slice's start or a position among gather indices, which the
// wrap leaves as they are).
bool nonnegative(const Graph& g, ValueId v) {
  const Node& n = g.node(g.defining_node(v));
  const DType t = g.type(v).dtype;
  if (!is_signed_int(t)) return false;
  if (n.kind == OpKind::iota) {
    const IotaAttrs& a = n.attr<IotaAttrs>();
    return itemsize(t) == 8 || a.shape[size_t(a.dimension)] <= int64_t(1) << (8 * itemsize(t) - 1);
  }
  if (n.kind != OpKind::constant) return false;
  const Array& c = n.constant;
  if (!c.is_ready() || c.event()->has_error()) return false;
  std::vector<char> bytes(c.nbytes());
  c.copy_to_host(bytes.data());
  return visit_dtype(c.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      const T* p = reinterpret_cast<const T*>(bytes.data());
      return std::all_of(p, p + c.size(), [](T x) { return x >= 0; });
    }
    return false;
  });
}

// The attributes through which a gather or a scatter reads its indices (input 1) into
// the dims of its operand (input 0), which their records share; null fields for other ops.
// N is Node or const Node (then the fields point to const).
template <class N>
auto index_reader(N& n) {
  constexpr bool kConst = std::is_const_v<N>;
  struct Reader {
    std::conditional_t<kConst, const GatherDims, GatherDims>* dims = nullptr;
    std::conditional_t<kConst, const bool, bool>* wrap_negative = nullptr;
  };
  if (n.kind == OpKind::gather) {
    auto& a = n.template attr<GatherAttrs>();
    return Reader{&a.dims, &a.wrap_negative};
  }
  if (n.kind == OpKind::scatter) {
    auto& a = n.template attr<ScatterAttrs>();
    return Reader{&a.dims, &a.wrap_negative};
  }
  return Reader{};
}

// The normalisations (see normalised_from) of `g` that every reader can fold: each value on
// the way to the readers is read only by wrap_commutes ops and by gathers and scatters as
// their one-piece indices (input 1) into operand dims of the normalised size, and is no
// output. An embedding's gather and its gradient's scatter-add read one such: folded into
// both, the normalisation's kernel is dropped (1e6 of 1e6 float32: 0.25-0.5 ms of 2.4-4.6).
std::vector<char> folds_everywhere(const Graph& g) {
  std::vector<std::vector<std::pair<int, size_t>>> readers(size_t(g.num_values()));
  for (int k = 0; k < g.num_nodes(); ++k)
    for (size_t slot = 0; slot < g.node(k).inputs.size(); ++slot)
      readers[size_t(g.node(k).inputs[slot])].push_back({k, slot});
  for (ValueId v : g.outputs()) readers[size_t(v)].push_back({-1, 0});
  std::vector<char> folds(size_t(g.num_values()), 0);
  for (const Node& sel : g.nodes()) {
    if (sel.kind != OpKind::select_n || sel.num_results != 1) continue;
    const ValueId root = sel.first_result;
    bool all = true;
    std::vector<ValueId> work{root};
    while (all && !work.empty()) {
      const ValueId w = work.back();
      work.pop_back();
      for (const auto& [k, slot] : readers[size_t(w)]) {
        if (k < 0) {
          all = false;
          break;
        }
        const Node& r = g.node(k);
        if (slot == 0 && wrap_commutes(g, r)) {
          work.push_back(r.first_result);
          continue;
        }
        const GatherDims* dims = index_reader(r).dims;
        std::vector<int> chain;
        all = dims && slot == 1 && is_signed_int(g.type(w).dtype) && chain_root(g, w, chain) == root &&
              !dims->start_index_map.empty();
        if (!all) break;
        const Shape& xs = g.type(r.inputs[0]).shape;
        const int64_t size = xs[size_t(dims->start_index_map[0])];
        for (int64_t d : dims->start_index_map) all = all && xs[size_t(d)] == size;
        all = all && normalised_from(g, root, size) >= 0;
        if (!all) break;
      }
    }
    folds[size_t(root)] = all;
  }
  return folds;
}

// For a gather or scatter whose index columns are each jnp's normalisation of an index for
// the operand dim it indexes (see normalised_from; through wrap_commutes ops) or never
// negative, with at least one normalised: the op on the unnormalised indices with
// wrap_negative set, added to `g` (into `n`). Its loop then wraps each index as it reads
// it, where the normalisation was a kernel of its own that read and wrote all the indices
// first (XLA fuses it into the gather or scatter likewise). Indices in pieces are
// concatenated along their last dim, as jnp stacks x[i, j]'s. `uses` counts the readers
// of g's values (0: not known); `everywhere` marks the normalisations that all their
// readers fold (see folds_everywhere). Any other normalisation that something else reads
// stays, and the op keeps reading it, since folding would save nothing and could make the
// raw indices one more array to write.
void fold_index_wrap(Graph& g, Node& n, const std::vector<int>& uses,
                     const std::vector<char>& everywhere) {
  auto only_reader = [&](ValueId v) { return size_t(v) < uses.size() && uses[size_t(v)] == 1; };
  const auto a = index_reader(n);
  if (!a.dims) return;
  const ValueId idx = n.inputs[1];
  const ValueType idx_type = g.type(idx);
  if (*a.wrap_negative || !is_signed_int(idx_type.dtype)) return;
  const Shape& xs = g.type(n.inputs[0]).shape;
  std::vector<int64_t> sizes;
  for (int64_t d : a.dims->start_index_map) sizes.push_back(xs[size_t(d)]);
  Node stacked = g.node(g.defining_node(idx));  // a copy: adding nodes below may move it
  const bool pieces = stacked.kind == OpKind::concatenate &&
                      stacked.attr<ConcatenateAttrs>().dimension == int64_t(idx_type.shape.size()) - 1;
  if (pieces && !only_reader(idx)) return;
  std::vector<ValueId> columns = pieces ? stacked.inputs : std::vector<ValueId>{idx};
  // Per piece: the unnormalised index (-1: the piece stays) and the chain to it.
  std::vector<ValueId> raw(columns.size(), -1);
  std::vector<std::vector<int>> chains(columns.size());
  bool any = false;
  size_t first = 0;
  for (size_t p = 0; p < columns.size(); ++p) {
    const size_t k = size_t(g.type(columns[p]).shape.back());
    bool one_size = k > 0;
    for (size_t c = first; c < first + k; ++c) one_size = one_size && sizes[c] == sizes[first];
    const int64_t size = k > 0 ? sizes[first] : 0;
    first += k;
    const ValueId root = chain_root(g, columns[p], chains[p]);
    raw[p] = one_size ? normalised_from(g, root, size) : -1;
    bool dies = size_t(root) < everywhere.size() && everywhere[size_t(root)];
    if (!dies) {
      dies = only_reader(root);
      for (int c : chains[p]) dies = dies && only_reader(g.node(c).first_result);
    }
    if (raw[p] >= 0 && !dies) return;
    if (raw[p] >= 0) any = true;
    else if (k > 0 && !nonnegative(g, root)) return;
  }
  if (!any) return;
  for (size_t p = 0; p < columns.size(); ++p) {
    if (raw[p] < 0) continue;
    ValueId v = raw[p];
    for (auto it = chains[p].rbegin(); it != chains[p].rend(); ++it) {
      Node step = g.node(*it);
      step.inputs = {v};
      const ValueType type = g.type(step.first_result);
      v = g.add_node(std::move(step), {type});
    }
    columns[p] = v;
  }
  if (pieces) {
    stacked.inputs = columns;
    n.inputs[1] = g.add_node(std::move(stacked), {idx_type});
  } else {
    n.inputs[1] = columns[0];
  }
  *a.wrap_negative = true;
}

// The square roots of XlaFloatRewriter::square_root, in a sweep of their own after the others.
Graph square_roots(const Graph& g) {
  bool any = false;
  for (const Node& n : g.nodes()) any = any || XlaFloatRewriter::is_square_root(g, n);
  if (!any) return g;
  Graph out;
  std::vector<ValueId> map(size_t(g.num_values()), -1);
  for (const Node& old : g.nodes()) {
    Node n = remap(old, map);
    std::vector<ValueType> types;
    for (int r = 0; r < old.num_results; ++r) types.push_back(g.type(old.first_result + r));
    if (XlaFloatRewriter::is_square_root(g, old)) XlaFloatRewriter(out).square_root(n, types[0]);
    const ValueId first = out.add_node(std::move(n), std::move(types));
    for (int r = 0; r < old.num_results; ++r) map[size_t(old.first_result + r)] = first + r;
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outputs));
  return out;
}

}  // namespace

Graph simplify(const Graph& g) {
  Graph out;
  std::vector<ValueId> map(size_t(g.num_values()), -1);
  std::vector<int> uses(size_t(g.num_values()), 0);
  for (const Node& n : g.nodes())
    for (ValueId v : n.inputs) ++uses[size_t(v)];
  for (ValueId v : g.outputs()) ++uses[size_t(v)];
  // The readers of out's values and the normalisations that all of them fold, where a node
  // of g became one of its own (else 0).
  const std::vector<char> everywhere = folds_everywhere(g);
  std::vector<int> out_uses;
  std::vector<char> out_everywhere;
  for (const Node& old : g.nodes()) {
    std::optional<Node> dot = old.kind == OpKind::transpose ? transposed_dot(g, old, uses) : std::nullopt;
    Node n = remap(dot ? *dot : old, map);
    fold_index_wrap(out, n, out_uses, out_everywhere);
    std::vector<ValueType> types;
    for (int r = 0; r < old.num_results; ++r) types.push_back(g.type(old.first_result + r));
    if (n.kind == OpKind::constant && n.constant.size() > 1 && is_splat(n.constant)) {
      // A broadcast constant (jnp.zeros, full) is its scalar broadcast: small text, free view.
      const Array& c = n.constant;
      Node scalar = make_node(OpKind::constant, NoAttrs{});
      scalar.constant = Array(Shape{}, Strides{}, c.offset(), c.dtype(), c.device(), c.buffer(), c.event());
      n = make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{types[0].shape, {}},
                    {out.add_node(std::move(scalar), {ValueType{Shape{}, types[0].dtype}})});
    }
    if (n.kind == OpKind::iota && types[0].shape.size() > 1 &&
        num_elements(types[0].shape) > kFoldLimit) {
      // An iota of rank > 1 is the broadcast of a one-dimensional one: a free view, which
      // fused kernels read as a repeating pattern or a value per run instead of as an operand
      // of one element per element (jnp.eye and tri masks read two of them).
      const IotaAttrs a = n.attr<IotaAttrs>();
      const ValueType line{Shape{a.shape[size_t(a.dimension)]}, a.dtype};
      n = make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{a.shape, {a.dimension}},
                    {out.add_node(make_node(OpKind::iota, IotaAttrs{0, line.shape, a.dtype}), {line})});
    }
    for (int i = 0; i < kMaxRewrites && old.num_results == 1; ++i)
      if (!XlaFloatRewriter(out).rewrite(n, types[0])) break;
    ValueId same = -1;
    for (int i = 0; i < kMaxRewrites && same < 0 && old.num_results == 1; ++i)
      if (!rewrite(out, n, types[0], &same)) break;
    if (same >= 0) {
      map[size_t(old.first_result)] = same;
      continue;
    }
    if (const Node* b = old.num_results == 1 ? common_broadcast(out, n) : nullptr) {
      // A copy: adding nodes below may move the node `b` points into.
      Node bcast = *b;
      Node inner = n;
      for (ValueId& v : inner.inputs) {
        const Node& p = out.node(out.defining_node(v));
        if (p.kind == OpKind::broadcast_in_dim && out.type(p.inputs[0]).shape.size() > 0) {
          v = p.inputs[0];
        } else {
          Node c = make_node(OpKind::constant, NoAttrs{});
          c.constant = splat_scalar(out, v);
          v = out.add_node(std::move(c), {ValueType{Shape{}, out.type(v).dtype}});
        }
      }
      bcast.inputs = {out.add_node(std::move(inner),
                                   {ValueType{out.type(bcast.inputs[0]).shape, types[0].dtype}})};
      map[size_t(old.first_result)] = out.add_node(std::move(bcast), std::move(types));
      continue;
    }
    if (!types[0].shape.empty()) {
      Array scalar = fold_splats(out, n, types[0]);
      if (scalar.buffer()) {
        Node c = make_node(OpKind::constant, NoAttrs{});
        c.constant = scalar;
        Node b = make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{types[0].shape, {}},
                           {out.add_node(std::move(c), {ValueType{Shape{}, types[0].dtype}})});
        map[size_t(old.first_result)] = out.add_node(std::move(b), std::move(types));
        continue;
      }
    }
    Array folded = n.num_results == 1 ? fold(out, n, types[0]) : Array();
    if (folded.buffer()) {
      Node c = make_node(OpKind::constant, NoAttrs{});
      c.constant = folded;
      n = std::move(c);
    }
    ValueId first = out.add_node(std::move(n), std::move(types));
    out_uses.resize(size_t(out.num_values()), 0);
    out_everywhere.resize(size_t(out.num_values()), 0);
    for (int r = 0; r < old.num_results; ++r) {
      map[size_t(old.first_result + r)] = first + r;
      out_uses[size_t(first + r)] = uses[size_t(old.first_result + r)];
      out_everywhere[size_t(first + r)] = everywhere[size_t(old.first_result + r)];
    }
  }
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[size_t(v)]);
  out.set_outputs(std::move(outputs));
  return square_roots(out);
}

}  // namespace tinyxla::passes
