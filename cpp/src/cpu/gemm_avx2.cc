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

// Transposes the 8 x 8 block of rows r[0..7] in place (rows in, columns out).
void transpose8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x20);
    t[4 + j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x31);
  }
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// dst[p * n + j] = b[p + j * ld] for p < k, j < n: a transposed b made row-major.
void pack_transposed(int64_t k, int64_t n, const float* b, int64_t ld, float* dst) {
  const int64_t n8 = n / 8 * 8, k8 = k / 8 * 8;
  for (int64_t j = 0; j < n8; j += 8) {
    for (int64_t p = 0; p < k8; p += 8) {
      __m256 r[8];
      for (int q = 0; q < 8; ++q) r[q] = _mm256_loadu_ps(b + (j + q) * ld + p);
      transpose8(r);
      for (int q = 0; q < 8; ++q) _mm256_storeu_ps(dst + (p + q) * n + j, r[q]);
    }
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
