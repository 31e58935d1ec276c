// Definitions of lax.reduce_window_{sum,max,min} (kernel: cpu/windows.cc) and of max and
// min pooling's derivatives, select_and_gather_add and select_and_scatter_add (kernels:
// cpu/window_select.cc).
#include "windows.h"

#include "../cpu/windows.h"

namespace tinyxla::ops {
namespace {

cpu::WindowGeometry geometry_of(const ReduceWindowAttrs& a) {
  return {a.window_dimensions, a.window_strides, a.padding_lo, a.padding_hi, a.base_dilation,
          a.window_dilation};
}

// The windows' shape over operand `x`, with the attributes' errors.
Shape window_shape(const OpDef& def, const ReduceWindowAttrs& a, const Shape& x) {
  auto invalid = [&](const std::string& msg) {
    throw_error(ErrorKind::InvalidArgument, def.name(), msg);
  };
  const size_t n = x.size();
  for (const auto* v : {&a.window_dimensions, &a.window_strides, &a.padding_lo, &a.padding_hi,
                        &a.base_dilation, &a.window_dilation})
    if (v->size() != n)
      invalid("every window attribute needs one entry per operand dimension (" +
              std::to_string(n) + ")");
  Shape out;
  for (size_t d = 0; d < n; ++d) {
    if (a.window_dimensions[d] < 1 || a.window_strides[d] < 1 || a.base_dilation[d] < 1 ||
        a.window_dilation[d] < 1)
      invalid("window sizes, strides and dilations must be positive");
    out.push_back(window_count(x[d], a.window_dimensions[d], a.window_strides[d],
                               a.padding_lo[d], a.padding_hi[d], a.base_dilation[d],
                               a.window_dilation[d], def.name()));
  }
  return out;
}

double window_cost(const ReduceWindowAttrs& a, const ValueType& windows) {
  double taps = 1;
  for (int64_t w : a.window_dimensions) taps *= double(w);
  return double(num_elements(windows.shape)) * taps;
}

class ReduceWindowDef final : public TypedOpDef<ReduceWindowAttrs> {
 public:
  ReduceWindowDef() : TypedOpDef(OpKind::reduce_window, "reduce_window_") {}
  std::vector<ValueType> infer(std::any& attrs, const Types& ins) const override {
    need(ins, 1);
    const ReduceWindowAttrs& a = get(attrs);
    if (a.op != ReduceOp::sum && a.op != ReduceOp::max && a.op != ReduceOp::min)
      invalid(std::string("reduces only by sum, max or min, not ") + op_name(a.op));
    return {{window_shape(*this, a, *ins[0].shape), ins[0].dtype}};
  }
  void run(const std::any& attrs, const Arrays& ins, const Arrays& outs) const override {
    cpu::reduce_window(get(attrs).op, ins[0], geometry_of(get(attrs)), outs[0]);
  }
  double cost(const std::any& attrs, const Arrays&, const std::vector<ValueType>& outs) const override {
    return window_cost(get(attrs), outs[0]);
  }
};

// select_and_gather_add (kScatter false) and select_and_scatter_add: operands (values,
// operand); the windows of `operand` select by max or min.
template <bool kScatter>
class SelectWindowDef final : public TypedOpDef<ReduceWindowAttrs> {
 public:
  SelectWindowDef()
      : TypedOpDef(kScatter ? OpKind::select_and_scatter_add : OpKind::select_and_gather_add,
                   kScatter ? "select_and_scatter_add_" : "select_and_gather_add_") {}
  std::vector<ValueType> infer(std::any& attrs, const Types& ins) const override {
    need(ins, 2);
    const ReduceWindowAttrs& a = get(attrs);
    if (a.op != ReduceOp::max && a.op != ReduceOp::min)
      invalid(std::string("selects by max or min, not ") + op_name(a.op));
    if (ins[0].dtype != ins[1].dtype)
      throw_error(ErrorKind::TypeError, name(),
                  std::string("operands need one dtype, got ") + dtype_name(ins[0].dtype) +
                      " and " + dtype_name(ins[1].dtype));
    const Shape& x = *ins[1].shape;
    const Shape windows = window_shape(*this, a, x);
    const Shape& values_want = kScatter ? windows : x;
    if (*ins[0].shape != values_want)
      invalid("values of shape " + shape_str(*ins[0].shape) + " do not match " +
              shape_str(values_want));
    return {{kScatter ? x : windows, ins[0].dtype}};
  }
  void run(const std::any& attrs, const Arrays& ins, const Arrays& outs) const override {
    const ReduceWindowAttrs& a = get(attrs);
    if constexpr (kScatter) cpu::select_and_scatter_add(a.op, ins[0], ins[1], geometry_of(a), outs[0]);
    else cpu::select_and_gather_add(a.op, ins[0], ins[1], geometry_of(a), outs[0]);
  }
  double cost(const std::any& attrs, const Arrays& ins, const std::vector<ValueType>& outs) const override {
    const ValueType windows{kScatter ? ins[0].shape() : outs[0].shape, outs[0].dtype};
    return window_cost(get(attrs), windows);
  }
};
using SelectAndGatherAddDef = SelectWindowDef<false>;
using SelectAndScatterAddDef = SelectWindowDef<true>;

}  // namespace

TINYXLA_REGISTER_OP(reduce_window, ReduceWindowDef)
TINYXLA_REGISTER_OP(select_and_gather_add, SelectAndGatherAddDef)
TINYXLA_REGISTER_OP(select_and_scatter_add, SelectAndScatterAddDef)

}  // namespace tinyxla::ops
