// Definition of lax.conv_general_dilated in its channels-last form (see ConvAttrs;
// kernel: cpu/convolution.cc).
#include "../cpu/windows.h"
#include "windows.h"

namespace tinyxla::ops {
namespace {

cpu::WindowGeometry geometry_of(const ConvAttrs& a) {
  return {{}, a.window_strides, a.padding_lo, a.padding_hi, a.lhs_dilation, a.rhs_dilation};
}

class ConvDef final : public TypedOpDef<ConvAttrs> {
 public:
  ConvDef() : TypedOpDef(OpKind::conv) {}
  std::vector<ValueType> infer(std::any& attrs, const Types& ins) const override {
    need(ins, 2);
    const ConvAttrs& a = get(attrs);
    const Shape& x = *ins[0].shape;
    const Shape& w = *ins[1].shape;
    if (x.size() < 2 || x.size() != w.size())
      invalid("lhs " + shape_str(x) + " and rhs " + shape_str(w) +
              " need one rank of at least 2");
    if (ins[0].dtype != ins[1].dtype)
      throw_error(ErrorKind::TypeError, name(),
                  std::string("operands need one dtype, got ") + dtype_name(ins[0].dtype) +
                      " and " + dtype_name(ins[1].dtype));
    const size_t nsp = x.size() - 2;
    for (const auto* v : {&a.window_strides, &a.padding_lo, &a.padding_hi, &a.lhs_dilation,
                          &a.rhs_dilation})
      if (v->size() != nsp)
        invalid("every window attribute needs one entry per spatial dimension (" +
                std::to_string(nsp) + ")");
    const int64_t G = a.feature_group_count, B = a.batch_group_count;
    const int64_t N = x[0], C = x.back(), I = w[nsp], O = w.back();
    if (G < 1 || B < 1 || (G > 1 && B > 1))
      invalid("needs positive group counts, at most one of them above 1");
    if (C % G != 0 || C / G != I)
      invalid("lhs has " + std::to_string(C) + " features, not rhs's " + std::to_string(I) +
              " times feature_group_count " + std::to_string(G));
    if (O % G != 0 || O % B != 0 || N % B != 0)
      invalid("output features " + std::to_string(O) + " and batch " + std::to_string(N) +
              " must divide by the group counts");
    Shape out{N / B};
    for (size_t d = 0; d < nsp; ++d) {
      if (a.window_strides[d] < 1 || a.lhs_dilation[d] < 1 || a.rhs_dilation[d] < 1)
        invalid("strides and dilations must be positive");
      out.push_back(window_count(x[d + 1], w[d], a.window_strides[d], a.padding_lo[d],
                                 a.padding_hi[d], a.lhs_dilation[d], a.rhs_dilation[d],
                                 name()));
    }
    out.push_back(O);
    return {{out, a.preferred_element_type.value_or(ins[0].dtype)}};
  }
  void run(const std::any& attrs, const Arrays& ins, const Arrays& outs) const override {
    const ConvAttrs& a = get(attrs);
    cpu::conv(ins[0], ins[1], geometry_of(a), a.feature_group_count, a.batch_group_count, outs[0]);
  }
  void run_with_epilogue(const std::any& attrs, const Arrays& ins, const Arrays& outs,
                         const std::function<void(int64_t, int64_t)>& epilogue) const override {
    const ConvAttrs& a = get(attrs);
    cpu::conv(ins[0], ins[1], geometry_of(a), a.feature_group_count, a.batch_group_count, outs[0],
              &epilogue);
  }
  double cost(const std::any&, const Arrays& ins, const std::vector<ValueType>& outs) const override {
    // Multiply-adds: each output element reads its window over C / G features.
    const Shape& w = ins[1].shape();
    double per_out = 1;
    for (size_t d = 0; d + 1 < w.size(); ++d) per_out *= double(w[d]);
    return 2.0 * double(num_elements(outs[0].shape)) * per_out;
  }
};

}  // namespace

TINYXLA_REGISTER_OP(conv, ConvDef)

}  // namespace tinyxla::ops
