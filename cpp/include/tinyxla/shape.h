// Shapes and element strides.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tinyxla {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements; 0 broadcasts, negative reverses

int64_t num_elements(const Shape& s);
Strides row_major_strides(const Shape& s);
std::string shape_str(const Shape& s);  // "[2,3]"
// numpy-style broadcast of two shapes; throws an InvalidArgument Error naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Normalises a possibly negative axis; throws an InvalidArgument Error naming `op`.
int64_t canonical_axis(int64_t axis, int64_t rank, const char* op);
// a + b and a * b for shape arithmetic on attributes a file or a caller chose: an
// InvalidArgument Error naming `op` where int64 would overflow, never undefined behaviour.
int64_t checked_add(int64_t a, int64_t b, const char* op);
int64_t checked_mul(int64_t a, int64_t b, const char* op);

}  // namespace tinyxla
