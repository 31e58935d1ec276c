// Executable: a compiled graph that runs as one task on a device stream.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tinyxla/array.h"
#include "tinyxla/graph.h"

namespace tinyxla {

struct CompileOptions;

class Executable : public std::enable_shared_from_this<Executable> {
 public:
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Checks the arguments against the parameters (an InvalidArgument Error when they
  // differ) and returns the results at once, as futures. The whole graph then runs as one
  // task on `device`'s stream once the arguments are ready; intermediates are released at
  // their last use. An error inside (or in an argument) is stored in every result.
  // A result that is a parameter is that argument itself. `donated[i]` (when given) lets
  // the run write a result into argument i's buffer if the caller holds no other
  // reference to it (as jit's donate_argnums).
  std::vector<Array> run(std::vector<Array> args, int device = 0,
                         const std::vector<char>& donated = {}) const;
  // The optimised graph in the text form.
  std::string text() const;
  const Graph& graph() const;
  // Nodes that run a kernel (not parameters, constants or views).
  int num_kernels() const;

  // Bytes from the memory plan (as XLA's CompiledMemoryStats): of the parameters, of the
  // results (a parameter or constant returned counts too), of the results that may take
  // the buffer of a parameter in `donated`, and the peak of the intermediates alive at
  // once while the plan runs (a result written into a dead operand's buffer takes none).
  struct MemoryAnalysis {
    int64_t argument_bytes = 0, output_bytes = 0, alias_bytes = 0, temp_bytes = 0;
  };
  MemoryAnalysis memory_analysis(const std::vector<char>& donated = {}) const;
  // Per value of graph(): the intermediate buffer it lives in under the memory plan
  // (values with one id share memory: a view, or a result written over a dead operand),
  // -1 for parameters, constants and outputs.
  std::vector<int> buffer_ids() const;

  // The CPU compiler's tiers (TINYXLA_CODEGEN=0|1|auto): "upper" once generated C for the
  // fused kernels is compiled and loaded, else "base" (the tiled interpreter).
  std::string tier() const;
  // Blocks until the started upper-tier builds of the graph and of its loop bodies have
  // finished (loaded or failed).
  void wait_codegen() const;
  // "off", "none" (nothing to generate), "pending", "building", "loaded", "cached" or
  // "failed: <why>".
  std::string codegen_status() const;
  // Fused-kernel runs done by generated code so far, loop bodies' included.
  int64_t codegen_kernel_runs() const;
  // The generated C source (generated now if it was not yet); "" when there is none.
  std::string codegen_source() const;

  struct Impl;

 private:
  explicit Executable(std::unique_ptr<Impl> impl);
  friend std::shared_ptr<Executable> compile(const Graph& graph, const CompileOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tinyxla
