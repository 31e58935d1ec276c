// lax.fft's kernel: complex and real discrete Fourier transforms over the trailing axes.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/array.h"

namespace tinyxla::cpu {

// XLA's FftType: forward and inverse complex transforms, real-to-complex (keeping the
// n/2+1 non-negative frequencies of the last axis) and its inverse. The inverse ones are
// normalized by 1/prod(lengths), as XLA's.
enum class FftType : uint8_t { fft, ifft, rfft, irfft };

// Transforms `x` over its last lengths.size() axes into `out` (the result type that
// ops::FftDef infers). Own mixed-radix kernels (radices 2, 3, 4, 5, 7 and any odd prime up
// to 61) with Bluestein's algorithm for lengths that have a larger prime factor; rows of a
// batch are spread over the thread pool, and a single long transform splits each pass.
void fft(FftType type, const std::vector<int64_t>& lengths, const Array& x, const Array& out);

}  // namespace tinyxla::cpu
