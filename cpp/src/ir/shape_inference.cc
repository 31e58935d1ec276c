// Validation and result types of every op (see shape_inference.h); messages follow JAX's.
#include "shape_inference.h"

#include <algorithm>

#include "tinyxla/error.h"

namespace tinyxla::infer {
namespace {

[[noreturn]] void invalid(const std::string& op, const std::string& msg) {
  throw_error(ErrorKind::InvalidArgument, op, msg);
}

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::eq || op == BinaryOp::ne || op == BinaryOp::lt ||
         op == BinaryOp::le || op == BinaryOp::gt || op == BinaryOp::ge;
}

}  // namespace

DType unary_dtype(UnaryOp op, DType t) {
  switch (op) {
    case UnaryOp::is_finite: case UnaryOp::isnan: case UnaryOp::isinf: case UnaryOp::signbit:
      return DType::Bool;
    case UnaryOp::abs: case UnaryOp::real: case UnaryOp::imag:
      return real_dtype(t);
    default:
      return t;
  }
}

DType binary_dtype(BinaryOp op, DType t) {
  if (is_comparison(op)) return DType::Bool;
  if (op == BinaryOp::complex) return t == DType::F64 ? DType::C128 : DType::C64;
  return t;
}

void check_same_dtypes(const std::string& op, const std::vector<DType>& dtypes) {
  for (DType t : dtypes)
    if (t != dtypes[0])
      throw_error(ErrorKind::TypeError, op,
                  std::string("requires arguments to have the same dtypes, got ") +
                      dtype_name(dtypes[0]) + ", " + dtype_name(t) + ".");
}

Shape binary_shape(BinaryOp op, const Shape& x, const Shape& y) {
  return x == y ? x : broadcast_shapes(x, y, op_name(op));
}

void select_n(const TypeRef& which, const std::vector<TypeRef>& cases) {
  if (cases.empty()) invalid("select_n", "select_n requires at least one case");
  std::vector<DType> dtypes;
  for (const TypeRef& c : cases) dtypes.push_back(c.dtype);
  check_same_dtypes("select_n", dtypes);
  const Shape& shape = *cases[0].shape;
  for (const TypeRef& c : cases)
    if (*c.shape != shape)
      invalid("select_n", "select_n cases must have the same shapes, got " + shape_str(shape) +
                              " and " + shape_str(*c.shape));
  if (!which.shape->empty() && *which.shape != shape)
    invalid("select_n", "select_n selector must be scalar or have the same shape as cases, got " +
                            shape_str(*which.shape));
  if (which.dtype != DType::Bool && which.dtype != DType::I32)
    throw_error(ErrorKind::TypeError, "select_n", "which must be a boolean or int32 type");
}

void clamp(const TypeRef& lo, const TypeRef& x, const TypeRef& hi) {
  check_same_dtypes("clamp", {lo.dtype, x.dtype, hi.dtype});
  for (const TypeRef* b : {&lo, &hi})
    if (!b->shape->empty() && *b->shape != *x.shape)
      invalid("clamp", "clamp bounds must be scalars or have the operand's shape " +
                           shape_str(*x.shape) + ", got " + shape_str(*b->shape));
}

Shape bitcast_convert(const Shape& x, DType from_t, DType to_t) {
  size_t from = itemsize(from_t), to = itemsize(to_t);
  Shape shape = x;
  if (to < from) {
    shape.push_back(int64_t(from / to));
  } else if (to > from) {
    if (shape.empty() || shape.back() != int64_t(to / from))
      invalid("bitcast_convert_type",
              std::string("when converting to a wider type, the last dimension must be ") +
                  std::to_string(to / from) + ", got shape " + shape_str(shape));
    shape.pop_back();
  }
  return shape;
}

void full(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) invalid("full", "negative dimensions are not allowed: " + shape_str(shape));
}

int64_t iota(const Shape& shape, int64_t dimension) {
  return canonical_axis(dimension, int64_t(shape.size()), "iota");
}

Shape reduce(ReduceOp op, const Shape& x, const std::vector<int64_t>& axes,
             std::vector<int64_t>* canon) {
  std::string name = std::string("reduce_") + op_name(op);
  const int64_t rank = int64_t(x.size());
  std::vector<bool> reduced(x.size(), false);
  canon->clear();
  for (int64_t a : axes) {
    int64_t c = canonical_axis(a, rank, name.c_str());
    if (reduced[size_t(c)]) invalid(name, "duplicate value in 'axes': " + ints_str(axes));
    reduced[size_t(c)] = true;
    canon->push_back(c);
  }
  std::sort(canon->begin(), canon->end());
  Shape shape;
  for (size_t i = 0; i < x.size(); ++i)
    if (!reduced[i]) shape.push_back(x[i]);
  return shape;
}

Shape argreduce(bool is_max, const Shape& x, int64_t* axis, DType index_dtype) {
  const char* name = is_max ? "argmax" : "argmin";
  *axis = canonical_axis(*axis, int64_t(x.size()), name);
  if (!is_integral(index_dtype))
    throw_error(ErrorKind::TypeError, name, "index_dtype must be an integer type");
  if (x[size_t(*axis)] == 0)
    invalid(name, std::string("attempt to get ") + name + " of an empty sequence");
  Shape shape = x;
  shape.erase(shape.begin() + *axis);
  return shape;
}

void sort(const std::vector<TypeRef>& xs, int64_t* dimension, int num_keys) {
  if (xs.empty()) invalid("sort", "sort requires at least one operand");
  const Shape& shape = *xs[0].shape;
  for (const TypeRef& x : xs)
    if (*x.shape != shape)
      throw_error(ErrorKind::TypeError, "sort", "sort requires all operands to have the same shape, got " +
                             shape_str(shape) + " and " + shape_str(*x.shape));
  if (shape.empty()) invalid("sort", "sort requires an operand of rank at least 1");
  *dimension = canonical_axis(*dimension, int64_t(shape.size()), "sort");
  if (num_keys < 1 || size_t(num_keys) > xs.size())
    invalid("sort", "num_keys must be in [1, " + std::to_string(xs.size()) + "], got " +
                        std::to_string(num_keys));
}

void cumulative(CumulativeOp op, const TypeRef& x, int64_t* axis) {
  const std::string name = std::string("cum") + op_name(op);
  *axis = canonical_axis(*axis, int64_t(x.shape->size()), name.c_str());
  if (op == CumulativeOp::logsumexp && !is_floating(x.dtype))
    throw_error(ErrorKind::TypeError, name, name + " requires a floating-point operand");
  if ((op == CumulativeOp::max || op == CumulativeOp::min) && is_complex(x.dtype))
    throw_error(ErrorKind::TypeError, name, name + " does not accept complex operands");
}

void reshape(const Shape& x, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) invalid("reshape", "negative dimensions are not allowed: " + shape_str(shape));
  if (num_elements(shape) != num_elements(x))
    throw_error(ErrorKind::TypeError, "reshape",
                "cannot reshape array of shape " + shape_str(x) + " (size " +
                    std::to_string(num_elements(x)) + ") into shape " + shape_str(shape) +
                    " (size " + std::to_string(num_elements(shape)) + ")");
}

Shape transpose(const Shape& x, const std::vector<int64_t>& perm) {
  auto fail = [&] {
    invalid("transpose", "transpose permutation isn't a permutation of operand dimensions, got "
                         "permutation " + ints_str(perm) + " for operand shape " + shape_str(x));
  };
  if (perm.size() != x.size()) fail();
  std::vector<bool> seen(perm.size(), false);
  Shape shape(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= int64_t(x.size()) || seen[size_t(p)]) fail();
    seen[size_t(p)] = true;
    shape[i] = x[size_t(p)];
  }
  return shape;
}

void broadcast_in_dim(const Shape& x, const Shape& shape, const std::vector<int64_t>& dims) {
  if (dims.size() != x.size())
    invalid("broadcast_in_dim", "broadcast_dimensions must have length equal to operand ndim; "
                                "got broadcast_dimensions " + ints_str(dims) +
                                " for operand ndim " + std::to_string(x.size()) + ".");
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= int64_t(shape.size()) || (i > 0 && d <= dims[i - 1]))
      invalid("broadcast_in_dim", "broadcast_dimensions must be strictly increasing and in range; "
                                  "got broadcast_dimensions " + ints_str(dims));
    if (x[i] != 1 && x[i] != shape[size_t(d)])
      invalid("broadcast_in_dim",
              "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
              "corresponding dimensions in the target broadcast shape; got operand of shape " +
                  shape_str(x) + ", target broadcast shape " + shape_str(shape) +
                  ", broadcast_dimensions " + ints_str(dims));
  }
  for (int64_t d : shape)
    if (d < 0)
      invalid("broadcast_in_dim", "negative dimensions are not allowed: " + shape_str(shape));
}

Shape slice(const Shape& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& steps) {
  size_t n = x.size();
  if (start.size() != n || limit.size() != n || (!steps.empty() && steps.size() != n))
    invalid("slice", "slice start_indices, limit_indices and strides must have length " +
                         std::to_string(n));
  Shape shape(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t st = steps.empty() ? 1 : steps[i];
    if (st <= 0) invalid("slice", "slice strides must be positive, got " + ints_str(steps));
    if (start[i] < 0 || limit[i] > x[i] || start[i] > limit[i])
      invalid("slice", "slice indices out of bounds or decreasing: start_indices " +
                           ints_str(start) + ", limit_indices " + ints_str(limit) +
                           " for operand shape " + shape_str(x));
    shape[i] = (limit[i] - start[i] + st - 1) / st;
  }
  return shape;
}

std::vector<int64_t> rev(const Shape& x, const std::vector<int64_t>& dims) {
  std::vector<bool> seen(x.size(), false);
  std::vector<int64_t> canon;
  for (int64_t d : dims) {
    int64_t c = canonical_axis(d, int64_t(x.size()), "rev");
    if (seen[size_t(c)]) invalid("rev", "rev dimensions must be unique, got " + ints_str(dims));
    seen[size_t(c)] = true;
    canon.push_back(c);
  }
  return canon;
}

Shape pad(const TypeRef& x, const TypeRef& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  check_same_dtypes("pad", {x.dtype, padding_value.dtype});
  size_t n = x.shape->size();
  if (!padding_value.shape->empty()) invalid("pad", "padding_value must be a scalar");
  if (lo.size() != n || hi.size() != n || interior.size() != n)
    invalid("pad", "padding_config has the wrong length for operand shape " +
                       shape_str(*x.shape));
  Shape shape(n);
  for (size_t i = 0; i < n; ++i) {
    if (interior[i] < 0)
      invalid("pad", "interior padding must be non-negative, got " + ints_str(interior));
    int64_t d = (*x.shape)[i];
    int64_t core = d == 0 ? 0 : d + (d - 1) * interior[i];
    shape[i] = lo[i] + core + hi[i];
    if (shape[i] < 0)
      invalid("pad", "Dimension size after padding is not at least 0, got result shape " +
                         shape_str(shape));
  }
  return shape;
}

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

}  // namespace

void dynamic_slice(const Shape& x, const std::vector<TypeRef>& starts,
                   const std::vector<int64_t>& sizes) {
  if (sizes.size() != x.size())
    throw_error(ErrorKind::TypeError, "dynamic_slice",
                "dynamic_slice slice_sizes must have the same length as the operand's rank, "
                "got slice_sizes " + ints_str(sizes) + " for operand shape " + shape_str(x));
  for (size_t i = 0; i < x.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > x[i])
      throw_error(ErrorKind::TypeError, "dynamic_slice",
                  "slice slice_sizes must be between zero and the operand shape, got "
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

namespace {

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
  if (!is_integral(indices.dtype))
    type_error(op, op + " indices must have an integer type, got " + dtype_name(indices.dtype) + ".");
  if (is.empty()) type_error(op, op + " indices must have at least one dimension.");
  if (int64_t(d.start_index_map.size()) != is.back())
    type_error(op, op + " requires the index vector size (the last dimension of the indices, " +
                       std::to_string(is.back()) + ") to equal the size of " + map_name + " " +
                       ints_str(d.start_index_map) + ".");
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

}  // namespace

Shape gather(const TypeRef& x, const TypeRef& indices, const GatherDims& d,
             const std::vector<int64_t>& slice_sizes) {
  const Shape& xs = *x.shape;
  const Shape& is = *indices.shape;
  std::vector<int64_t> window = check_index_dims("gather", x, indices, d, "collapsed_slice_dims",
                                                 "start_index_map");
  if (slice_sizes.size() != xs.size())
    type_error("gather", "gather slice_sizes must have the same length as the operand's rank, "
                         "got slice_sizes " + ints_str(slice_sizes) + " for operand shape " +
                         shape_str(xs) + ".");
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

void scatter(ScatterOp op, const TypeRef& x, const TypeRef& indices, const TypeRef& updates,
             const GatherDims& d) {
  const std::string name = op == ScatterOp::set ? "scatter" : std::string("scatter_") + op_name(op);
  check_same_dtypes(name, {x.dtype, updates.dtype});
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
                         std::to_string(us[i]) + ", scatter_indices bound is " +
                         std::to_string(is[b]) + ".");
      ++b;
    }
  }
}

Shape concatenate(const std::vector<TypeRef>& xs, int64_t* dimension) {
  if (xs.empty()) invalid("concatenate", "concatenate requires at least one operand");
  std::vector<DType> dtypes;
  for (const TypeRef& x : xs) dtypes.push_back(x.dtype);
  check_same_dtypes("concatenate", dtypes);
  const Shape& first = *xs[0].shape;
  *dimension = canonical_axis(*dimension, int64_t(first.size()), "concatenate");
  Shape shape = first;
  shape[size_t(*dimension)] = 0;
  for (const TypeRef& x : xs) {
    const Shape& s = *x.shape;
    bool ok = s.size() == first.size();
    for (size_t i = 0; ok && i < s.size(); ++i) ok = int64_t(i) == *dimension || s[i] == first[i];
    if (!ok)
      invalid("concatenate", "Cannot concatenate arrays with shapes that differ in dimensions "
                             "other than the one being concatenated: concatenating along "
                             "dimension " + std::to_string(*dimension) + " for shapes " +
                             shape_str(first) + ", " + shape_str(s) + ".");
    shape[size_t(*dimension)] += s[size_t(*dimension)];
  }
  return shape;
}

DType eig(const char* op, const TypeRef& x) {
  const Shape& s = *x.shape;
  if (s.size() < 2)
    throw_error(ErrorKind::TypeError, op, std::string(op) + " requires an operand of rank at least 2, got " +
                                             shape_str(s));
  if (s[s.size() - 1] != s[s.size() - 2])
    invalid(op, std::string(op) + " requires square matrices, got shape " + shape_str(s));
  switch (x.dtype) {
    case DType::F32: return std::string(op) == "eig" ? DType::C64 : DType::F32;
    case DType::F64: return std::string(op) == "eig" ? DType::C128 : DType::F64;
    case DType::C64: case DType::C128: return std::string(op) == "eig" ? x.dtype : real_dtype(x.dtype);
    default:
      throw_error(ErrorKind::TypeError, op, std::string(op) +
                  " supports float32, float64, complex64 and complex128, got " + dtype_name(x.dtype));
  }
}

Shape dot_general(const TypeRef& lhs, const TypeRef& rhs, const DotDims& dims, double* k) {
  check_same_dtypes("dot_general", {lhs.dtype, rhs.dtype});
  const Shape& ls = *lhs.shape;
  const Shape& rs = *rhs.shape;
  if (dims.lhs_contracting.size() != dims.rhs_contracting.size() ||
      dims.lhs_batch.size() != dims.rhs_batch.size())
    invalid("dot_general", "dot_general requires equal numbers of lhs and rhs contracting and "
                           "batch dimensions");
  std::vector<bool> lused(ls.size(), false), rused(rs.size(), false);
  auto use = [](std::vector<bool>& used, int64_t d, const char* what) {
    if (d < 0 || d >= int64_t(used.size()) || used[size_t(d)])
      invalid("dot_general", std::string("dot_general requires ") + what +
                                 " dimensions to be unique and in range");
    used[size_t(d)] = true;
  };
  Shape shape;
  *k = 1;
  for (size_t i = 0; i < dims.lhs_batch.size(); ++i) {
    use(lused, dims.lhs_batch[i], "lhs batch");
    use(rused, dims.rhs_batch[i], "rhs batch");
    int64_t a = ls[size_t(dims.lhs_batch[i])], b = rs[size_t(dims.rhs_batch[i])];
    if (a != b)
      invalid("dot_general", "dot_general requires lhs batch dimensions and rhs batch dimensions "
                             "to have the same shape, got " + std::to_string(a) + " and " +
                             std::to_string(b) + ".");
    shape.push_back(a);
  }
  for (size_t i = 0; i < dims.lhs_contracting.size(); ++i) {
    use(lused, dims.lhs_contracting[i], "lhs contracting");
    use(rused, dims.rhs_contracting[i], "rhs contracting");
    int64_t a = ls[size_t(dims.lhs_contracting[i])];
    int64_t b = rs[size_t(dims.rhs_contracting[i])];
    if (a != b)
      invalid("dot_general", "dot_general requires contracting dimensions to have the same "
                             "shape, got " + std::to_string(a) + " and " + std::to_string(b) + ".");
    *k *= double(a);
  }
  for (size_t i = 0; i < ls.size(); ++i)
    if (!lused[i]) shape.push_back(ls[i]);
  for (size_t i = 0; i < rs.size(); ++i)
    if (!rused[i]) shape.push_back(rs[i]);
  return shape;
}

}  // namespace tinyxla::infer
