// The Graph IR: node type inference (shared with the eager ops' rules), the builder, the
// verifier and structural comparison.
#include "tinyxla/graph.h"

#include <cstring>
#include <string>

#include "fused_body.h"
#include "shape_inference.h"
#include "tinyxla/error.h"

namespace tinyxla {
namespace {

#define TINYXLA_COUNT(name) +1
constexpr int kNumUnary = 0 TINYXLA_UNARY_OPS(TINYXLA_COUNT);
constexpr int kNumBinary = 0 TINYXLA_BINARY_OPS(TINYXLA_COUNT);
constexpr int kNumReduce = 0 TINYXLA_REDUCE_OPS(TINYXLA_COUNT);
constexpr int kNumScatter = 0 TINYXLA_SCATTER_OPS(TINYXLA_COUNT);
constexpr int kNumCumulative = 0 TINYXLA_CUMULATIVE_OPS(TINYXLA_COUNT);
#undef TINYXLA_COUNT

[[noreturn]] void invalid(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, op, msg);
}

infer::TypeRef ref(const ValueType& t) { return {&t.shape, t.dtype}; }

DType required_dtype(const Node& n) {
  if (!n.dtype) invalid(op_kind_name(n.kind), "the result dtype is not set");
  return *n.dtype;
}

bool same_constant(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  std::vector<char> x(a.nbytes()), y(b.nbytes());
  a.copy_to_host(x.data());
  b.copy_to_host(y.data());
  return x == y;
}

bool same_dot(const DotDims& a, const DotDims& b) {
  return a.lhs_contracting == b.lhs_contracting && a.rhs_contracting == b.rhs_contracting &&
         a.lhs_batch == b.lhs_batch && a.rhs_batch == b.rhs_batch;
}

bool same_gather(const GatherDims& a, const GatherDims& b) {
  return a.offset_dims == b.offset_dims && a.collapsed_slice_dims == b.collapsed_slice_dims &&
         a.start_index_map == b.start_index_map &&
         a.operand_batching_dims == b.operand_batching_dims &&
         a.start_indices_batching_dims == b.start_indices_batching_dims;
}

IndexMode index_mode(const Node& n) {
  if (n.dimension != int64_t(IndexMode::clip) && n.dimension != int64_t(IndexMode::fill_or_drop))
    invalid(op_kind_name(n.kind), "unknown mode " + std::to_string(n.dimension));
  return IndexMode(n.dimension);
}

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.op != b.op || a.dimension != b.dimension || a.inputs != b.inputs ||
      a.shape != b.shape || a.dtype != b.dtype || a.axes != b.axes || a.lo != b.lo ||
      a.hi != b.hi || a.step != b.step || !same_dot(a.dot, b.dot) ||
      !same_gather(a.gather, b.gather) ||
      a.first_result != b.first_result || a.num_results != b.num_results)
    return false;
  if (a.kind == OpKind::constant && !same_constant(a.constant, b.constant)) return false;
  if (a.kind == OpKind::fused && !a.body->identical_to(*b.body)) return false;
  return true;
}

}  // namespace

const char* op_kind_name(OpKind kind) {
#define TINYXLA_NAME_CASE(name) \
  case OpKind::name:            \
    return #name;
  switch (kind) { TINYXLA_GRAPH_OPS(TINYXLA_NAME_CASE) }
#undef TINYXLA_NAME_CASE
  return "?";
}

std::vector<ValueType> infer_types(Node& n, const Graph& g) {
  const char* name = op_kind_name(n.kind);
  auto need = [&](size_t count) {
    if (n.inputs.size() != count)
      invalid(name, std::string(name) + " takes " + std::to_string(count) + " operands, got " +
                        std::to_string(n.inputs.size()));
  };
  for (ValueId v : n.inputs)
    if (v < 0 || v >= g.num_values()) invalid(name, "operand %" + std::to_string(v) + " is undefined");
  auto in = [&](size_t i) -> const ValueType& { return g.type(n.inputs[i]); };
  switch (n.kind) {
    case OpKind::parameter:
      need(0);
      infer::full(n.shape);
      return {{n.shape, required_dtype(n)}};
    case OpKind::constant:
      need(0);
      if (!n.constant.buffer()) invalid(name, "the constant has no value");
      return {{n.constant.shape(), n.constant.dtype()}};
    case OpKind::unary:
      need(1);
      if (n.op < 0 || n.op >= kNumUnary) invalid(name, "unknown unary op " + std::to_string(n.op));
      return {{in(0).shape, infer::unary_dtype(UnaryOp(n.op), in(0).dtype)}};
    case OpKind::binary: {
      need(2);
      if (n.op < 0 || n.op >= kNumBinary) invalid(name, "unknown binary op " + std::to_string(n.op));
      BinaryOp op = BinaryOp(n.op);
      infer::check_same_dtypes(op_name(op), {in(0).dtype, in(1).dtype});
      return {{infer::binary_shape(op, in(0).shape, in(1).shape), infer::binary_dtype(op, in(0).dtype)}};
    }
    case OpKind::select_n: {
      if (n.inputs.size() < 2) invalid("select_n", "select_n requires at least one case");
      std::vector<infer::TypeRef> cases;
      for (size_t i = 1; i < n.inputs.size(); ++i) cases.push_back(ref(in(i)));
      infer::select_n(ref(in(0)), cases);
      return {in(1)};
    }
    case OpKind::clamp:
      need(3);
      infer::clamp(ref(in(0)), ref(in(1)), ref(in(2)));
      return {in(1)};
    case OpKind::convert:
      need(1);
      return {{in(0).shape, required_dtype(n)}};
    case OpKind::bitcast_convert:
      need(1);
      return {{infer::bitcast_convert(in(0).shape, in(0).dtype, required_dtype(n)), *n.dtype}};
    case OpKind::iota:
      need(0);
      n.dimension = infer::iota(n.shape, n.dimension);
      return {{n.shape, required_dtype(n)}};
    case OpKind::reduce: {
      need(1);
      if (n.op < 0 || n.op >= kNumReduce) invalid(name, "unknown reduce op " + std::to_string(n.op));
      std::vector<int64_t> canon;
      Shape shape = infer::reduce(ReduceOp(n.op), in(0).shape, n.axes, &canon);
      n.axes = canon;
      return {{shape, in(0).dtype}};
    }
    case OpKind::argmax:
    case OpKind::argmin: {
      need(1);
      DType t = required_dtype(n);
      return {{infer::argreduce(n.kind == OpKind::argmax, in(0).shape, &n.dimension, t), t}};
    }
    case OpKind::sort: {
      std::vector<infer::TypeRef> xs;
      std::vector<ValueType> types;
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        xs.push_back(ref(in(i)));
        types.push_back(in(i));
      }
      infer::sort(xs, &n.dimension, n.op);
      return types;
    }
    case OpKind::cumulative:
      need(1);
      if (n.op < 0 || n.op >= kNumCumulative)
        invalid(name, "unknown cumulative op " + std::to_string(n.op));
      if (n.axes.size() != 1 || (n.axes[0] != 0 && n.axes[0] != 1))
        invalid(name, "cumulative needs reverse=0 or reverse=1");
      infer::cumulative(CumulativeOp(n.op), ref(in(0)), &n.dimension);
      return {in(0)};
    case OpKind::eig:
    case OpKind::eigh: {
      need(1);
      const bool is_eig = n.kind == OpKind::eig;
      if (n.op < 0 || n.op > (is_eig ? 3 : 1)) invalid(name, "bad flags " + std::to_string(n.op));
      const DType w = infer::eig(name, ref(in(0)));
      const Shape w_shape(in(0).shape.begin(), in(0).shape.end() - 1);
      if (!is_eig) return {in(0), {w_shape, w}};
      std::vector<ValueType> types{{w_shape, w}};
      for (int bit : {1, 2})
        if (n.op & bit) types.push_back({in(0).shape, w});
      return types;
    }
    case OpKind::reshape:
      need(1);
      infer::reshape(in(0).shape, n.shape);
      return {{n.shape, in(0).dtype}};
    case OpKind::transpose:
      need(1);
      return {{infer::transpose(in(0).shape, n.axes), in(0).dtype}};
    case OpKind::broadcast_in_dim:
      need(1);
      infer::broadcast_in_dim(in(0).shape, n.shape, n.axes);
      return {{n.shape, in(0).dtype}};
    case OpKind::slice: {
      need(1);
      Shape shape = infer::slice(in(0).shape, n.lo, n.hi, n.step);
      if (n.step.empty()) n.step.assign(shape.size(), 1);
      return {{shape, in(0).dtype}};
    }
    case OpKind::pad:
      need(2);
      return {{infer::pad(ref(in(0)), ref(in(1)), n.lo, n.hi, n.step), in(0).dtype}};
    case OpKind::concatenate: {
      std::vector<infer::TypeRef> xs;
      for (size_t i = 0; i < n.inputs.size(); ++i) xs.push_back(ref(in(i)));
      return {{infer::concatenate(xs, &n.dimension), xs.empty() ? DType::F32 : xs[0].dtype}};
    }
    case OpKind::rev:
      need(1);
      n.axes = infer::rev(in(0).shape, n.axes);
      return {in(0)};
    case OpKind::dot_general: {
      need(2);
      double k = 1;
      Shape shape = infer::dot_general(ref(in(0)), ref(in(1)), n.dot, &k);
      if (n.dtype == in(0).dtype) n.dtype.reset();  // the default needs no attribute
      return {{shape, n.dtype.value_or(in(0).dtype)}};
    }
    case OpKind::dynamic_slice: {
      if (n.inputs.empty()) invalid(name, "dynamic_slice takes an operand");
      std::vector<infer::TypeRef> starts;
      for (size_t i = 1; i < n.inputs.size(); ++i) starts.push_back(ref(in(i)));
      infer::dynamic_slice(in(0).shape, starts, n.shape);
      return {{n.shape, in(0).dtype}};
    }
    case OpKind::dynamic_update_slice: {
      if (n.inputs.size() < 2) invalid(name, "dynamic_update_slice takes an operand and an update");
      std::vector<infer::TypeRef> starts;
      for (size_t i = 2; i < n.inputs.size(); ++i) starts.push_back(ref(in(i)));
      infer::dynamic_update_slice(ref(in(0)), ref(in(1)), starts);
      return {in(0)};
    }
    case OpKind::gather: {
      const bool fill = index_mode(n) == IndexMode::fill_or_drop;
      need(fill ? 3 : 2);
      if (fill && (!in(2).shape.empty() || in(2).dtype != in(0).dtype))
        invalid(name, "the fill value must be a scalar of the operand's dtype, got " +
                          type_str(in(2)));
      return {{infer::gather(ref(in(0)), ref(in(1)), n.gather, n.lo), in(0).dtype}};
    }
    case OpKind::scatter:
      need(3);
      index_mode(n);
      if (n.op < 0 || n.op >= kNumScatter) invalid(name, "unknown scatter op " + std::to_string(n.op));
      infer::scatter(ScatterOp(n.op), ref(in(0)), ref(in(1)), ref(in(2)), n.gather);
      return {in(0)};
    case OpKind::fused: {
      if (!n.body) invalid(name, "the fused node has no body");
      const Graph& body = *n.body;
      if (body.parameters().size() != n.inputs.size())
        invalid(name, "the body takes " + std::to_string(body.parameters().size()) +
                          " parameters, got " + std::to_string(n.inputs.size()) + " operands");
      for (size_t i = 0; i < n.inputs.size(); ++i)
        if (body.type(body.parameters()[i]) != in(i))
          invalid(name, "parameter " + std::to_string(i) + " of the body has type " +
                            type_str(body.type(body.parameters()[i])) + ", its operand " +
                            type_str(in(i)));
      check_fused_body(body);
      std::vector<ValueType> out;
      for (ValueId v : body.outputs()) out.push_back(body.type(v));
      return out;
    }
  }
  invalid(name, "unknown node kind");
}

std::string type_str(const ValueType& t) {
  static const char* const names[kNumDTypes] = {"bool", "i8",  "i16", "i32", "i64",
                                                "u8",   "u16", "u32", "u64", "f16",
                                                "bf16", "f32", "f64", "c64", "c128"};
  std::string s = names[int(t.dtype)];
  s += "[";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(t.shape[i]);
  }
  return s + "]";
}

ValueId Graph::add_node(Node node, std::vector<ValueType> types) {
  const int index = int(nodes_.size());
  node.first_result = ValueId(types_.size());
  node.num_results = int(types.size());
  if (node.kind == OpKind::parameter) {
    node.op = int(params_.size());
    params_.push_back(node.first_result);
  }
  for (ValueType& t : types) {
    types_.push_back(std::move(t));
    value_node_.push_back(index);
  }
  ValueId first = node.first_result;
  nodes_.push_back(std::move(node));
  return first;
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  for (ValueId v : outputs)
    if (v < 0 || v >= num_values())
      invalid("graph", "output %" + std::to_string(v) + " is undefined");
  outputs_ = std::move(outputs);
}

void Graph::verify() const {
  for (int i = 0; i < num_nodes(); ++i) {
    const Node& n = nodes_[size_t(i)];
    const std::string where = "node " + std::to_string(i) + " (" + op_kind_name(n.kind) + ")";
    for (ValueId v : n.inputs)
      if (v < 0 || v >= n.first_result)
        invalid("verify", where + " uses %" + std::to_string(v) + " before its definition");
    Node copy = n;
    std::vector<ValueType> want = infer_types(copy, *this);
    bool same = int(want.size()) == n.num_results;
    for (int r = 0; same && r < n.num_results; ++r) same = want[size_t(r)] == type(n.first_result + r);
    if (!same) invalid("verify", where + " has result types that differ from its inferred types");
    if (n.kind == OpKind::fused) n.body->verify();
  }
  for (ValueId v : outputs_)
    if (v < 0 || v >= num_values()) invalid("verify", "output %" + std::to_string(v) + " is undefined");
}

bool Graph::identical_to(const Graph& o) const {
  if (nodes_.size() != o.nodes_.size() || types_ != o.types_ || outputs_ != o.outputs_ ||
      params_ != o.params_)
    return false;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!same_node(nodes_[i], o.nodes_[i])) return false;
  return true;
}

void GraphBuilder::check_value(ValueId v, const char* op) const {
  if (v < 0 || v >= graph_.num_values())
    invalid(op, "operand %" + std::to_string(v) + " is undefined");
}

const ValueType& GraphBuilder::type(ValueId v) const {
  check_value(v, "graph");
  return graph_.type(v);
}

ValueId GraphBuilder::add(Node node) {
  for (ValueId v : node.inputs) check_value(v, op_kind_name(node.kind));
  std::vector<ValueType> types = infer_types(node, graph_);
  return graph_.add_node(std::move(node), std::move(types));
}

ValueId GraphBuilder::parameter(const Shape& shape, DType dtype) {
  Node n;
  n.kind = OpKind::parameter;
  n.shape = shape;
  n.dtype = dtype;
  return add(std::move(n));
}

ValueId GraphBuilder::constant(const Array& value) {
  Node n;
  n.kind = OpKind::constant;
  n.constant = value;
  return add(std::move(n));
}

ValueId GraphBuilder::constant(const void* data, const Shape& shape, DType dtype) {
  infer::full(shape);
  return constant(Array::from_host(data, shape, dtype, 0));
}

ValueId GraphBuilder::scalar(DType dtype, const Scalar& value) {
  return constant(tinyxla::scalar(dtype, value, 0));
}

ValueId GraphBuilder::full(const Shape& shape, DType dtype, const Scalar& value) {
  infer::full(shape);
  return broadcast_in_dim(scalar(dtype, value), shape, {});
}

ValueId GraphBuilder::unary(UnaryOp op, ValueId x) {
  Node n;
  n.kind = OpKind::unary;
  n.op = int(op);
  n.inputs = {x};
  return add(std::move(n));
}

ValueId GraphBuilder::binary(BinaryOp op, ValueId x, ValueId y) {
  Node n;
  n.kind = OpKind::binary;
  n.op = int(op);
  n.inputs = {x, y};
  return add(std::move(n));
}

ValueId GraphBuilder::select_n(ValueId which, const std::vector<ValueId>& cases) {
  Node n;
  n.kind = OpKind::select_n;
  n.inputs = {which};
  n.inputs.insert(n.inputs.end(), cases.begin(), cases.end());
  return add(std::move(n));
}

ValueId GraphBuilder::clamp(ValueId lo, ValueId x, ValueId hi) {
  Node n;
  n.kind = OpKind::clamp;
  n.inputs = {lo, x, hi};
  return add(std::move(n));
}

ValueId GraphBuilder::convert(ValueId x, DType dtype) {
  if (type(x).dtype == dtype) return x;
  Node n;
  n.kind = OpKind::convert;
  n.inputs = {x};
  n.dtype = dtype;
  return add(std::move(n));
}

ValueId GraphBuilder::bitcast_convert(ValueId x, DType dtype) {
  Node n;
  n.kind = OpKind::bitcast_convert;
  n.inputs = {x};
  n.dtype = dtype;
  return add(std::move(n));
}

ValueId GraphBuilder::iota(DType dtype, const Shape& shape, int64_t dimension) {
  Node n;
  n.kind = OpKind::iota;
  n.shape = shape;
  n.dtype = dtype;
  n.dimension = dimension;
  return add(std::move(n));
}

ValueId GraphBuilder::reduce(ReduceOp op, ValueId x, const std::vector<int64_t>& axes) {
  Node n;
  n.kind = OpKind::reduce;
  n.op = int(op);
  n.inputs = {x};
  n.axes = axes;
  return add(std::move(n));
}

ValueId GraphBuilder::argreduce(bool is_max, ValueId x, int64_t axis, DType index_dtype) {
  Node n;
  n.kind = is_max ? OpKind::argmax : OpKind::argmin;
  n.inputs = {x};
  n.dimension = axis;
  n.dtype = index_dtype;
  return add(std::move(n));
}

ValueId GraphBuilder::sort(const std::vector<ValueId>& xs, int64_t dimension, int num_keys) {
  Node n;
  n.kind = OpKind::sort;
  n.inputs = xs;
  n.dimension = dimension;
  n.op = num_keys;
  return add(std::move(n));
}

ValueId GraphBuilder::cumulative(CumulativeOp op, ValueId x, int64_t axis, bool reverse) {
  Node n;
  n.kind = OpKind::cumulative;
  n.op = int(op);
  n.inputs = {x};
  n.dimension = axis;
  n.axes = {reverse ? 1 : 0};
  return add(std::move(n));
}

ValueId GraphBuilder::eig(ValueId x, bool compute_left, bool compute_right) {
  Node n;
  n.kind = OpKind::eig;
  n.op = (compute_left ? 1 : 0) | (compute_right ? 2 : 0);
  n.inputs = {x};
  return add(std::move(n));
}

ValueId GraphBuilder::eigh(ValueId x, bool lower) {
  Node n;
  n.kind = OpKind::eigh;
  n.op = lower ? 1 : 0;
  n.inputs = {x};
  return add(std::move(n));
}

ValueId GraphBuilder::reshape(ValueId x, const Shape& shape) {
  Node n;
  n.kind = OpKind::reshape;
  n.inputs = {x};
  n.shape = shape;
  return add(std::move(n));
}

ValueId GraphBuilder::transpose(ValueId x, const std::vector<int64_t>& perm) {
  Node n;
  n.kind = OpKind::transpose;
  n.inputs = {x};
  n.axes = perm;
  return add(std::move(n));
}

ValueId GraphBuilder::broadcast_in_dim(ValueId x, const Shape& shape,
                                       const std::vector<int64_t>& dims) {
  Node n;
  n.kind = OpKind::broadcast_in_dim;
  n.inputs = {x};
  n.shape = shape;
  n.axes = dims;
  return add(std::move(n));
}

ValueId GraphBuilder::slice(ValueId x, const std::vector<int64_t>& start,
                            const std::vector<int64_t>& limit,
                            const std::vector<int64_t>& strides) {
  Node n;
  n.kind = OpKind::slice;
  n.inputs = {x};
  n.lo = start;
  n.hi = limit;
  n.step = strides;
  return add(std::move(n));
}

ValueId GraphBuilder::pad(ValueId x, ValueId padding_value, const std::vector<int64_t>& lo,
                          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  Node n;
  n.kind = OpKind::pad;
  n.inputs = {x, padding_value};
  n.lo = lo;
  n.hi = hi;
  n.step = interior;
  return add(std::move(n));
}

ValueId GraphBuilder::concatenate(const std::vector<ValueId>& xs, int64_t dimension) {
  Node n;
  n.kind = OpKind::concatenate;
  n.inputs = xs;
  n.dimension = dimension;
  return add(std::move(n));
}

ValueId GraphBuilder::rev(ValueId x, const std::vector<int64_t>& dims) {
  Node n;
  n.kind = OpKind::rev;
  n.inputs = {x};
  n.axes = dims;
  return add(std::move(n));
}

ValueId GraphBuilder::dynamic_slice(ValueId x, const std::vector<ValueId>& starts,
                                    const std::vector<int64_t>& sizes) {
  Node n;
  n.kind = OpKind::dynamic_slice;
  n.inputs = {x};
  n.inputs.insert(n.inputs.end(), starts.begin(), starts.end());
  n.shape = sizes;
  return add(std::move(n));
}

ValueId GraphBuilder::dynamic_update_slice(ValueId x, ValueId update,
                                           const std::vector<ValueId>& starts) {
  Node n;
  n.kind = OpKind::dynamic_update_slice;
  n.inputs = {x, update};
  n.inputs.insert(n.inputs.end(), starts.begin(), starts.end());
  return add(std::move(n));
}

ValueId GraphBuilder::gather(ValueId x, ValueId indices, const GatherDims& dims,
                             const std::vector<int64_t>& slice_sizes, IndexMode mode,
                             ValueId fill_value) {
  Node n;
  n.kind = OpKind::gather;
  n.inputs = {x, indices};
  if (mode == IndexMode::fill_or_drop) n.inputs.push_back(fill_value);
  n.gather = dims;
  n.lo = slice_sizes;
  n.dimension = int64_t(mode);
  return add(std::move(n));
}

ValueId GraphBuilder::scatter(ScatterOp op, ValueId x, ValueId indices, ValueId updates,
                              const GatherDims& dims, IndexMode mode) {
  Node n;
  n.kind = OpKind::scatter;
  n.op = int(op);
  n.inputs = {x, indices, updates};
  n.gather = dims;
  n.dimension = int64_t(mode);
  return add(std::move(n));
}

ValueId GraphBuilder::dot_general(ValueId lhs, ValueId rhs, const DotDims& dims,
                                  std::optional<DType> preferred) {
  Node n;
  n.kind = OpKind::dot_general;
  n.inputs = {lhs, rhs};
  n.dot = dims;
  n.dtype = preferred;
  return add(std::move(n));
}

ValueId GraphBuilder::fused(const std::vector<ValueId>& inputs, std::shared_ptr<const Graph> body) {
  Node n;
  n.kind = OpKind::fused;
  n.inputs = inputs;
  n.body = std::move(body);
  return add(std::move(n));
}

void GraphBuilder::set_outputs(const std::vector<ValueId>& outputs) { graph_.set_outputs(outputs); }

}  // namespace tinyxla
