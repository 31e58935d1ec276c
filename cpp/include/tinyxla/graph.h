// The graph IR that jit compiles: numbered values defined by nodes in topological order
// (parameters, constants, ops, fused regions), a builder that validates and infers types by
// the same rules as the eager ops, and a readable text form that parses back identically.
#pragma once
#include <any>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tinyxla/array.h"
#include "tinyxla/error.h"
#include "tinyxla/ops.h"

namespace tinyxla {

// Node kinds, one line per op kind: the one registration of an op (its definition is
// ops::op_def(kind), cpp/src/ops/). The names are the text form's (unary, binary, reduce,
// cumulative and scatter nodes print their op).
#define TINYXLA_GRAPH_OPS(X)                                                                \
  X(parameter) X(constant) X(unary) X(binary) X(select_n) X(clamp) X(convert)              \
  X(bitcast_convert) X(iota) X(reduce) X(argmax) X(argmin) X(reshape) X(transpose)         \
  X(broadcast_in_dim) X(slice) X(pad) X(concatenate) X(rev) X(dot_general) X(fused)        \
  X(dynamic_slice) X(dynamic_update_slice) X(gather) X(scatter) X(sort) X(cumulative)   \
  X(eig) X(eigh) X(cholesky)                                                              \
  X(lu) X(lu_pivots_to_permutation) X(triangular_solve) X(geqrf) X(geqp3)                 \
  X(householder_product) X(svd) X(schur) X(hessenberg) X(tridiagonal) X(tridiagonal_solve) \
  X(while_loop) X(conv) X(reduce_window) X(fft) X(host_callback) X(select_and_gather_add)  \
  X(select_and_scatter_add) X(eigh_tridiagonal) X(mpi_collective)

#define TINYXLA_ENUM_ITEM(name) name,
enum class OpKind : uint8_t { TINYXLA_GRAPH_OPS(TINYXLA_ENUM_ITEM) };
#undef TINYXLA_ENUM_ITEM
const char* op_kind_name(OpKind kind);

using ValueId = int32_t;

struct ValueType {
  Shape shape;
  DType dtype = DType::F32;
  bool operator==(const ValueType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const ValueType& o) const { return !(*this == o); }
};
std::string type_str(const ValueType& t);  // "f32[2,3]", "bool[]"

class Graph;

// One operation: its kind, operands and attribute record. The record's type is the
// kind's (cpp/src/ops/: ops::ReduceAttrs for reduce, ...); op_def(kind) knows it.
struct Node {
  OpKind kind = OpKind::parameter;
  std::vector<ValueId> inputs;
  std::any attrs;
  Array constant;  // a constant's value (dense; its event may still be pending)
  // fused: a graph whose parameters are this node's inputs and whose outputs its results;
  // while_loop: the loop body (see ops/control_flow.h).
  std::shared_ptr<const Graph> body;
  ValueId first_result = 0;
  int num_results = 1;

  // The attribute record, which must be of type A.
  template <class A>
  const A& attr() const {
    const A* a = std::any_cast<A>(&attrs);
    if (!a) throw_error(ErrorKind::Internal, op_kind_name(kind), "attributes of another kind");
    return *a;
  }
  template <class A>
  A& attr() {
    return const_cast<A&>(static_cast<const Node&>(*this).attr<A>());
  }
};

class Graph {
 public:
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(int i) const { return nodes_[size_t(i)]; }
  int num_nodes() const { return int(nodes_.size()); }
  int num_values() const { return int(types_.size()); }
  // Whether running the graph does more than compute its outputs: it holds a node with a
  // side effect (a host callback), directly or in a region's body.
  bool has_side_effects() const;
  const ValueType& type(ValueId v) const { return types_[size_t(v)]; }
  int defining_node(ValueId v) const { return value_node_[size_t(v)]; }
  const std::vector<ValueId>& parameters() const { return params_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  // Appends `node` with results of `types` and returns its first result. Unchecked: the
  // builder and the passes validate before; verify() checks a whole graph.
  ValueId add_node(Node node, std::vector<ValueType> types);
  void set_outputs(std::vector<ValueId> outputs);

  // Throws an Error naming the node when a value is used before it is defined, a type
  // differs from what its node infers, or a fused body holds an op that cannot be fused.
  void verify() const;
  // Same nodes, attributes, types, constant bytes and outputs.
  bool identical_to(const Graph& other) const;
  // The text form: one "%3 = add(%1, %2) : f32[1000]" line per node, then "return %3".
  std::string to_text() const;

 private:
  std::vector<Node> nodes_;
  std::vector<ValueType> types_;
  std::vector<int32_t> value_node_;
  std::vector<ValueId> params_, outputs_;
};

// Whether node `n` has a side effect (its op has one, or its body holds one): the passes
// keep it even when nothing reads its results, and never merge or fold it.
bool has_side_effects(const Node& n);

// Parses the text form (as to_text prints it); throws an InvalidArgument Error with the
// line number on malformed text.
Graph parse_graph(const std::string& text);

// Infers a node's result types from its inputs' types and makes its attributes canonical
// (non-negative sorted axes) by its kind's definition; throws the op's Error when the node
// is invalid.
std::vector<ValueType> infer_types(Node& node, const Graph& graph);

// Builds a Graph one op at a time; each method validates like the eager op of the same name.
class GraphBuilder {
 public:
  ValueId parameter(const Shape& shape, DType dtype);
  ValueId constant(const Array& value);
  ValueId constant(const void* data, const Shape& shape, DType dtype);
  ValueId scalar(DType dtype, const Scalar& value);
  // A scalar constant broadcast to `shape`.
  ValueId full(const Shape& shape, DType dtype, const Scalar& value);
  ValueId unary(UnaryOp op, ValueId x);
  ValueId binary(BinaryOp op, ValueId x, ValueId y);
  ValueId select_n(ValueId which, const std::vector<ValueId>& cases);
  ValueId clamp(ValueId lo, ValueId x, ValueId hi);
  ValueId convert(ValueId x, DType dtype);  // x itself when the dtype is already `dtype`
  ValueId bitcast_convert(ValueId x, DType dtype);
  ValueId iota(DType dtype, const Shape& shape, int64_t dimension);
  ValueId reduce(ReduceOp op, ValueId x, const std::vector<int64_t>& axes);
  ValueId argreduce(bool is_max, ValueId x, int64_t axis, DType index_dtype);
  ValueId reshape(ValueId x, const Shape& shape);
  ValueId transpose(ValueId x, const std::vector<int64_t>& perm);
  ValueId broadcast_in_dim(ValueId x, const Shape& shape, const std::vector<int64_t>& dims);
  ValueId slice(ValueId x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                const std::vector<int64_t>& strides);
  ValueId pad(ValueId x, ValueId padding_value, const std::vector<int64_t>& lo,
              const std::vector<int64_t>& hi, const std::vector<int64_t>& interior);
  ValueId concatenate(const std::vector<ValueId>& xs, int64_t dimension);
  ValueId rev(ValueId x, const std::vector<int64_t>& dims);
  // The window of `sizes` at `starts` (scalar integers read when the graph runs, each
  // clamped so the window fits), as lax.dynamic_slice.
  ValueId dynamic_slice(ValueId x, const std::vector<ValueId>& starts,
                        const std::vector<int64_t>& sizes);
  // `x` with `update` written at `starts` (clamped like dynamic_slice's).
  ValueId dynamic_update_slice(ValueId x, ValueId update, const std::vector<ValueId>& starts);
  // lax.gather; `fill_value` (a scalar of x's dtype) is an operand in fill_or_drop mode
  // only (pass -1 otherwise).
  ValueId gather(ValueId x, ValueId indices, const GatherDims& dims,
                 const std::vector<int64_t>& slice_sizes, IndexMode mode, ValueId fill_value);
  ValueId scatter(ScatterOp op, ValueId x, ValueId indices, ValueId updates,
                  const GatherDims& dims, IndexMode mode);
  // lax.sort: `xs` sorted together along `dimension` by their first `num_keys` (stably);
  // returns the first of its xs.size() results.
  ValueId sort(const std::vector<ValueId>& xs, int64_t dimension, int num_keys);
  // lax.cumsum etc. along `axis`, from the end when `reverse`.
  ValueId cumulative(CumulativeOp op, ValueId x, int64_t axis, bool reverse);
  // lax.linalg.eig: returns the first of its results, w then vl and vr as requested.
  ValueId eig(ValueId x, bool compute_left, bool compute_right);
  // lax.linalg.eigh: returns the first of its two results, v then w.
  ValueId eigh(ValueId x, bool lower);
  ValueId dot_general(ValueId lhs, ValueId rhs, const DotDims& dims,
                      std::optional<DType> preferred = std::nullopt);
  // A fused region: `body`'s parameters take `inputs`; returns the first of its results.
  ValueId fused(const std::vector<ValueId>& inputs, std::shared_ptr<const Graph> body);
  // A loop: while `pred`, (carry..., pred) = body(consts..., carry...), with `inputs` the
  // consts then the initial carry; returns the first of the final carry's results.
  ValueId while_loop(ValueId pred, const std::vector<ValueId>& inputs, int64_t num_consts,
                     std::shared_ptr<const Graph> body);
  // Appends any node after validating it (the parser's and the generic binding's entry
  // point).
  ValueId add(Node node);
  // Appends `g`'s nodes with its parameters taking `args`; returns its outputs' values.
  std::vector<ValueId> inline_graph(const Graph& g, const std::vector<ValueId>& args);

  void set_outputs(const std::vector<ValueId>& outputs);
  const ValueType& type(ValueId v) const;
  const Graph& graph() const { return graph_; }
  Graph build() const { return graph_; }

 private:
  void check_value(ValueId v, const char* op) const;
  Graph graph_;
};

}  // namespace tinyxla
