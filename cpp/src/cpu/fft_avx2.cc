// The FFT kernels built for the avx2 target (flags set by the build); the code is in
// fft_kernels.inc.
#include "fft_lanes.h"

namespace tinyxla::cpu::fft_lanes::avx2 {
#define TINYXLA_FFT_VBYTES 32
#include "fft_kernels.inc"
}  // namespace tinyxla::cpu::fft_lanes::avx2
