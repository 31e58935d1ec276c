// Definition of lax.fft: discrete Fourier transforms over 1 to 3 trailing axes.
#include "fft.h"

#include <cmath>
#include <string>

namespace tinyxla::ops {
namespace {

std::string lengths_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string shape_tuple(const Shape& s) { return lengths_str(std::vector<int64_t>(s.begin(), s.end())); }

// Results as JAX's fft_abstract_eval (its messages): FFT/IFFT keep the complex operand's
// type; RFFT maps float[..., n] to complex[..., n/2+1]; IRFFT complex[..., n/2+1] to
// float[..., n].
class FftDef final : public TypedOpDef<FftAttrs> {
 public:
  FftDef() : TypedOpDef(OpKind::fft) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 1);
    const FftAttrs& at = get(a);
    const Shape& s = *ins[0].shape;
    const DType t = ins[0].dtype;
    const std::vector<int64_t>& len = at.fft_lengths;
    const size_t k = len.size();
    if (k < 1 || k > 3) invalid("fft_lengths must hold 1 to 3 lengths, got " + lengths_str(len));
    for (int64_t l : len)
      if (l < 0) invalid("fft_lengths must be non-negative, got " + lengths_str(len));
    if (k > s.size())
      invalid("FFT input shape " + shape_tuple(s) + " must have at least as many input dimensions as fft_lengths " +
              lengths_str(len) + ".");
    const Shape minor(s.end() - long(k), s.end());
    Shape out = s;
    switch (at.fft_type) {
      case cpu::FftType::rfft: {
        if (t != DType::F32 && t != DType::F64)
          invalid(std::string("RFFT input must be float32 or float64, got ") + dtype_name(t));
        if (minor != Shape(len.begin(), len.end()))
          invalid("RFFT input shape " + shape_tuple(s) + " minor dimensions must be equal to fft_lengths " +
                  lengths_str(len));
        if (len.back() == 0) invalid("RFFT needs a positive fft_lengths[-1], got " + lengths_str(len));
        out.back() = len.back() / 2 + 1;
        return {{out, t == DType::F32 ? DType::C64 : DType::C128}};
      }
      case cpu::FftType::irfft: {
        if (!is_complex(t))
          invalid(std::string("IRFFT input must be complex64 or complex128, got ") + dtype_name(t));
        if (Shape(minor.begin(), minor.end() - 1) != Shape(len.begin(), len.end() - 1))
          invalid("IRFFT input shape " + shape_tuple(s) +
                  " minor dimensions must be equal to all except the last fft_length, got fft_lengths=" +
                  lengths_str(len));
        if (s.back() != len.back() / 2 + 1)
          invalid("IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. Got: " +
                  std::to_string(s.back()) + " but fft_length is " + std::to_string(len.back()) + ".");
        out.back() = len.back();
        return {{out, t == DType::C64 ? DType::F32 : DType::F64}};
      }
      default:
        if (!is_complex(t))
          invalid(std::string("FFT input must be complex64 or complex128, got ") + dtype_name(t));
        if (minor != Shape(len.begin(), len.end()))
          invalid("FFT input shape " + shape_tuple(s) + " minor dimensions must be equal to fft_lengths " +
                  lengths_str(len));
        return {{out, t}};
    }
  }
  void run(const std::any& a, const Arrays& ins, const Arrays& outs) const override {
    cpu::fft(get(a).fft_type, get(a).fft_lengths, ins[0], outs[0]);
  }
  // About 5 n log2(n) flops per transformed element count.
  double cost(const std::any& a, const Arrays&, const std::vector<ValueType>& outs) const override {
    double n = 1;
    for (int64_t l : get(a).fft_lengths) n *= double(std::max<int64_t>(l, 1));
    int64_t size = 1;
    for (int64_t d : outs[0].shape) size *= d;
    return 5.0 * double(size) * std::max(1.0, std::log2(n));
  }
};

}  // namespace

TINYXLA_REGISTER_OP(fft, FftDef)

}  // namespace tinyxla::ops
