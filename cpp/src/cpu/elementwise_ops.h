// Per-op, per-dtype dense tile functions of the elementwise ops: the inner loops that
// cpu::unary/binary/select_n/clamp run, exposed for reuse by fused kernels.
#pragma once
#include <cstdint>

#include "tinyxla/dtype.h"
#include "tinyxla/ops.h"

namespace tinyxla::cpu {

// Each function reads `n` dense elements of every input and writes `n` dense results of
// the op's result dtype; any n is allowed. Inputs may not alias the output.
using UnaryTileFn = void (*)(const void* in, void* out, int64_t n);
using BinaryTileFn = void (*)(const void* a, const void* b, void* out, int64_t n);
// clamp(lo, x, hi) = min(max(x, lo), hi), all of one dtype.
using ClampTileFn = void (*)(const void* lo, const void* x, const void* hi, void* out, int64_t n);
// out[i] = cases[which[i]][i]; a `which` outside [0, ncases) picks case 0.
using SelectTileFn = void (*)(const void* which, const void* const* cases, int64_t ncases,
                              void* out, int64_t n);

// nullptr when the op does not accept the dtype (of its operands).
UnaryTileFn unary_tile_fn(UnaryOp op, DType dtype);
BinaryTileFn binary_tile_fn(BinaryOp op, DType dtype);
ClampTileFn clamp_tile_fn(DType dtype);
// `which` is bool or int32; the cases' dtype only matters through its size.
SelectTileFn select_tile_fn(DType which, DType cases);

// Transcendental ops cost tens of cheap ops per element (for picking parallel grains).
bool is_expensive(UnaryOp op);
bool is_expensive(BinaryOp op);

}  // namespace tinyxla::cpu
