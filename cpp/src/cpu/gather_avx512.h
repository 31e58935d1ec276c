// x[idx] of a vector in AVX-512 gather instructions: 16 (or 8) reads issued per instruction
// keep more cache misses in flight than the scalar loop, whose branches and index arithmetic
// bound it (1e6 random int32 indices into 1e6 float32, one core: 0.86-0.89 against 0.92-1.0 ms).
#pragma once
#include <cstdint>

namespace tinyxla::cpu::gather_avx512 {

// How each index is read before the load: with `wrap`, a negative index first gets `size`
// added (GatherAttrs::wrap_negative); an index still outside [0, size) is clamped (`clip`)
// or gives `fill`.
struct VectorRead {
  int64_t size;  // the vector's length, below 2^31
  bool wrap, clip;
};

// to[r] = from[idx[r]] for r in [b, e), with Bits uint32_t or uint64_t (elements of 4 or 8
// bytes, bits copied), `from` contiguous. Requires vmath::isa_supported(vmath::Isa::Avx512).
template <typename Bits>
void rows(const Bits* from, const int32_t* idx, Bits* to, int64_t b, int64_t e, VectorRead how,
          Bits fill);

}  // namespace tinyxla::cpu::gather_avx512
