// compile: turns a Graph into an Executable after the optimisation passes.
#pragma once
#include <memory>

#include "tinyxla/executable.h"
#include "tinyxla/graph.h"

namespace tinyxla {

struct CompileOptions {
  bool simplify = true;  // algebraic simplification, constant folding, CSE, DCE
  bool fuse = true;      // fused elementwise kernels and reduction prologues
  bool fuse_epilogues = true;  // elementwise consumers run inside a conv's kernel (with fuse)
};

// Verifies `graph` (throwing its Error when malformed), optimises and plans it.
std::shared_ptr<Executable> compile(const Graph& graph, const CompileOptions& options = {});

}  // namespace tinyxla
