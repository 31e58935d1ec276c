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

// `steps` may be empty (all 1).
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

// Returns the canonical dims in the given order.
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

// Returns the result shape; `dimension` is made non-negative.
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
