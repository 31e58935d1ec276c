// Definitions of the layout ops. reshape, transpose, broadcast_in_dim, slice and rev are
// views of their operand's buffer (eager and jit make the same view); pad and concatenate
// copy.
#include "layout.h"

#include <algorithm>

#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

void reshape(const Shape& x, const Shape& shape) {
  int64_t size = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw_error(ErrorKind::TypeError, "reshape",
                  "reshape new_sizes must all be positive, got " + shape_str(shape) + ".");
    size = checked_mul(size, d, "reshape");
  }
  if (size != num_elements(x))
    throw_error(ErrorKind::TypeError, "reshape",
                "cannot reshape array of shape " + shape_str(x) + " (size " +
                    std::to_string(num_elements(x)) + ") into shape " + shape_str(shape) +
                    " (size " + std::to_string(num_elements(shape)) + ")");
}

Shape transpose(const Shape& x, const std::vector<int64_t>& perm) {
  auto fail = [&] {
    throw_error(ErrorKind::TypeError, "transpose",
                "transpose permutation isn't a permutation of operand dimensions, got "
                "permutation " + ints_str(perm) + " for operand shape " + shape_str(x) + ".");
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
  auto type_error = [](const std::string& msg) {
    throw_error(ErrorKind::TypeError, "broadcast_in_dim", "broadcast_in_dim " + msg);
  };
  for (int64_t d : shape)
    if (d < 0)
      type_error("shape must have every element be nonnegative, got " + shape_str(shape) + ".");
  if (dims.size() != x.size())
    type_error("broadcast_dimensions must have length equal to operand ndim; got "
               "broadcast_dimensions " + ints_str(dims) + " for operand ndim " +
               std::to_string(x.size()) + ".");
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= int64_t(shape.size()))
      type_error("broadcast_dimensions must be a subset of output dimensions, got " +
                 ints_str(dims) + " for operand ndim " + std::to_string(x.size()) +
                 " and shape " + shape_str(shape) + ".");
    if (i > 0 && d <= dims[i - 1])  // lax allows it (a transpose too); our view does not
      invalid("broadcast_in_dim", "broadcast_dimensions must be strictly increasing, got " +
                                      ints_str(dims));
    if (x[i] != 1 && x[i] != shape[size_t(d)])
      type_error("operand dimension sizes must either be 1, or be equal to their corresponding "
                 "dimensions in the target broadcast shape; got operand of shape " +
                 shape_str(x) + ", target broadcast shape " + shape_str(shape) +
                 ", broadcast_dimensions " + ints_str(dims) + " ");
  }
}

// `steps` may be empty (all 1).
Shape slice(const Shape& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
            const std::vector<int64_t>& steps) {
  // JAX's checks, in its order.
  auto type_error = [](const std::string& msg) {
    throw_error(ErrorKind::TypeError, "slice", "slice " + msg);
  };
  const size_t n = x.size();
  if (start.size() != n)
    type_error("start_indices must have length equal to the number of dimensions of the "
               "operand, got indices " + ints_str(start) + " for operand shape " + shape_str(x) +
               ".");
  if (limit.size() != n)
    type_error("limit_indices must have the same length as start_indices, got start_indices " +
               ints_str(start) + " and limit_indices " + ints_str(limit) + ".");
  for (size_t i = 0; i < n; ++i)
    if (limit[i] > x[i])
      type_error("limit_indices must be less than or equal to operand shape, got "
                 "limit_indices " + ints_str(limit) + " for operand shape " + shape_str(x) + ".");
  for (size_t i = 0; i < n; ++i)
    if (start[i] < 0)
      type_error("start_indices must be greater than or equal to zero, got start_indices of " +
                 ints_str(start) + ".");
  for (size_t i = 0; i < n; ++i)
    if (limit[i] < start[i])
      type_error("limit_indices must be greater than or equal to start_indices, got "
                 "start_indices " + ints_str(start) + " and limit_indices " + ints_str(limit) +
                 ".");
  if (!steps.empty() && steps.size() != n)
    type_error("strides must have length equal to the number of dimensions of the operand, "
               "got strides " + ints_str(steps) + " for operand shape " + shape_str(x) + ".");
  Shape shape(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t st = steps.empty() ? 1 : steps[i];
    if (st <= 0) type_error("strides must be positive, got " + ints_str(steps));
    const int64_t extent = limit[i] - start[i];  // in [0, x[i]]: no overflow
    shape[i] = extent / st + (extent % st != 0);
  }
  return shape;
}

// Returns the canonical dims in the given order.
std::vector<int64_t> rev(const Shape& x, const std::vector<int64_t>& dims) {
  std::vector<bool> seen(x.size(), false);
  std::vector<int64_t> canon;
  for (int64_t d : dims) {
    if (d >= int64_t(x.size()) || d < -int64_t(x.size()))
      throw_error(ErrorKind::TypeError, "rev",
                  "rev dimensions must all be less than operand ndim, got dimensions " +
                      ints_str(dims) + " for operand ndim " + std::to_string(x.size()) + ".");
    const int64_t c = d < 0 ? d + int64_t(x.size()) : d;
    if (seen[size_t(c)])
      throw_error(ErrorKind::TypeError, "rev",
                  "rev dimensions must be unique, got " + ints_str(dims) + ".");
    seen[size_t(c)] = true;
    canon.push_back(c);
  }
  return canon;
}

Shape pad(const TypeRef& x, const TypeRef& padding_value, const std::vector<int64_t>& lo,
          const std::vector<int64_t>& hi, const std::vector<int64_t>& interior) {
  if (x.dtype != padding_value.dtype)
    throw_error(ErrorKind::TypeError, "pad",
                std::string("pad operand and padding_value must be same dtype: got ") +
                    dtype_name(x.dtype) + " and " + dtype_name(padding_value.dtype) + ".");
  const size_t n = x.shape->size();
  if (!padding_value.shape->empty()) invalid("pad", "padding_value must be a scalar");
  // padding_config as JAX prints it: ((lo, hi, interior),) per dimension.
  std::string config = "(";
  const size_t m = std::min({lo.size(), hi.size(), interior.size()});
  for (size_t i = 0; i < m; ++i)
    config += (i ? ", (" : "(") + std::to_string(lo[i]) + ", " + std::to_string(hi[i]) + ", " +
              std::to_string(interior[i]) + ")";
  config += m == 1 ? ",)" : ")";
  if (lo.size() != n || hi.size() != n || interior.size() != n)
    invalid("pad", "length of padding_config must equal the number of axes of operand, got "
                   "padding_config " + config + " for operand shape " + shape_str(*x.shape));
  for (size_t i = 0; i < n; ++i)
    if (interior[i] < 0)
      invalid("pad", "interior padding in padding_config must be nonnegative, got "
                     "padding_config " + config);
  Shape shape(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t d = (*x.shape)[i];
    const int64_t core =
        d == 0 ? 0 : checked_add(d, checked_mul(d - 1, interior[i], "pad"), "pad");
    shape[i] = checked_add(checked_add(lo[i], core, "pad"), hi[i], "pad");
  }
  for (size_t i = 0; i < n; ++i)
    if (shape[i] < 0)
      invalid("pad", "Dimension size after padding is not at least 0, got result shape " +
                         shape_str(shape) + ", for padding_config " + config +
                         " and operand shape " + shape_str(*x.shape));
  return shape;
}

// Returns the result shape; `dimension` is made non-negative.
Shape concatenate(const std::vector<TypeRef>& xs, int64_t* dimension) {
  // JAX's checks, in its order (negative dimensions count from the end, which lax does not
  // allow).
  if (xs.empty()) invalid("concatenate", "concatenate requires a non-empty sequences of arrays");
  auto type_error = [](const std::string& msg) {
    throw_error(ErrorKind::TypeError, "concatenate", msg);
  };
  const Shape& first = *xs[0].shape;
  for (const TypeRef& x : xs)
    if (x.shape->size() != first.size())
      type_error("Cannot concatenate arrays with different numbers of dimensions: got " +
                 shapes_str(xs, ", ") + ".");
  const int64_t rank = int64_t(first.size());
  if (*dimension >= rank || *dimension < -rank)
    type_error("concatenate dimension out of bounds: dimension " + std::to_string(*dimension) +
               " for shapes " + shapes_str(xs, ", ") + ".");
  if (*dimension < 0) *dimension += rank;
  Shape shape = first;
  shape[size_t(*dimension)] = 0;
  for (const TypeRef& x : xs) {
    const Shape& s = *x.shape;
    for (size_t i = 0; i < s.size(); ++i)
      if (int64_t(i) != *dimension && s[i] != first[i])
        type_error("Cannot concatenate arrays with shapes that differ in dimensions other than "
                   "the one being concatenated: concatenating along dimension " +
                   std::to_string(*dimension) + " for shapes " + shapes_str(xs, ", ") + ".");
    shape[size_t(*dimension)] =
        checked_add(shape[size_t(*dimension)], s[size_t(*dimension)], "concatenate");
  }
  std::vector<DType> dtypes;
  for (const TypeRef& x : xs) dtypes.push_back(x.dtype);
  check_same_dtypes("concatenate", dtypes);
  return shape;
}

}  // namespace
}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

class ReshapeDef final : public TypedOpDef<ReshapeAttrs> {
 public:
  ReshapeDef() : TypedOpDef(OpKind::reshape) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    infer::reshape(*ins[0].shape, get(a).shape);
    return {{get(a).shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  bool view_needs_dense() const override { return true; }
  Array view(const std::any&, const ValueType& t, const Array& x) const override {
    return view_of(x, t, row_major_strides(t.shape), x.offset());
  }
};

class TransposeDef final : public TypedOpDef<TransposeAttrs> {
 public:
  TransposeDef() : TypedOpDef(OpKind::transpose) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    return {{infer::transpose(*ins[0].shape, get(a).perm), ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const std::vector<int64_t>& perm = get(a).perm;
    Strides s(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) s[i] = x.strides()[size_t(perm[i])];
    return view_of(x, t, std::move(s), x.offset());
  }
};

class BroadcastInDimDef final : public TypedOpDef<BroadcastInDimAttrs> {
 public:
  BroadcastInDimDef() : TypedOpDef(OpKind::broadcast_in_dim) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    infer::broadcast_in_dim(*ins[0].shape, get(a).shape, get(a).dims);
    return {{get(a).shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const std::vector<int64_t>& dims = get(a).dims;
    Strides s(t.shape.size(), 0);
    for (size_t i = 0; i < dims.size(); ++i)
      s[size_t(dims[i])] = x.shape()[i] == 1 ? 0 : x.strides()[i];
    return view_of(x, t, std::move(s), x.offset());
  }
};

class SliceDef final : public TypedOpDef<SliceAttrs> {
 public:
  SliceDef() : TypedOpDef(OpKind::slice) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    SliceAttrs& at = get(a);
    Shape shape = infer::slice(*ins[0].shape, at.start, at.limit, at.strides);
    if (at.strides.empty()) at.strides.assign(shape.size(), 1);
    return {{std::move(shape), ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    const SliceAttrs& at = get(a);
    Strides s(t.shape.size());
    int64_t offset = x.offset();
    for (size_t i = 0; i < s.size(); ++i) {
      s[i] = x.strides()[i] * at.strides[i];
      if (t.shape[i] > 0) offset += at.start[i] * x.strides()[i];
    }
    return view_of(x, t, std::move(s), offset);
  }
};

class RevDef final : public TypedOpDef<RevAttrs> {
 public:
  RevDef() : TypedOpDef(OpKind::rev) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    get(a).dims = infer::rev(*ins[0].shape, get(a).dims);
    return {{*ins[0].shape, ins[0].dtype}};
  }
  bool is_view() const override { return true; }
  Array view(const std::any& a, const ValueType& t, const Array& x) const override {
    Strides s = x.strides();
    int64_t offset = x.offset();
    for (int64_t d : get(a).dims) {
      if (x.shape()[size_t(d)] > 0) offset += (x.shape()[size_t(d)] - 1) * s[size_t(d)];
      s[size_t(d)] = -s[size_t(d)];
    }
    return view_of(x, t, std::move(s), offset);
  }
};

class PadDef final : public TypedOpDef<PadAttrs> {
 public:
  PadDef() : TypedOpDef(OpKind::pad) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    const PadAttrs& at = get(a);
    return {{infer::pad(ins[0], ins[1], at.low, at.high, at.interior), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    const PadAttrs& at = get(a);
    cpu::pad(ins[0], ins[1], at.low, at.high, at.interior, outs[0]);
  }
};

class ConcatenateDef final : public TypedOpDef<ConcatenateAttrs> {
 public:
  ConcatenateDef() : TypedOpDef(OpKind::concatenate) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    Shape shape = infer::concatenate(ins, &get(a).dimension);
    return {{std::move(shape), ins[0].dtype}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::concatenate(ins, get(a).dimension, outs[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(reshape, ReshapeDef)
TINYXLA_REGISTER_OP(transpose, TransposeDef)
TINYXLA_REGISTER_OP(broadcast_in_dim, BroadcastInDimDef)
TINYXLA_REGISTER_OP(slice, SliceDef)
TINYXLA_REGISTER_OP(rev, RevDef)
TINYXLA_REGISTER_OP(pad, PadDef)
TINYXLA_REGISTER_OP(concatenate, ConcatenateDef)

}  // namespace tinyxla::ops
