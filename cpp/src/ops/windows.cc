// Definition of lax.reduce_window_{sum,max,min} (kernel: cpu/windows.cc).
#include "windows.h"

#include "../cpu/windows.h"

namespace tinyxla::ops {
namespace {

cpu::WindowGeometry geometry_of(const ReduceWindowAttrs& a) {
  return {a.window_dimensions, a.window_strides, a.padding_lo, a.padding_hi, a.base_dilation,
          a.window_dilation};
}

class ReduceWindowDef final : public TypedOpDef<ReduceWindowAttrs> {
 public:
  ReduceWindowDef() : TypedOpDef(OpKind::reduce_window, "reduce_window_") {}
  std::vector<ValueType> infer(std::any& attrs, const Types& ins) const override {
    need(ins, 1);
    const ReduceWindowAttrs& a = get(attrs);
    if (a.op != ReduceOp::sum && a.op != ReduceOp::max && a.op != ReduceOp::min)
      invalid(std::string("reduces only by sum, max or min, not ") + op_name(a.op));
    const Shape& x = *ins[0].shape;
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
                                 a.window_dilation[d]));
    }
    return {{out, ins[0].dtype}};
  }
  void run(const std::any& attrs, const Arrays& ins, const Arrays& outs) const override {
    cpu::reduce_window(get(attrs).op, ins[0], geometry_of(get(attrs)), outs[0]);
  }
  double cost(const std::any& attrs, const Arrays&, const std::vector<ValueType>& outs) const override {
    double taps = 1;
    for (int64_t w : get(attrs).window_dimensions) taps *= double(w);
    return double(num_elements(outs[0].shape)) * taps;
  }
};

}  // namespace

TINYXLA_REGISTER_OP(reduce_window, ReduceWindowDef)

}  // namespace tinyxla::ops
