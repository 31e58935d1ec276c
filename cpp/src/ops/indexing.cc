// Definitions of the indexing ops: dynamic_slice, dynamic_update_slice, gather, scatter.
#include "indexing.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

void check_start_indices(const char* op, size_t rank, const std::vector<TypeRef>& starts) {
  if (starts.size() != rank)
    throw_error(ErrorKind::TypeError, op,
                std::string(op) + " start_indices must have length equal to the rank of "
                "operand, got " + std::to_string(starts.size()) + " indices for rank " +
                std::to_string(rank));
  for (const TypeRef& s : starts) {
    if (!s.shape->empty())
      throw_error(ErrorKind::TypeError, op,
                  std::string("start_indices arguments to ") + op + " must be scalars, got shape " +
                      shape_str(*s.shape));
    if (s.dtype != starts[0].dtype || !is_integral(s.dtype) || s.dtype == DType::Bool)
      throw_error(ErrorKind::TypeError, op,
                  std::string("index arguments to ") + op +
                      " must be integers of the same type, got " + dtype_name(starts[0].dtype) +
                      ", " + dtype_name(s.dtype));
  }
}

// Checks the operand against the slice sizes and the start indices (scalar integers of
// one dtype, one per axis).
void dynamic_slice(const Shape& x, const std::vector<TypeRef>& starts,
                   const std::vector<int64_t>& sizes) {
  if (starts.size() != x.size())
    invalid("dynamic_slice", "Length of slice indices must match number of operand dimensions (" +
                                 std::to_string(starts.size()) + " vs " + shape_str(x) + ")");
  if (sizes.size() != x.size())
    throw_error(ErrorKind::TypeError, "dynamic_slice",
                "dynamic_slice slice_sizes must have the same length as the operand's rank, "
                "got slice_sizes " + ints_str(sizes) + " for operand shape " + shape_str(x));
  for (size_t i = 0; i < x.size(); ++i)
    if (sizes[i] < 0)
      throw_error(ErrorKind::TypeError, "dynamic_slice",
                  "slice slice_sizes must be greater than or equal to zero, got slice_sizes of " +
                      ints_str(sizes) + ".");
  for (size_t i = 0; i < x.size(); ++i)
    if (sizes[i] > x[i])
      throw_error(ErrorKind::TypeError, "dynamic_slice",
                  "slice slice_sizes must be less than or equal to operand shape, got "
                  "slice_sizes " + ints_str(sizes) + " for operand shape " + shape_str(x) + ".");
  check_start_indices("dynamic_slice", x.size(), starts);
}

void dynamic_update_slice(const TypeRef& x, const TypeRef& update,
                          const std::vector<TypeRef>& starts) {
  const Shape& xs = *x.shape;
  const Shape& us = *update.shape;
  check_same_dtypes("dynamic_update_slice", {x.dtype, update.dtype});
  if (xs.size() != us.size())
    throw_error(ErrorKind::TypeError, "dynamic_update_slice",
                "dynamic_update_slice update must have the same rank as operand, got update "
                "shape " + shape_str(us) + " for operand shape " + shape_str(xs) + ".");
  for (size_t i = 0; i < xs.size(); ++i)
    if (us[i] > xs[i])
      throw_error(ErrorKind::TypeError, "dynamic_update_slice",
                  "dynamic_update_slice update shape must be smaller than operand shape, got "
                  "update shape " + shape_str(us) + " for operand shape " + shape_str(xs) + ".");
  check_start_indices("dynamic_update_slice", xs.size(), starts);
}

[[noreturn]] void type_error(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::TypeError, op, msg);
}

// Each entry of `dims` in [0, rank), unique; `sorted` also asks for increasing order.
void check_dims(const std::string& op, const char* what, const std::vector<int64_t>& dims,
                int64_t rank, bool sorted) {
  std::vector<bool> seen(size_t(std::max<int64_t>(rank, 0)), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= rank)
      type_error(op, std::string(what) + " must be in the range [0, " + std::to_string(rank) +
                         "), got " + ints_str(dims) + ".");
    if (seen[size_t(d)]) type_error(op, std::string(what) + " must not repeat, got " + ints_str(dims) + ".");
    if (sorted && i > 0 && d < dims[i - 1])
      type_error(op, std::string(what) + " must be sorted, got " + ints_str(dims) + ".");
    seen[size_t(d)] = true;
  }
}

// The checks gather and scatter share: the index vectors, the start index map and the
// batching dims. `window_dims` are the operand dims a window spans (not collapsed, not
// batching), in order.
std::vector<int64_t> check_index_dims(const std::string& op, const TypeRef& x,
                                      const TypeRef& indices, const GatherDims& d,
                                      const char* collapsed_name, const char* map_name) {
  const Shape& xs = *x.shape;
  const Shape& is = *indices.shape;
  const int64_t rank = int64_t(xs.size());
  if (!is_integral(indices.dtype)) invalid(op, "indices must have an integer type");
  if (is.empty()) type_error(op, op + " indices must have at least one dimension.");
  if (int64_t(d.start_index_map.size()) != is.back())
    type_error(op, op + " requires the index vector size (the last dimension of the indices, " +
                       std::to_string(is.back()) + ") to equal the size of " + map_name + " " +
                       ints_str(d.start_index_map) + ".");
  for (size_t i = 0; i < d.start_index_map.size(); ++i)
    if (d.start_index_map[i] < 0 || d.start_index_map[i] >= rank)
      type_error(op, "Invalid " + std::string(map_name) +
                         (op == "gather" ? "" : " mapping") + "; domain is [0, " +
                         std::to_string(rank) + "), got: " + std::to_string(i) + "->" +
                         std::to_string(d.start_index_map[i]) + ".");
  check_dims(op, map_name, d.start_index_map, rank, false);
  check_dims(op, collapsed_name, d.collapsed_slice_dims, rank, true);
  check_dims(op, "operand_batching_dims", d.operand_batching_dims, rank, true);
  if (d.operand_batching_dims.size() != d.start_indices_batching_dims.size())
    type_error(op, op + " requires operand_batching_dims and the indices' batching dims to "
                        "have the same length.");
  check_dims(op, "indices batching dims", d.start_indices_batching_dims,
             int64_t(is.size()) - 1, false);
  std::vector<bool> special(size_t(rank), false);
  for (int64_t c : d.collapsed_slice_dims) special[size_t(c)] = true;
  for (size_t i = 0; i < d.operand_batching_dims.size(); ++i) {
    const int64_t b = d.operand_batching_dims[i];
    if (special[size_t(b)])
      type_error(op, op + " operand_batching_dims and " + collapsed_name + " must be disjoint.");
    special[size_t(b)] = true;
    if (xs[size_t(b)] != is[size_t(d.start_indices_batching_dims[i])])
      type_error(op, op + " operand batching dims and indices batching dims must have the same "
                          "sizes, got operand shape " + shape_str(xs) + " and indices shape " +
                          shape_str(is) + ".");
  }
  for (int64_t m : d.start_index_map)
    for (int64_t b : d.operand_batching_dims)
      if (m == b) type_error(op, op + " " + map_name + " and operand_batching_dims must be disjoint.");
  std::vector<int64_t> window;
  for (int64_t i = 0; i < rank; ++i)
    if (!special[size_t(i)]) window.push_back(i);
  return window;
}

// Checks a gather (JAX's rules) and returns its result shape.
Shape gather(const TypeRef& x, const TypeRef& indices, const GatherDims& d,
             const std::vector<int64_t>& slice_sizes) {
  const Shape& xs = *x.shape;
  const Shape& is = *indices.shape;
  std::vector<int64_t> window = check_index_dims("gather", x, indices, d, "collapsed_slice_dims",
                                                 "start_index_map");
  if (slice_sizes.size() != xs.size())
    type_error("gather", "Gather op must have one slice size for every input dimension; got: "
                         "len(slice_sizes)=" + std::to_string(slice_sizes.size()) +
                         ", input_shape.rank=" + std::to_string(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    if (slice_sizes[i] < 0 || slice_sizes[i] > xs[i])
      type_error("gather", "Slice size at index " + std::to_string(i) +
                           " in gather op is out of range, must be within [0, " +
                           std::to_string(xs[i]) + " + 1), got " + std::to_string(slice_sizes[i]) + ".");
  for (int64_t c : d.collapsed_slice_dims)
    if (slice_sizes[size_t(c)] > 1)
      type_error("gather", "Gather op can only collapse slice dims with bound 1, but bound is " +
                           std::to_string(slice_sizes[size_t(c)]) + " for index " +
                           std::to_string(c) + " at position 0.");
  for (int64_t b : d.operand_batching_dims)
    if (slice_sizes[size_t(b)] != 1)
      type_error("gather", "Gather op can only have operand batching dims with bound 0/1, but "
                           "bound is " + std::to_string(slice_sizes[size_t(b)]) + " for index " +
                           std::to_string(b) + ".");
  const int64_t out_rank = int64_t(is.size()) - 1 + int64_t(d.offset_dims.size());
  check_dims("gather", "offset_dims", d.offset_dims, out_rank, true);
  if (d.offset_dims.size() != window.size())
    type_error("gather", "All components of the offset index in a gather op must either be a "
                         "offset dimension or explicitly collapsed/batching; got len(slice_sizes)=" +
                         std::to_string(xs.size()) + ", output_slice_sizes=" +
                         std::to_string(window.size()) + ", collapsed_slice_dims=" +
                         ints_str(d.collapsed_slice_dims) + ", operand_batching_dims=" +
                         ints_str(d.operand_batching_dims) + ".");
  Shape out(static_cast<size_t>(out_rank), 0);
  size_t w = 0, b = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (w < d.offset_dims.size() && d.offset_dims[w] == i) out[size_t(i)] = slice_sizes[size_t(window[w++])];
    else out[size_t(i)] = is[b++];
  }
  return out;
}

// Checks a scatter (JAX's rules; `dims` in gather terms, see GatherDims).
void scatter(ScatterOp op, const TypeRef& x, const TypeRef& indices, const TypeRef& updates,
             const GatherDims& d) {
  const std::string name = op == ScatterOp::set ? "scatter" : std::string("scatter_") + op_name(op);
  if (x.dtype != updates.dtype)
    type_error(name, std::string("lax.scatter requires arguments to have the same dtypes, got ") +
                         dtype_name(x.dtype) + ", " + dtype_name(updates.dtype) + ".");
  const Shape& xs = *x.shape;
  const Shape& is = *indices.shape;
  const Shape& us = *updates.shape;
  std::vector<int64_t> window = check_index_dims(name, x, indices, d, "inserted_window_dims",
                                                 "scatter_dims_to_operand_dims");
  check_dims(name, "update_window_dims", d.offset_dims, int64_t(us.size()), true);
  if (us.size() != d.offset_dims.size() + is.size() - 1)
    type_error(name, name + " op has window of size " + std::to_string(d.offset_dims.size()) +
                         "; doesn't match updates indices shape " + shape_str(is) +
                         " for updates shape " + shape_str(us) + ".");
  if (d.offset_dims.size() != window.size())
    type_error(name, name + " op has update window dims " + ints_str(d.offset_dims) +
                         " that do not match the operand's window dims for operand shape " +
                         shape_str(xs) + ".");
  size_t w = 0, b = 0;
  for (size_t i = 0; i < us.size(); ++i) {
    if (w < d.offset_dims.size() && d.offset_dims[w] == int64_t(i)) {
      if (us[i] > xs[size_t(window[w])])
        type_error(name, "Bounds of the window dimensions of updates must not exceed the bounds "
                         "of the corresponding dimensions of operand. For dimension " +
                         std::to_string(i) + ", updates bound is " + std::to_string(us[i]) +
                         ", operand bound is " + std::to_string(xs[size_t(window[w])]) + ".");
      ++w;
    } else {
      if (us[i] != is[b])
        type_error(name, "Bounds of the scatter dimensions of updates must be the same as the "
                         "bounds of the corresponding dimensions of scatter indices. For scatter "
                         "dimension " + std::to_string(b) + ", updates bound is " +
                         std::to_string(us[i]) + ", indices bound is " +
                         std::to_string(is[b]) + ".");
      ++b;
    }
  }
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

class DynamicSliceDef final : public TypedOpDef<DynamicSliceAttrs> {
 public:
  DynamicSliceDef() : TypedOpDef(OpKind::dynamic_slice) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    if (ins.empty()) invalid("dynamic_slice takes an operand");
    infer::dynamic_slice(*ins[0].shape, Types(ins.begin() + 1, ins.end()), get(a).slice_sizes);
    return {{get(a).slice_sizes, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::dynamic_slice(ins[0], Arrays(ins.begin() + 1, ins.end()), outs[0]);
  }
};

class DynamicUpdateSliceDef final : public TypedOpDef<NoAttrs> {
 public:
  DynamicUpdateSliceDef() : TypedOpDef(OpKind::dynamic_update_slice) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    if (ins.size() < 2) invalid("dynamic_update_slice takes an operand and an update");
    infer::dynamic_update_slice(ins[0], ins[1], Types(ins.begin() + 2, ins.end()));
    return {{*ins[0].shape, ins[0].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::dynamic_update_slice(ins[0], ins[1], Arrays(ins.begin() + 2, ins.end()), outs[0]);
  }
};

void check_mode(const OpDef& def, IndexMode mode) {
  if (mode != IndexMode::clip && mode != IndexMode::fill_or_drop)
    throw_error(ErrorKind::InvalidArgument, def.name(), "unknown mode " + std::to_string(int(mode)));
}

// Operands: x, indices, and in fill_or_drop mode the fill value (a scalar of x's dtype).
class GatherDef final : public TypedOpDef<GatherAttrs> {
 public:
  GatherDef() : TypedOpDef(OpKind::gather) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    const GatherAttrs& at = get(a);
    check_mode(*this, at.index_mode);
    const bool fill = at.index_mode == IndexMode::fill_or_drop;
    need(ins, fill ? 3 : 2);
    if (fill && (!ins[2].shape->empty() || ins[2].dtype != ins[0].dtype))
      invalid("the fill value must be a scalar of the operand's dtype, got " +
              type_str({*ins[2].shape, ins[2].dtype}));
    return {{infer::gather(ins[0], ins[1], at.dims, at.slice_sizes), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const GatherAttrs& at = get(a);
    cpu::gather(ins[0], ins[1], at.dims, at.slice_sizes, at.index_mode, at.wrap_negative,
                ins.size() > 2 ? ins[2] : Array(), outs[0]);
  }
};

// Operands: x, indices, updates.
class ScatterDef final : public TypedOpDef<ScatterAttrs> {
 public:
  ScatterDef() : TypedOpDef(OpKind::scatter) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    const ScatterAttrs& at = get(a);
    need(ins, 3);
    check_mode(*this, at.index_mode);
    infer::scatter(at.op, ins[0], ins[1], ins[2], at.dims);
    return {{*ins[0].shape, ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const ScatterAttrs& at = get(a);
    cpu::scatter(at.op, ins[0], ins[1], ins[2], at.dims, at.index_mode, at.wrap_negative, outs[0]);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>&) const override {
    return double(ins[0].size()) + double(ins[2].size());
  }

 protected:
  // "scatter" for set, "scatter_add" etc.
  std::string spell(int index, const char* enum_name) const override {
    return index == int(ScatterOp::set) ? "scatter" : std::string("scatter_") + enum_name;
  }
};

}  // namespace

TINYXLA_REGISTER_OP(dynamic_slice, DynamicSliceDef)
TINYXLA_REGISTER_OP(dynamic_update_slice, DynamicUpdateSliceDef)
TINYXLA_REGISTER_OP(gather, GatherDef)
TINYXLA_REGISTER_OP(scatter, ScatterDef)

}  // namespace tinyxla::ops
