// Reading strided views: the row-major walk every kernel uses for non-dense operands.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../core/element_semantics.h"
#include "tinyxla/array.h"

namespace tinyxla::cpu {

// The strides that read `x` as if broadcast (numpy-style, right-aligned) to `shape`,
// written over `s` (whose memory a caller reusing it keeps).
inline void broadcast_strides_into(const Array& x, const Shape& shape, Strides& s) {
  s.assign(shape.size(), 0);
  size_t lead = shape.size() - size_t(x.ndim());
  for (size_t i = 0; i < size_t(x.ndim()); ++i)
    s[lead + i] = x.shape()[i] == 1 ? 0 : x.strides()[i];
}
inline Strides broadcast_strides(const Array& x, const Shape& shape) {
  Strides s;
  broadcast_strides_into(x, shape, s);
  return s;
}

// Copies the elements [begin, end) (row-major order over `shape`, `nd` dims) of the view
// whose first element is at `base` into dense `dst`, a run of the innermost dim at a time.
// Element size is a template argument so the inner run compiles to plain loads and stores.
template <size_t kSize>
void gather_typed(const char* base, int64_t nd, const int64_t* shape, const int64_t* strides,
                  int64_t begin, int64_t end, char* dst) {
  using Elem = semantics::ElementBits<kSize>;
  if (nd == 0) {
    for (int64_t i = begin; i < end; ++i) std::memcpy(dst + (i - begin) * kSize, base, kSize);
    return;
  }
  int64_t idx[64];  // ranks above 64 are rejected when ops are built; [0, nd) set below
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    idx[d] = shape[d] ? rem % shape[d] : 0;
    rem = shape[d] ? rem / shape[d] : 0;
  }
  int64_t off = 0;
  for (int64_t d = 0; d < nd; ++d) off += idx[d] * strides[d];
  const int64_t inner = shape[nd - 1], inner_stride = strides[nd - 1];
  Elem* out = reinterpret_cast<Elem*>(dst);
  const Elem* src = reinterpret_cast<const Elem*>(base);
  int64_t i = begin;
  while (i < end) {
    int64_t run = std::min(end - i, inner - idx[nd - 1]);
    const Elem* p = src + off;
    if (inner_stride == 1) {
      std::memcpy(out, p, size_t(run) * kSize);
    } else if (inner_stride == 0) {
      const Elem x = *p;
      for (int64_t j = 0; j < run; ++j) out[j] = x;
    } else {
      for (int64_t j = 0; j < run; ++j) out[j] = p[j * inner_stride];
    }
    out += run;
    i += run;
    off += run * inner_stride;
    idx[nd - 1] += run;
    // Carry into outer dimensions.
    for (int64_t d = nd - 1; d > 0 && idx[d] == shape[d]; --d) {
      off -= idx[d] * strides[d];
      idx[d] = 0;
      idx[d - 1] += 1;
      off += strides[d - 1];
    }
  }
}

// gather_typed by element size: the one strided read of the fused tiers (the base tier
// calls it, and generated kernels call it through their function table with the
// signature of c_emitter's tx_gather).
inline void gather_dims(const char* base, int64_t elem_size, int64_t nd, const int64_t* shape,
                        const int64_t* strides, int64_t begin, int64_t end, char* dst) {
  switch (elem_size) {
    case 1: return gather_typed<1>(base, nd, shape, strides, begin, end, dst);
    case 2: return gather_typed<2>(base, nd, shape, strides, begin, end, dst);
    case 4: return gather_typed<4>(base, nd, shape, strides, begin, end, dst);
    case 8: return gather_typed<8>(base, nd, shape, strides, begin, end, dst);
    default: return gather_typed<16>(base, nd, shape, strides, begin, end, dst);
  }
}

// The first `len` elements of a view whose elements repeat every `period` (only its
// trailing dims move; the others have stride 0 or extent 1, so reading [0, period) never
// steps past them): one period by gather_dims, then copies of it, doubling. Both fused
// tiers keep broadcast patterns this way (generated kernels call it like gather_dims).
inline void gather_pattern(const char* base, int64_t elem_size, int64_t nd, const int64_t* shape,
                           const int64_t* strides, int64_t period, int64_t len, char* dst) {
  gather_dims(base, elem_size, nd, shape, strides, 0, period, dst);
  const size_t total = size_t(len) * size_t(elem_size);
  for (size_t done = size_t(period) * size_t(elem_size); done < total; done *= 2)
    std::memcpy(dst + done, dst, std::min(done, total - done));
}

inline void gather(const char* base, size_t elem_size, const Shape& shape, const Strides& strides,
                   int64_t begin, int64_t end, char* dst) {
  gather_dims(base, int64_t(elem_size), int64_t(shape.size()), shape.data(), strides.data(), begin,
              end, dst);
}

// True when `x` read with `strides` over a shape is one dense run (or a single element).
inline bool is_dense(const Shape& shape, const Strides& strides) {
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}
inline bool is_splat(const Strides& strides) {
  for (int64_t s : strides)
    if (s != 0) return false;
  return true;
}

}  // namespace tinyxla::cpu
