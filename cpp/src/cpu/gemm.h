// tinyxla's own float32 gemms, used by dot_general in place of OpenBLAS's sgemm: an AVX-512
// one for every size when the CPU has AVX-512 (vmath::isa_supported(vmath::Isa::Avx512)):
// OpenBLAS may be held to AVX2 kernels (OPENBLAS_CORETYPE), and its threads cannot share
// packed panels with our pool; an AVX2/FMA one for small products elsewhere, which OpenBLAS
// runs at half the FMA bound, and on Zen 4 (see dot.cc).
#pragma once
#include <cstdint>

namespace tinyxla::cpu::gemm {

// A float32 matrix operand: element (i, j) at data[i * rs + j * cs]. One of rs, cs is 1
// (row-major or transposed storage, as BLAS reads it).
struct Operand {
  const float* data;
  int64_t rs, cs;
};

// c (m x n, row-major with row stride ldc) = a (m x k) * b (k x n), all dims >= 1.
// `parallel`: spread over the thread pool, which shares each packed block of b.
// Requires vmath::isa_supported(vmath::Isa::Avx512).
void sgemm(int64_t m, int64_t n, int64_t k, Operand a, Operand b, float* c, int64_t ldc,
           bool parallel);

// The same product on the calling thread, for small m * n * k (b is copied when transposed).
// Requires vmath::isa_supported(vmath::Isa::Avx2).
void small_sgemm(int64_t m, int64_t n, int64_t k, Operand a, Operand b, float* c, int64_t ldc);

}  // namespace tinyxla::cpu::gemm
