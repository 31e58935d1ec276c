// vmath kernels built for the avx2 target (flags set by the build); the code is in vmath_kernels.inc.
#define TINYXLA_VMATH_NS avx2
#include "vmath_kernels.inc"
