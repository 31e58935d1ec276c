// Definitions of the elementwise ops (unary, binary, select_n, clamp, convert,
// bitcast_convert) and iota.
#include "elementwise.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "../cpu/elementwise_ops.h"
#include "../cpu/kernels.h"

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {
namespace {

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::eq || op == BinaryOp::ne || op == BinaryOp::lt ||
         op == BinaryOp::le || op == BinaryOp::gt || op == BinaryOp::ge;
}

// The dtypes JAX's lax accepts for an op, and the names its message gives them.
struct Accepted {
  bool (*ok)(DType);
  const char* names;
};
bool num(DType t) { return !is_bool(t); }
bool inexact(DType t) { return is_inexact(t); }
bool floating(DType t) { return is_floating(t); }
bool complex_(DType t) { return is_complex(t); }
bool integral(DType t) { return is_integral(t); }
bool bool_or_int(DType t) { return is_bool(t) || is_integral(t); }
bool signed_or_inexact(DType t) { return is_signed_int(t) || is_inexact(t); }
bool f32_or_f64(DType t) { return t == DType::F32 || t == DType::F64; }
bool real(DType t) { return !is_complex(t); }
bool ordered(DType t) { return !is_complex(t); }
constexpr Accepted kNumber{num, "integer, floating, complexfloating"};
constexpr Accepted kInexact{inexact, "floating, complexfloating"};
constexpr Accepted kFloating{floating, "floating"};
constexpr Accepted kBoolOrInt{bool_or_int, "integer, bool"};
constexpr Accepted kIntegral{integral, "integer"};

// nullptr: every dtype (tinyxla's own ops, and lax's that take all).
const Accepted* accepted(UnaryOp op) {
  static constexpr Accepted kAbs{signed_or_inexact, "floating, complexfloating, signedinteger"};
  static constexpr Accepted kComplex{complex_, "complexfloating"};
  static constexpr Accepted kConj{[](DType t) { return f32_or_f64(t) || is_complex(t); },
                                  "float32, complexfloating, float64"};
  using U = UnaryOp;
  switch (op) {
    case U::neg: case U::sign: case U::square: return &kNumber;
    case U::abs: return &kAbs;
    case U::floor: case U::ceil: case U::round: case U::is_finite: case U::cbrt: case U::erf:
    case U::erfc: case U::erf_inv: case U::lgamma: case U::digamma: return &kFloating;
    case U::exp: case U::exp2: case U::log: case U::log1p: case U::expm1: case U::tanh:
    case U::logistic: case U::sin: case U::cos: case U::tan: case U::asin: case U::acos:
    case U::atan: case U::sinh: case U::cosh: case U::asinh: case U::acosh: case U::atanh:
    case U::sqrt: case U::rsqrt: return &kInexact;
    case U::bitwise_not: return &kBoolOrInt;
    case U::real: case U::imag: return &kComplex;
    case U::conj: return &kConj;
    case U::population_count: case U::clz: return &kIntegral;
    default: return nullptr;
  }
}

const Accepted* accepted(BinaryOp op) {
  static constexpr Accepted kRem{real, "integer, floating"};
  static constexpr Accepted kOrdered{ordered, "integer, floating, bool"};
  static constexpr Accepted kFloat32Or64{f32_or_f64, "float32, float64"};
  using B = BinaryOp;
  switch (op) {
    case B::add: case B::sub: case B::mul: case B::div: return &kNumber;
    case B::rem: return &kRem;
    case B::pow: case B::atan2: return &kInexact;
    case B::and_: case B::or_: case B::xor_: return &kBoolOrInt;
    case B::shift_left: case B::shift_right_arithmetic: case B::shift_right_logical:
      return &kIntegral;
    case B::lt: case B::le: case B::gt: case B::ge: return &kOrdered;
    case B::nextafter: return &kFloating;
    case B::complex: return &kFloat32Or64;
    default: return nullptr;
  }
}

// lax's name of an op as its messages print it ("not", "and"), made once per op: the
// eager dispatch path reads it on every call.
template <class Op>
const std::string& lax_name(Op op) {
  static const std::vector<std::string>* names = [] {
    auto* v = new std::vector<std::string>();  // never destroyed, as the other tables
    for (int i = 0; i < EnumNames<Op>::count; ++i) {
      const Op o = static_cast<Op>(i);
      if constexpr (std::is_same_v<Op, UnaryOp>)
        v->push_back(o == UnaryOp::bitwise_not ? "not" : op_name(o));
      else
        v->push_back(detail::enum_text(op_name(o)));
    }
    return v;
  }();
  return (*names)[size_t(op)];
}

// JAX's TypeError for an operand dtype the op does not take (`position` < 0: a unary op).
void check_accepted(const char* op, const Accepted* acc, DType t, int position) {
  if (!acc || acc->ok(t)) return;
  const std::string at = position < 0 ? "" : " at position " + std::to_string(position);
  throw_error(ErrorKind::TypeError, op,
              std::string(op) + " does not accept dtype " + dtype_name(t) + at +
                  ". Accepted dtypes" + at + " are subtypes of " + acc->names + ".");
}

// Elementwise ops broadcast numpy-style; binary operands need equal dtypes.
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

// Checks `which` and the cases; the result has cases[0]'s type.
void select_n(const TypeRef& which, const std::vector<TypeRef>& cases) {
  if (cases.empty()) invalid("select_n", "select_n called with no cases");
  if (which.dtype != DType::Bool && !is_integral(which.dtype))
    throw_error(ErrorKind::TypeError, "select_n",
                std::string("select `which` must be boolean or integer type, got ") +
                    dtype_name(which.dtype) + ".");
  const Shape& shape = *cases[0].shape;
  for (const TypeRef& c : cases)
    if (*c.shape != shape)
      throw_error(ErrorKind::TypeError, "select_n",
                  "select cases must have the same shapes, got [" + shapes_str(cases, ", ") +
                      "].");
  std::vector<DType> dtypes;
  for (const TypeRef& c : cases) dtypes.push_back(c.dtype);
  check_same_dtypes("select_n", dtypes);
  if (!which.shape->empty() && *which.shape != shape)
    throw_error(ErrorKind::TypeError, "select_n",
                "select `which` must be scalar or have the same shape as cases, got `which` "
                "shape " + shape_str(*which.shape) + " but case shape " + shape_str(shape) +
                    ".");
}

void clamp(const TypeRef& lo, const TypeRef& x, const TypeRef& hi) {
  check_same_dtypes("clamp", {lo.dtype, x.dtype, hi.dtype});
  for (const TypeRef* b : {&lo, &hi})
    if (!b->shape->empty() && *b->shape != *x.shape)
      invalid("clamp", "clamp bounds must be scalars or have the operand's shape " +
                           shape_str(*x.shape) + ", got " + shape_str(*b->shape));
}

// The shape after reinterpreting `shape` of dtype `from` as `to`.
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

// Returns the dimension, checked as JAX's broadcasted_iota does (no negative ones).
int64_t iota(const Shape& shape, int64_t dimension) {
  for (int64_t d : shape)
    if (d < 0)
      throw_error(ErrorKind::TypeError, "iota",
                  "iota shape must have every element be nonnegative, got " + shape_str(shape) +
                      ".");
  if (dimension < 0 || dimension >= int64_t(shape.size()))
    invalid("iota", "iota dimension must be between 0 and len(shape), got dimension=" +
                        std::to_string(dimension) + " for shape=" + shape_str(shape));
  return dimension;
}

}  // namespace

Shape binary_shape(const char* op, const Shape& x, const Shape& y) {
  if (x == y) return x;
  const size_t n = std::max(x.size(), y.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t dx = i < n - x.size() ? 1 : x[i - (n - x.size())];
    const int64_t dy = i < n - y.size() ? 1 : y[i - (n - y.size())];
    if (dx != dy && dx != 1 && dy != 1)
      throw_error(ErrorKind::TypeError, op,
                  std::string(op) + " got incompatible shapes for broadcasting: " +
                      shape_str(x) + ", " + shape_str(y) + ".");
    out[i] = dx == 1 ? dy : dx;
  }
  return out;
}

}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

double elements(const std::vector<ValueType>& outs) { return double(num_elements(outs[0].shape)); }

class UnaryDef final : public TypedOpDef<UnaryAttrs> {
 public:
  UnaryDef() : TypedOpDef(OpKind::unary) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const UnaryOp op = get(a).op;
    infer::check_accepted(infer::lax_name(op).c_str(), infer::accepted(op), ins[0].dtype, -1);
    return {{*ins[0].shape, infer::unary_dtype(op, ins[0].dtype)}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::unary(get(a).op, ins[0], outs[0]);
  }
  double cost(const std::any& a, const Arrays&, const std::vector<ValueType>& outs) const override {
    return elements(outs) * (cpu::is_expensive(get(a).op) ? 8 : 1);
  }
};

class BinaryDef final : public TypedOpDef<BinaryAttrs> {
 public:
  BinaryDef() : TypedOpDef(OpKind::binary) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 2);
    const BinaryOp op = get(a).op;
    const std::string& lax_name = infer::lax_name(op);
    for (int i = 0; i < 2; ++i)
      infer::check_accepted(lax_name.c_str(), infer::accepted(op), ins[size_t(i)].dtype, i);
    if (ins[0].dtype != ins[1].dtype)
      infer::check_same_dtypes(lax_name, {ins[0].dtype, ins[1].dtype});
    return {{infer::binary_shape(lax_name.c_str(), *ins[0].shape, *ins[1].shape),
             infer::binary_dtype(op, ins[0].dtype)}};
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::binary(get(a).op, ins[0], ins[1], outs[0]);
  }
  double cost(const std::any& a, const Arrays&, const std::vector<ValueType>& outs) const override {
    return elements(outs) * (cpu::is_expensive(get(a).op) ? 8 : 1);
  }
};

class SelectNDef final : public TypedOpDef<NoAttrs> {
 public:
  SelectNDef() : TypedOpDef(OpKind::select_n) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    if (ins.size() < 2) invalid("select_n requires at least one case");
    infer::select_n(ins[0], Types(ins.begin() + 1, ins.end()));
    return {{*ins[1].shape, ins[1].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::select_n(ins[0], Arrays(ins.begin() + 1, ins.end()), outs[0]);
  }
};

class ClampDef final : public TypedOpDef<NoAttrs> {
 public:
  ClampDef() : TypedOpDef(OpKind::clamp) {}
  std::vector<ValueType> infer(std::any&, const Types& ins) const override {
    need(ins, 3);
    infer::clamp(ins[0], ins[1], ins[2]);
    return {{*ins[1].shape, ins[1].dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::clamp(ins[0], ins[1], ins[2], outs[0]);
  }
};

class ConvertDef final : public TypedOpDef<ConvertAttrs> {
 public:
  ConvertDef() : TypedOpDef(OpKind::convert) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    return {{*ins[0].shape, get(a).dtype}};
  }
  void run(const std::any&, const Arrays& ins, const Arrays& outs) const override {
    cpu::convert(ins[0], outs[0]);
  }
};

// Reinterprets the bytes of a dense operand: a view.
class BitcastConvertDef final : public TypedOpDef<ConvertAttrs> {
 public:
  BitcastConvertDef() : TypedOpDef(OpKind::bitcast_convert) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const DType to = get(a).dtype;
    return {{infer::bitcast_convert(*ins[0].shape, ins[0].dtype, to), to}};
  }
  bool is_view() const override { return true; }
  bool view_needs_dense() const override { return true; }
  Array view(const std::any&, const ValueType& t, const Array& x) const override {
    const int64_t offset = x.offset() * int64_t(itemsize(x.dtype())) / int64_t(itemsize(t.dtype));
    return view_of(x, t, row_major_strides(t.shape), offset);
  }
};

class IotaDef final : public TypedOpDef<IotaAttrs> {
 public:
  IotaDef() : TypedOpDef(OpKind::iota) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 0);
    IotaAttrs& at = get(a);
    at.dimension = infer::iota(at.shape, at.dimension);
    return {{at.shape, at.dtype}};
  }
  void run(const std::any& a, const Arrays&, const Arrays& outs) const override {
    cpu::iota(get(a).dimension, outs[0]);
  }
};

}  // namespace

TINYXLA_REGISTER_OP(unary, UnaryDef)
TINYXLA_REGISTER_OP(binary, BinaryDef)
TINYXLA_REGISTER_OP(select_n, SelectNDef)
TINYXLA_REGISTER_OP(clamp, ClampDef)
TINYXLA_REGISTER_OP(convert, ConvertDef)
TINYXLA_REGISTER_OP(bitcast_convert, BitcastConvertDef)
TINYXLA_REGISTER_OP(iota, IotaDef)

}  // namespace tinyxla::ops
