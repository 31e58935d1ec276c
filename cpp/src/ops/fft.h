// Attribute record of lax.fft (its definition: fft.cc).
#pragma once
#include <cstdint>
#include <vector>

#include "../cpu/fft.h"
#include "op_def.h"

namespace tinyxla::ops {

template <> struct EnumNames<cpu::FftType> {
  static constexpr int count = 4;
  static const char* name(int i) {
    static const char* const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    return names[i];
  }
};

struct FftAttrs {
  cpu::FftType fft_type = cpu::FftType::fft;
  std::vector<int64_t> fft_lengths;
  template <class V> void visit(V& v) {
    v("fft_type", fft_type);
    v("fft_lengths", fft_lengths);
  }
};

}  // namespace tinyxla::ops
