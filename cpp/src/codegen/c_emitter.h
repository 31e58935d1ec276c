// The upper tier's source generator: C for a fused elementwise body. Cheap ops of plain
// dtypes become expressions in loops that the C compiler vectorises; every other op
// calls the base tier's own tile function (through a table the module receives when it
// is loaded), so both tiers compute bit-identical results.
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
struct KernelInfo {
  std::string symbol;
  int64_t size = 0;  // elements in the iteration space
  int64_t tile = 0;  // elements per tile (chunks of the range are tile-aligned)
  int cost = 1;      // cost units per element, as the base tier counts them
  std::vector<Array> runtime_constants;  // inputs after the parameters
  std::vector<Strides> param_strides;    // the element strides the kernel reads inputs with
};

// The table of functions the generated code calls; index 0 is the streaming copy.
struct FunctionTable {
  std::vector<void*> fns;
  int add(void* fn);  // the index of `fn`, added once
};

// Appends the C definition of a kernel named `symbol` for `body` to `source`; false (and
// nothing appended) when the body holds a reduce or more than `max_ops` ops, or has
// no elements. Parameter i
// is read with the element strides `param_strides[i]` (row-major, or a broadcast's
// zeros); the caller checks the arrays it passes have them.
bool emit_kernel(const Graph& body, const std::vector<Strides>& param_strides,
                 const std::string& symbol, int max_ops, FunctionTable& table, std::string& source,
                 KernelInfo& info);

// The declarations every generated module starts with; the module then defines
// `static void* tx_fn[]` of the table's size and `void tx_init(void* const* fns)` that
// copies the table into it (the library's own storage: a library loaded twice shares it).
std::string module_prelude();

}  // namespace tinyxla::codegen
