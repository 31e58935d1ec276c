// The Graph IR: node type inference (by each kind's definition, as the eager ops), the
// builder, the verifier and structural comparison.
#include "tinyxla/graph.h"

#include <cstring>
#include <limits>
#include <string>

#include "../ops/control_flow.h"
#include "../ops/dot.h"
#include "../ops/elementwise.h"
#include "../ops/indexing.h"
#include "../ops/layout.h"
#include "../ops/linalg.h"
#include "../ops/reductions.h"
#include "../ops/sorting.h"
#include "../ops/structural.h"
#include "fused_body.h"
#include "tinyxla/error.h"

namespace tinyxla {
namespace {

using namespace ops;

[[noreturn]] void invalid(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, op, msg);
}

bool same_constant(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  std::vector<char> x(a.nbytes()), y(b.nbytes());
  a.copy_to_host(x.data());
  b.copy_to_host(y.data());
  return x == y;
}

std::string attrs_key(const Node& n) {
  std::string key;
  op_def(n.kind).append_key(n.attrs, key);
  return key;
}

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.inputs != b.inputs || a.first_result != b.first_result ||
      a.num_results != b.num_results || attrs_key(a) != attrs_key(b))
    return false;
  if (a.kind == OpKind::constant && !same_constant(a.constant, b.constant)) return false;
  return bool(a.body) == bool(b.body);  // the bodies themselves: identical_to's worklist
}

// A fused node's types: its body's outputs, once the body checks against the operands.
std::vector<ValueType> fused_types(const Node& n, const Graph& g) {
  if (!n.body) invalid("fused", "the fused node has no body");
  const Graph& body = *n.body;
  if (body.parameters().size() != n.inputs.size())
    invalid("fused", "the body takes " + std::to_string(body.parameters().size()) +
                         " parameters, got " + std::to_string(n.inputs.size()) + " operands");
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (body.type(body.parameters()[i]) != g.type(n.inputs[i]))
      invalid("fused", "parameter " + std::to_string(i) + " of the body has type " +
                           type_str(body.type(body.parameters()[i])) + ", its operand " +
                           type_str(g.type(n.inputs[i])));
  check_fused_body(body);
  std::vector<ValueType> out;
  for (ValueId v : body.outputs()) out.push_back(body.type(v));
  return out;
}

// Every value's size must be countable: elements times item size within int64 (a larger
// one, from attributes read off a file, would wrap the allocation size).
void check_result_sizes(const OpDef& def, const std::vector<ValueType>& types) {
  for (const ValueType& t : types) {
    int64_t bytes = int64_t(itemsize(t.dtype));
    for (int64_t d : t.shape) {
      if (d < 0) invalid(def.name(), "the result shape " + shape_str(t.shape) + " has a negative dimension");
      if (d && bytes > std::numeric_limits<int64_t>::max() / d)
        invalid(def.name(), "the result " + type_str(t) + " has more than 2^63 bytes");
      bytes = d ? bytes * d : 0;
    }
  }
}

std::vector<ValueType> infer_unchecked(Node& n, const Graph& g) {
  const OpDef& def = op_def(n.kind);
  for (ValueId v : n.inputs)
    if (v < 0 || v >= g.num_values())
      invalid(def.name(), "operand %" + std::to_string(v) + " is undefined");
  if (!n.attrs.has_value()) n.attrs = def.default_attrs();
  if (n.attrs.type() != def.attrs_type()) invalid(def.name(), "the attributes are of another kind");
  switch (n.kind) {
    case OpKind::constant:
      if (!n.inputs.empty()) invalid("constant", "constant takes 0 operands");
      if (!n.constant.buffer()) invalid("constant", "the constant has no value");
      return {{n.constant.shape(), n.constant.dtype()}};
    case OpKind::fused:
      return fused_types(n, g);
    case OpKind::while_loop: {
      if (!n.body) invalid("while_loop", "the while_loop node has no body");
      std::vector<infer::TypeRef> ins;
      std::vector<ValueType> operands;
      for (ValueId v : n.inputs) {
        ins.push_back({&g.type(v).shape, g.type(v).dtype});
        operands.push_back(g.type(v));
      }
      std::vector<ValueType> types = def.infer(n.attrs, ins);
      check_while_body(*n.body, operands, n.attr<WhileLoopAttrs>().num_consts);
      return types;
    }
    default: {
      std::vector<ops::infer::TypeRef> ins;
      ins.reserve(n.inputs.size());
      for (ValueId v : n.inputs) ins.push_back({&g.type(v).shape, g.type(v).dtype});
      return def.infer(n.attrs, ins);
    }
  }
}

}  // namespace

std::vector<ValueType> infer_types(Node& n, const Graph& g) {
  std::vector<ValueType> types = infer_unchecked(n, g);
  check_result_sizes(op_def(n.kind), types);
  return types;
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
  if (!node.attrs.has_value()) node.attrs = op_def(node.kind).default_attrs();
  node.first_result = ValueId(types_.size());
  node.num_results = int(types.size());
  if (node.kind == OpKind::parameter) {
    node.attr<ParameterAttrs>().index = int64_t(params_.size());
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
  // Region bodies nest: checked from a worklist (no recursion over graphs).
  std::vector<const Graph*> todo{this};
  while (!todo.empty()) {
    const Graph& g = *todo.back();
    todo.pop_back();
    for (int i = 0; i < g.num_nodes(); ++i) {
      const Node& n = g.nodes_[size_t(i)];
      const std::string where = "node " + std::to_string(i) + " (" + op_kind_name(n.kind) + ")";
      for (ValueId v : n.inputs)
        if (v < 0 || v >= n.first_result)
          invalid("verify", where + " uses %" + std::to_string(v) + " before its definition");
      Node copy = n;
      std::vector<ValueType> want = infer_types(copy, g);
      bool same = int(want.size()) == n.num_results;
      for (int r = 0; same && r < n.num_results; ++r) same = want[size_t(r)] == g.type(n.first_result + r);
      if (!same) invalid("verify", where + " has result types that differ from its inferred types");
      if (n.body) todo.push_back(n.body.get());
    }
    for (ValueId v : g.outputs_)
      if (v < 0 || v >= g.num_values()) invalid("verify", "output %" + std::to_string(v) + " is undefined");
  }
}

bool has_side_effects(const Node& n) {
  return ops::op_def(n.kind).has_side_effects() || (n.body && n.body->has_side_effects());
}

bool Graph::has_side_effects() const {
  std::vector<const Graph*> todo{this};  // bodies of regions, nested
  while (!todo.empty()) {
    const Graph* g = todo.back();
    todo.pop_back();
    for (const Node& n : g->nodes_) {
      if (ops::op_def(n.kind).has_side_effects()) return true;
      if (n.body) todo.push_back(n.body.get());
    }
  }
  return false;
}

bool Graph::identical_to(const Graph& other) const {
  std::vector<std::pair<const Graph*, const Graph*>> todo{{this, &other}};
  while (!todo.empty()) {
    const auto [a, b] = todo.back();
    todo.pop_back();
    if (a->nodes_.size() != b->nodes_.size() || a->types_ != b->types_ ||
        a->outputs_ != b->outputs_ || a->params_ != b->params_)
      return false;
    for (size_t i = 0; i < a->nodes_.size(); ++i) {
      if (!same_node(a->nodes_[i], b->nodes_[i])) return false;
      if (a->nodes_[i].body) todo.push_back({a->nodes_[i].body.get(), b->nodes_[i].body.get()});
    }
  }
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
  return add(make_node(OpKind::parameter, ParameterAttrs{0, shape, dtype}));
}

ValueId GraphBuilder::constant(const Array& value) {
  Node n = make_node(OpKind::constant, NoAttrs{});
  n.constant = value;
  return add(std::move(n));
}

ValueId GraphBuilder::constant(const void* data, const Shape& shape, DType dtype) {
  ops::infer::full(shape);
  return constant(Array::from_host(data, shape, dtype, 0));
}

ValueId GraphBuilder::scalar(DType dtype, const Scalar& value) {
  return constant(tinyxla::scalar(dtype, value, 0));
}

ValueId GraphBuilder::full(const Shape& shape, DType dtype, const Scalar& value) {
  ops::infer::full(shape);
  return broadcast_in_dim(scalar(dtype, value), shape, {});
}

ValueId GraphBuilder::unary(UnaryOp op, ValueId x) {
  return add(make_node(OpKind::unary, UnaryAttrs{op}, {x}));
}

ValueId GraphBuilder::binary(BinaryOp op, ValueId x, ValueId y) {
  return add(make_node(OpKind::binary, BinaryAttrs{op}, {x, y}));
}

ValueId GraphBuilder::select_n(ValueId which, const std::vector<ValueId>& cases) {
  std::vector<ValueId> inputs{which};
  inputs.insert(inputs.end(), cases.begin(), cases.end());
  return add(make_node(OpKind::select_n, NoAttrs{}, std::move(inputs)));
}

ValueId GraphBuilder::clamp(ValueId lo, ValueId x, ValueId hi) {
  return add(make_node(OpKind::clamp, NoAttrs{}, {lo, x, hi}));
}

ValueId GraphBuilder::convert(ValueId x, DType dtype) {
  if (type(x).dtype == dtype) return x;
  return add(make_node(OpKind::convert, ConvertAttrs{dtype}, {x}));
}

ValueId GraphBuilder::bitcast_convert(ValueId x, DType dtype) {
  return add(make_node(OpKind::bitcast_convert, ConvertAttrs{dtype}, {x}));
}

ValueId GraphBuilder::iota(DType dtype, const Shape& shape, int64_t dimension) {
  return add(make_node(OpKind::iota, IotaAttrs{dimension, shape, dtype}));
}

ValueId GraphBuilder::reduce(ReduceOp op, ValueId x, const std::vector<int64_t>& axes) {
  return add(make_node(OpKind::reduce, ReduceAttrs{op, axes}, {x}));
}

ValueId GraphBuilder::argreduce(bool is_max, ValueId x, int64_t axis, DType index_dtype) {
  return add(make_node(is_max ? OpKind::argmax : OpKind::argmin, ArgReduceAttrs{axis, index_dtype}, {x}));
}

ValueId GraphBuilder::sort(const std::vector<ValueId>& xs, int64_t dimension, int num_keys) {
  return add(make_node(OpKind::sort, SortAttrs{dimension, num_keys}, xs));
}

ValueId GraphBuilder::cumulative(CumulativeOp op, ValueId x, int64_t axis, bool reverse) {
  return add(make_node(OpKind::cumulative, CumulativeAttrs{op, axis, reverse}, {x}));
}

ValueId GraphBuilder::eig(ValueId x, bool compute_left, bool compute_right) {
  return add(make_node(OpKind::eig, EigAttrs{compute_left, compute_right}, {x}));
}

ValueId GraphBuilder::eigh(ValueId x, bool lower) {
  return add(make_node(OpKind::eigh, EighAttrs{lower}, {x}));
}

ValueId GraphBuilder::reshape(ValueId x, const Shape& shape) {
  return add(make_node(OpKind::reshape, ReshapeAttrs{shape}, {x}));
}

ValueId GraphBuilder::transpose(ValueId x, const std::vector<int64_t>& perm) {
  return add(make_node(OpKind::transpose, TransposeAttrs{perm}, {x}));
}

ValueId GraphBuilder::broadcast_in_dim(ValueId x, const Shape& shape,
                                       const std::vector<int64_t>& dims) {
  return add(make_node(OpKind::broadcast_in_dim, BroadcastInDimAttrs{shape, dims}, {x}));
}

ValueId GraphBuilder::slice(ValueId x, const std::vector<int64_t>& start,
                            const std::vector<int64_t>& limit,
                            const std::vector<int64_t>& strides) {
  return add(make_node(OpKind::slice, SliceAttrs{start, limit, strides}, {x}));
}

ValueId GraphBuilder::pad(ValueId x, ValueId padding_value, const std::vector<int64_t>& lo,
                          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  return add(make_node(OpKind::pad, PadAttrs{lo, hi, interior}, {x, padding_value}));
}

ValueId GraphBuilder::concatenate(const std::vector<ValueId>& xs, int64_t dimension) {
  return add(make_node(OpKind::concatenate, ConcatenateAttrs{dimension}, xs));
}

ValueId GraphBuilder::rev(ValueId x, const std::vector<int64_t>& dims) {
  return add(make_node(OpKind::rev, RevAttrs{dims}, {x}));
}

ValueId GraphBuilder::dynamic_slice(ValueId x, const std::vector<ValueId>& starts,
                                    const std::vector<int64_t>& sizes) {
  std::vector<ValueId> inputs{x};
  inputs.insert(inputs.end(), starts.begin(), starts.end());
  return add(make_node(OpKind::dynamic_slice, DynamicSliceAttrs{sizes}, std::move(inputs)));
}

ValueId GraphBuilder::dynamic_update_slice(ValueId x, ValueId update,
                                           const std::vector<ValueId>& starts) {
  std::vector<ValueId> inputs{x, update};
  inputs.insert(inputs.end(), starts.begin(), starts.end());
  return add(make_node(OpKind::dynamic_update_slice, NoAttrs{}, std::move(inputs)));
}

ValueId GraphBuilder::gather(ValueId x, ValueId indices, const GatherDims& dims,
                             const std::vector<int64_t>& slice_sizes, IndexMode mode,
                             ValueId fill_value) {
  std::vector<ValueId> inputs{x, indices};
  if (mode == IndexMode::fill_or_drop) inputs.push_back(fill_value);
  return add(make_node(OpKind::gather, GatherAttrs{dims, slice_sizes, mode}, std::move(inputs)));
}

ValueId GraphBuilder::scatter(ScatterOp op, ValueId x, ValueId indices, ValueId updates,
                              const GatherDims& dims, IndexMode mode) {
  return add(make_node(OpKind::scatter, ScatterAttrs{op, dims, mode}, {x, indices, updates}));
}

ValueId GraphBuilder::dot_general(ValueId lhs, ValueId rhs, const DotDims& dims,
                                  std::optional<DType> preferred) {
  return add(make_node(OpKind::dot_general, DotGeneralAttrs{dims, preferred}, {lhs, rhs}));
}

ValueId GraphBuilder::fused(const std::vector<ValueId>& inputs, std::shared_ptr<const Graph> body) {
  Node n = make_node(OpKind::fused, NoAttrs{}, inputs);
  n.body = std::move(body);
  return add(std::move(n));
}

ValueId GraphBuilder::while_loop(ValueId pred, const std::vector<ValueId>& inputs, int64_t num_consts,
                                 std::shared_ptr<const Graph> body) {
  std::vector<ValueId> operands{pred};
  operands.insert(operands.end(), inputs.begin(), inputs.end());
  Node n = make_node(OpKind::while_loop, WhileLoopAttrs{num_consts}, std::move(operands));
  n.body = std::move(body);
  return add(std::move(n));
}

void GraphBuilder::set_outputs(const std::vector<ValueId>& outputs) { graph_.set_outputs(outputs); }

}  // namespace tinyxla
