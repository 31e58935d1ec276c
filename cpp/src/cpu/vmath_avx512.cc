// vmath kernels built for the avx512 target (flags set by the build); the code is in vmath_kernels.inc.
#define TINYXLA_VMATH_NS avx512
#include "vmath_kernels.inc"
