// Dtype conversion, fill, iota and Scalar::store over every dtype pair; the element
// conversion itself is semantics::convert (core/element_semantics.h).
#include <algorithm>
#include <cstring>

#include "../core/element_semantics.h"
#include "../core/thread_pool.h"
#include "kernels.h"
#include "strided.h"
#include "tinyxla/error.h"

namespace tinyxla {
namespace {

using semantics::convert;

template <typename To, typename From>
void convert_run(const From* in, To* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = convert<To>(in[i]);
}

constexpr int64_t kChunk = 2048;  // elements gathered per step for strided inputs

template <typename To, typename From>
void convert_typed(const Array& x, const Array& out) {
  const From* src = reinterpret_cast<const From*>(x.data());
  To* dst = reinterpret_cast<To*>(out.mutable_data());
  const bool dense = cpu::is_dense(x.shape(), x.strides());
  parallel_for(out.size(), 1 << 16, [&](int64_t b, int64_t e) {
    if (dense) return convert_run(src + b, dst + b, e - b);
    alignas(64) From buf[kChunk];
    for (int64_t i = b; i < e; i += kChunk) {
      int64_t m = std::min(kChunk, e - i);
      cpu::gather(x.data(), sizeof(From), x.shape(), x.strides(), i, i + m,
                  reinterpret_cast<char*>(buf));
      convert_run(buf, dst + i, m);
    }
  });
}

// Fixed-size elements, so that fills of any dtype are plain stores.
template <size_t kSize>
void fill_bytes(const void* value, char* dst, int64_t n) {
  using E = semantics::ElementBits<kSize>;
  E v;
  std::memcpy(&v, value, kSize);
  parallel_for(n, 1 << 17, [&](int64_t b, int64_t e) {
    std::fill(reinterpret_cast<E*>(dst) + b, reinterpret_cast<E*>(dst) + e, v);
  });
}

template <typename T>
void iota_typed(int64_t dimension, const Array& out) {
  const int64_t n = out.shape()[size_t(dimension)];
  int64_t inner = 1;
  for (size_t d = size_t(dimension) + 1; d < out.shape().size(); ++d) inner *= out.shape()[d];
  T* dst = reinterpret_cast<T*>(out.mutable_data());
  // Run r (inner elements long) holds the value r % n.
  const int64_t runs = out.size() / std::max<int64_t>(inner, 1);
  parallel_for(runs, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(inner, 1)),
               [&](int64_t b, int64_t e) {
                 int64_t j = b % n;
                 for (int64_t r = b; r < e; ++r) {
                   T v = convert<T>(j);
                   std::fill(dst + r * inner, dst + (r + 1) * inner, v);
                   if (++j == n) j = 0;
                 }
               });
}

}  // namespace

void Scalar::store(DType dtype, void* dst) const {
  visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T v = convert<T>(f);
    switch (kind) {
      case Kind::Bool: v = convert<T>(i != 0); break;
      case Kind::Int: v = convert<T>(i); break;
      case Kind::UInt: v = convert<T>(u); break;
      case Kind::Float: break;
      case Kind::Complex: v = convert<T>(complex128(f, imag)); break;
    }
    std::memcpy(dst, &v, sizeof(T));
  });
}

namespace cpu {

void convert(const Array& x, const Array& out) {
  if (out.size() == 0) return;
  visit_dtype(x.dtype(), [&](auto from) {
    visit_dtype(out.dtype(), [&](auto to) {
      convert_typed<decltype(to), decltype(from)>(x, out);
    });
  });
}

void fill(const Scalar& value, const Array& out) {
  if (out.size() == 0) return;
  alignas(16) char v[16];
  value.store(out.dtype(), v);
  char* dst = out.mutable_data();
  switch (itemsize(out.dtype())) {
    case 1: return fill_bytes<1>(v, dst, out.size());
    case 2: return fill_bytes<2>(v, dst, out.size());
    case 4: return fill_bytes<4>(v, dst, out.size());
    case 8: return fill_bytes<8>(v, dst, out.size());
    default: return fill_bytes<16>(v, dst, out.size());
  }
}

void iota(int64_t dimension, const Array& out) {
  if (out.size() == 0) return;
  if (dimension < 0 || dimension >= out.ndim())
    throw_error(ErrorKind::InvalidArgument, "iota",
                "dimension " + std::to_string(dimension) + " out of range for shape " +
                    shape_str(out.shape()));
  visit_dtype(out.dtype(), [&](auto zero) { iota_typed<decltype(zero)>(dimension, out); });
}

}  // namespace cpu
}  // namespace tinyxla
