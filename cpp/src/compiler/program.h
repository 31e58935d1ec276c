// The compiler layer: compile_program runs the passes on a graph and plans how each node
// runs on the CPU (a view, a kernel, the tiled interpreter, or a fused body node by
// node), its memory reuse and its cost. runtime/executable.cc runs the Program.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "../fused/interpreter.h"
#include "tinyxla/compiler.h"
#include "tinyxla/graph.h"

namespace tinyxla::compiler {

// Loop: a while_loop region, whose body the runtime compiles and runs once per trip.
// Anchored: a fused node whose body starts with an anchor op: the op's kernel runs with the
// rest of the body (the step's kernel, reading the anchor's result last) as its epilogue.
enum class StepKind { Parameter, Constant, View, Kernel, Interpreted, Body, Loop, Anchored };

// How node i of the optimised graph runs.
struct Step {
  StepKind kind = StepKind::Kernel;
  std::unique_ptr<cpu::FusedKernel> kernel;  // Interpreted and Anchored steps
  int anchor = -1;                           // Anchored: the anchor's node in the body
  std::vector<ValueId> release;              // values dropped after the step
  std::vector<std::pair<int, int>> inplace;  // (input, result) that may share a buffer
};

struct Program {
  Graph graph;  // optimised
  std::vector<Step> steps;
  std::vector<char> is_output;
  std::vector<std::vector<int>> output_donors;  // per output: parameters whose buffer it may take
  std::vector<Array> constants;
  double cost = 0;  // element-operations, for running small graphs on the caller
  int num_kernels = 0;
};

// Verifies `graph` (throwing its Error when malformed), optimises and plans it.
Program compile_program(const Graph& graph, const CompileOptions& options);

}  // namespace tinyxla::compiler
