// lax.fft's kernel: complex and real discrete Fourier transforms over the trailing axes.
#pragma once
#include <cstdint>
#include <vector>

#include "tinyxla/array.h"
#include "vmath.h"

namespace tinyxla::cpu {

// XLA's FftType: forward and inverse complex transforms, real-to-complex (keeping the
// n/2+1 non-negative frequencies of the last axis) and its inverse. The inverse ones are
// normalized by 1/prod(lengths), as XLA's.
enum class FftType : uint8_t { fft, ifft, rfft, irfft };

// Transforms `x` over its last lengths.size() axes into `out` (the result type that
// ops::FftDef infers). Own mixed-radix kernels (radices 2, 3, 4, 5, 7 and any odd prime up
// to 61) with Bluestein's algorithm for lengths that have a larger prime factor; lines of a
// batch are transformed several at once in SIMD lanes and spread over the thread pool, and a
// single long transform splits each pass.
void fft(FftType type, const std::vector<int64_t>& lengths, const Array& x, const Array& out);

// The ISA of the kernels that transform batches of lines: the best this CPU supports, unless
// a test picks another one it supports (cpp/tests/test_fft.cc checks each build).
void set_fft_isa_for_testing(vmath::Isa isa);

}  // namespace tinyxla::cpu
