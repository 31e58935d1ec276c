// FFT kernels shared by the one-line (scalar) path and the batched "lanes" path, which
// transforms L lines at once with element i of line l in lane l of a SIMD vector (pocketfft's
// multi-row mode). The kernels are in fft_kernels.inc, compiled once per ISA: fft.cc (generic,
// 16-byte vectors), fft_avx2.cc and fft_avx512.cc (built with their flags); fft.cc picks the
// table for the CPU at run time.
//
// Lane buffers hold n elements of 2L reals each: the L real parts, then the L imaginary ones.
// Complex arrays outside them are interleaved (re, im) pairs; strides count complex elements.
#pragma once
#include <cstdint>
#include <cstring>

namespace tinyxla::cpu::fft_lanes {

// One Stockham pass: sub-transforms of length radix*m, s of them interleaved; tw[p*(radix-1)
// + k-1] = exp(-2 pi i p k / (radix*m)) as (re, im) pairs; cs, sn: cos and sin of 2 pi k /
// radix (odd radices other than 3).
template <class R>
struct PassView {
  int radix;
  int64_t m, s;
  const R* tw;
  const R* cs;
  const R* sn;
};

template <class R>
struct Kernels {
  int lanes;  // L
  // dst (a lane buffer of n elements) from `used` <= L lines: element i of line l is
  // src[l * line_stride + i * elem_stride]; lanes [used, L) are zero.
  void (*load)(const R* src, int64_t line_stride, int64_t elem_stride, int64_t n, int used,
               R* dst);
  // The inverse of load for lanes [0, used).
  void (*store)(const R* src, int64_t n, int used, R* dst, int64_t line_stride,
                int64_t elem_stride);
  // The unnormalized transform of the lane buffer `data` (n elements), `work` its scratch;
  // returns whichever of the two holds the result.
  R* (*run)(const PassView<R>* passes, int count, R* data, R* work, bool inverse);
  // Real-input untangling: z (h+1 elements) holds DFT_h of the packed reals in [0, h); on
  // return it holds the n/2+1 = h+1 frequencies of the length-2h real transform. w[k] =
  // exp(-2 pi i k / 2h), k < h.
  void (*rfft_untangle)(R* z, int64_t h, const R* w);
  // The inverse: from x (h+1 frequencies) the h packed values z whose unnormalized inverse
  // DFT_h, times 1/2h, holds the even reals in its real parts and the odd ones in its
  // imaginary parts (the imaginary parts of x_0 and x_h are ignored).
  void (*irfft_tangle)(const R* x, R* z, int64_t h, const R* w);
  // z[0..n) *= f.
  void (*scale)(R* z, int64_t n, R f);
};

struct Table {
  Kernels<float> f32;
  Kernels<double> f64;
};

namespace generic { const Table& table(); }
namespace avx2 { const Table& table(); }
namespace avx512 { const Table& table(); }

}  // namespace tinyxla::cpu::fft_lanes
