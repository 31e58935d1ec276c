// AVX-512 gathers for x[idx] of a vector (see gather_avx512.h).
#include "gather_avx512.h"

#include <immintrin.h>

namespace tinyxla::cpu::gather_avx512 {
namespace {

// The indices of 16 rows read as VectorRead says, and the mask of those in range (all of
// them under clip, which clamps instead).
inline __m512i read16(__m512i v, const VectorRead& how, __m512i size, __m512i room,
                      __mmask16* in_range) {
  if (how.wrap) v = _mm512_add_epi32(v, _mm512_and_si512(_mm512_srai_epi32(v, 31), size));
  if (how.clip) {
    *in_range = 0xFFFF;
    return _mm512_min_epi32(_mm512_max_epi32(v, _mm512_setzero_si512()), room);
  }
  *in_range = _mm512_cmplt_epu32_mask(v, size);
  return v;
}

// The scalar form of read16 for the rows left over: false when the row gives the fill.
inline bool read1(int64_t v, const VectorRead& how, int64_t* at) {
  if (how.wrap && v < 0) v += how.size;
  if (v < 0 || v >= how.size) {
    if (!how.clip) return false;
    v = v < 0 ? 0 : how.size - 1;
  }
  *at = v;
  return true;
}

}  // namespace

template <typename Bits>
void rows(const Bits* from, const int32_t* idx, Bits* to, int64_t b, int64_t e, VectorRead how,
          Bits fill) {
  const __m512i size = _mm512_set1_epi32(int32_t(how.size));
  const __m512i room = _mm512_set1_epi32(int32_t(how.size - 1));
  const __m512i filler = sizeof(Bits) == 4 ? _mm512_set1_epi32(int32_t(fill))
                                           : _mm512_set1_epi64(int64_t(fill));
  int64_t r = b;
  for (; r + 16 <= e; r += 16) {
    __mmask16 in_range;
    const __m512i v = read16(_mm512_loadu_si512(idx + r), how, size, room, &in_range);
    if constexpr (sizeof(Bits) == 4) {
      _mm512_storeu_si512(to + r, _mm512_mask_i32gather_epi32(filler, in_range, v, from, 4));
    } else {  // 16 rows are two gathers of 8 (the low and high halves of the indices)
      const __m256i lo = _mm512_castsi512_si256(v), hi = _mm512_extracti64x4_epi64(v, 1);
      _mm512_storeu_si512(to + r, _mm512_mask_i32gather_epi64(filler, __mmask8(in_range), lo, from, 8));
      _mm512_storeu_si512(to + r + 8,
                          _mm512_mask_i32gather_epi64(filler, __mmask8(in_range >> 8), hi, from, 8));
    }
  }
  for (int64_t at = 0; r < e; ++r) to[r] = read1(idx[r], how, &at) ? from[at] : fill;
}

template void rows(const uint32_t*, const int32_t*, uint32_t*, int64_t, int64_t, VectorRead,
                   uint32_t);
template void rows(const uint64_t*, const int32_t*, uint64_t*, int64_t, int64_t, VectorRead,
                   uint64_t);

}  // namespace tinyxla::cpu::gather_avx512
