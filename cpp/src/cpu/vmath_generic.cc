// vmath kernels built for the generic target (flags set by the build); the code is in vmath_kernels.inc.
#define TINYXLA_VMATH_NS generic
#include "vmath_kernels.inc"
