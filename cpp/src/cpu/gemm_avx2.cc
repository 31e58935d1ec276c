// AVX2/FMA float32 gemm for small products (dot.cc's kSmallGemm), where OpenBLAS's setup and
// packing cost more than the product (a 64^3 product: 10 us in OpenBLAS, 5.5 us at the FMA
// bound). A register-blocked microkernel computes 6 x 16 tiles of c reading a in place;
// b is read in place when row-major and packed into a row-major copy when transposed.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "gemm.h"

namespace tinyxla::cpu::gemm {
namespace {

// kMR rows x 2 ymm vectors of c: 12 accumulators of the 16 ymm registers, plus 2 for the
// row of b and one broadcast of a.
constexpr int kMR = 6;
constexpr int kNR = 16;

// Lane masks for the first `cols` columns (0..8) of one vector.
__m256i lane_mask(int64_t cols) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(std::clamp<int64_t>(cols, 0, 8))), lanes);
}

// c[MR x cols] = a[MR x k] * b[k x cols], cols <= kNR (all kNR when Full).
// a: element (i, p) at a[i * as + p] when ARows, else at a[p * as + i]; b: row p at b + p * bs.
template <int MR, bool ARows, bool Full>
void kernel(int64_t k, const float* a, int64_t as, const float* b, int64_t bs, int64_t cols,
            float* c, int64_t ldc) {
  __m256i mask[2];
  if (!Full) {
    mask[0] = lane_mask(cols);
    mask[1] = lane_mask(cols - 8);
  }
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const __m256 b0 = Full ? _mm256_loadu_ps(b) : _mm256_maskload_ps(b, mask[0]);
    const __m256 b1 = Full ? _mm256_loadu_ps(b + 8) : _mm256_maskload_ps(b + 8, mask[1]);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(ARows ? a + i * as : a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
    a += ARows ? 1 : as;
    b += bs;
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* ci = c + i * ldc;
    if (Full) {
      _mm256_storeu_ps(ci, acc[i][0]);
      _mm256_storeu_ps(ci + 8, acc[i][1]);
    } else {
      _mm256_maskstore_ps(ci, mask[0], acc[i][0]);
      _mm256_maskstore_ps(ci + 8, mask[1], acc[i][1]);
    }
  }
}

using Kernel = void (*)(int64_t, const float*, int64_t, const float*, int64_t, int64_t, float*,
                        int64_t);

// Kernels for 1..kMR rows (the last row panel has m % kMR rows).
template <bool ARows, bool Full, size_t... I>
constexpr std::array<Kernel, kMR> kernels(std::index_sequence<I...>) {
  return {&kernel<int(I) + 1, ARows, Full>...};
}
template <bool ARows, bool Full>
constexpr std::array<Kernel, kMR> kKernels = kernels<ARows, Full>(std::make_index_sequence<kMR>{});

Kernel pick(bool a_rows, bool full, int64_t rows) {
  const size_t r = size_t(rows - 1);
  if (a_rows) return full ? kKernels<true, true>[r] : kKernels<true, false>[r];
  return full ? kKernels<false, true>[r] : kKernels<false, false>[r];
}

// dst[q * dld + i] = src[i * sld + q] for an 8 x 8 block, in registers (named, not an
// array: GCC kept an array's rows on the stack, which made the packing cost 2 us at 64 x 64).
void transpose8(const float* src, int64_t sld, float* dst, int64_t dld) {
  const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + sld);
  const __m256 r2 = _mm256_loadu_ps(src + 2 * sld), r3 = _mm256_loadu_ps(src + 3 * sld);
  const __m256 r4 = _mm256_loadu_ps(src + 4 * sld), r5 = _mm256_loadu_ps(src + 5 * sld);
  const __m256 r6 = _mm256_loadu_ps(src + 6 * sld), r7 = _mm256_loadu_ps(src + 7 * sld);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + dld, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * dld, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * dld, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * dld, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * dld, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * dld, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * dld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// dst[p * n + j] = b[p + j * ld] for p < k, j < n: a transposed b made row-major.
void pack_transposed(int64_t k, int64_t n, const float* b, int64_t ld, float* dst) {
  const int64_t n8 = n / 8 * 8, k8 = k / 8 * 8;
  for (int64_t j = 0; j < n8; j += 8) {
    for (int64_t p = 0; p < k8; p += 8) transpose8(b + j * ld + p, ld, dst + p * n + j, n);
    for (int64_t p = k8; p < k; ++p)
      for (int64_t q = 0; q < 8; ++q) dst[p * n + j + q] = b[(j + q) * ld + p];
  }
  for (int64_t j = n8; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) dst[p * n + j] = b[j * ld + p];
}

// One per thread, grow-only: packing allocates only for a product larger than any before.
thread_local std::vector<float> b_scratch;

}  // namespace

void small_sgemm(int64_t m, int64_t n, int64_t k, Operand a, Operand b, float* c, int64_t ldc) {
  const float* bp = b.data;
  int64_t bs = b.rs;
  if (b.cs != 1) {
    if (b_scratch.size() < size_t(k * n)) b_scratch.resize(size_t(k * n));
    pack_transposed(k, n, b.data, b.cs, b_scratch.data());
    bp = b_scratch.data();
    bs = n;
  }
  // a is read along its unit stride: rows (a_rows) or columns.
  const bool a_rows = a.cs == 1 && a.rs != 1;
  const int64_t a_step = a_rows ? a.rs : a.cs;
  for (int64_t jr = 0; jr < n; jr += kNR) {
    const int64_t cols = std::min<int64_t>(kNR, n - jr);
    for (int64_t ir = 0; ir < m; ir += kMR) {
      const int64_t rows = std::min<int64_t>(kMR, m - ir);
      pick(a_rows, cols == kNR, rows)(k, a.data + ir * a.rs, a_step, bp + jr, bs, cols,
                                      c + ir * ldc + jr, ldc);
    }
  }
}

}  // namespace tinyxla::cpu::gemm
