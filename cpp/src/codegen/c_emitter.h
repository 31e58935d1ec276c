// The upper tier's source generator: C for a fused body (elementwise ops, optionally
// ending in float sum/max/min, integer sum or bool and/or reductions), and for whole loops of
// one-element values. Cheap ops of plain dtypes become expressions in loops that the C
// compiler vectorises; every other op calls the base tier's own tile
// function (through a table the module receives when it is loaded), so elementwise
// results are bit-identical on both tiers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tinyxla/graph.h"

namespace tinyxla::codegen {

// How a generated kernel is called: `void symbol(const char* const* in, char* const* out,
// int64_t begin, int64_t end, int stream)` computes flat elements [begin, end) of the
// iteration space from inputs (the body's parameters, then the constants passed at run
// time) into dense outputs; `stream` stores outputs bypassing the caches.
// A reduce kernel instead is `void symbol(const char* const* in, char* const* out, void*
// const* acc, int64_t begin, int64_t end, int64_t acc_base)`: it stores its elementwise
// outputs and folds elements [begin, end) into the accumulator arrays acc[r] (of the
// reduce's dtype), indexed by output element minus acc_base; the caller splits the range,
// initialises and combines the accumulators into the reduced outputs.
struct ReduceInfo {
  int output;  // the body output the reduce is
  ReduceOp op;
  DType dtype;
};

struct KernelInfo {
  std::string symbol;
  std::vector<ReduceInfo> reduces;  // empty for an elementwise kernel
  int64_t k1 = 1, r = 1, k2 = 1;    // a reduce kernel's layout (see cpu::reduce_layout)
  int64_t size = 0;  // elements in the iteration space
  int64_t tile = 0;  // elements per tile (chunks of the range are tile-aligned)
  int cost = 1;      // cost units per element, as the base tier counts them
  std::vector<Array> runtime_constants;  // inputs after the parameters
  std::vector<Strides> param_strides;    // the element strides the kernel reads inputs with
  bool loop = false;  // a whole while_loop (emit_loop), not a fused kernel
  // A loop's host calls without results (host_callback), in body order: the callable ids,
  // passed after the loop's inputs (ids are the process's, the source stays reusable).
  std::vector<int64_t> host_callables;
};

// The table of functions the generated code calls; index 0 is the streaming copy.
struct FunctionTable {
  std::vector<void*> fns;
  int add(void* fn);  // the index of `fn`, added once
};

// Appends the C definition of a kernel named `symbol` for `body` to `source`; false (and
// nothing appended) when the body has no elements, more than `max_ops` ops, or
// reduces other than sum/max/min of one float32/float64 dtype, sums of one 32- or 64-bit
// integer dtype, or and/or of bools. Parameter i
// is read with the element strides `param_strides[i]` (row-major, or a broadcast's
// zeros); the caller checks the arrays it passes have them.
bool emit_kernel(const Graph& body, const std::vector<Strides>& param_strides,
                 const std::string& symbol, int max_ops, FunctionTable& table, std::string& source,
                 KernelInfo& info);

// Appends the C definition of a function `int symbol(const char* const* in, char* const*
// out)` that runs a whole while_loop whose body (see ops/control_flow.h) holds only
// one-element values, elementwise ops and host calls without results, from a true
// predicate: `in` are the loop's constants and carry, then one int64 callable id per host
// call (info.host_callables); `out` its results; the carry lives in locals. A host call
// goes through `host_call` (added to `table`), and when it fails the function returns 1
// at once (else 0). False (nothing appended) for other bodies or more than `max_ops` nodes.
using HostCallFn = int (*)(int64_t callable, int64_t n, const void* const* args,
                           const int64_t* dtypes);
bool emit_loop(const Graph& body, int64_t num_consts, const std::string& symbol, int max_ops,
               HostCallFn host_call, FunctionTable& table, std::string& source, KernelInfo& info);

// The declarations every generated module starts with; the module then defines
// `static void* tx_fn[]` of the table's size and `void tx_init(void* const* fns)` that
// copies the table into it (the library's own storage: a library loaded twice shares it).
std::string module_prelude();

}  // namespace tinyxla::codegen
