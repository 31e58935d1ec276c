// The upper tier of the CPU compiler: one generated C module per executable graph, built
// in the background by the system compiler, loaded with dlopen and swapped in kernel by
// kernel. Until then (and for nodes it does not cover, inputs laid out otherwise than the
// kernel was generated for, or when no compiler is found) the base tier runs.
#pragma once
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c_emitter.h"
#include "toolchain.h"
#include "tinyxla/graph.h"

namespace tinyxla::codegen {

// TINYXLA_CODEGEN: 0 never compiles, 1 compiles when a graph is compiled, auto (the
// default) when an executable runs a second time.
enum class Mode { Off, Eager, Auto };
Mode mode_from_env();

class Module : public std::enable_shared_from_this<Module> {
 public:
  // The module of `graph`'s fused nodes (elementwise ones, up to size limits) and of its
  // while_loops whose bodies are small enough to run whole (emit_loop); nullptr
  // when none is generated.
  static std::shared_ptr<Module> generate(const Graph& graph);
  ~Module();

  const std::string& source() const { return source_; }
  // Queues the build on the background builder (once); returns at once. The build reads
  // `environment` (the compiler, PATH, the cache directory; toolchain.h), not the process's.
  void start(Environment environment);
  // Blocks until the build has finished or failed (at once when never started).
  void wait() const;
  // "pending" (not started), "building", "loaded" (compiled now), "cached" (loaded from
  // the disk cache) or "failed: <why>".
  std::string status() const;
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }

  // Runs node `node`'s generated kernel when it is loaded and the inputs have the strides
  // it was generated for; false (nothing done) otherwise.
  bool run(int node, const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  // Whether while_loop node `node` has a function (see emit_loop) that is loaded.
  bool has_loop(int node) const;
  // Runs while_loop node `node` whole from a true predicate when its function is loaded:
  // `inputs` are its constants and carry, `outputs` its results; false (nothing done)
  // otherwise.
  bool run_loop(int node, const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  // Kernel runs done by generated code so far.
  int64_t runs() const { return runs_.load(std::memory_order_relaxed); }

 private:
  Module() = default;
  void build();  // on the builder thread
  friend class Builder;

  std::string source_;
  Environment environment_;  // set by start()
  FunctionTable table_;
  std::vector<KernelInfo> kernels_;
  std::vector<int> kernel_of_node_;
  std::unique_ptr<std::atomic<void*>[]> fns_;  // the kernels' symbols once loaded
  std::atomic<bool> loaded_{false};
  mutable std::atomic<int64_t> runs_{0};
  void* handle_ = nullptr;  // dlopen handle, closed by the destructor

  mutable std::mutex m_;
  mutable std::condition_variable cv_;
  enum class State { Pending, Queued, Done } state_ = State::Pending;
  std::string status_ = "pending";
  mutable int queued_by_ = 0;  // the process that queued the build
};

}  // namespace tinyxla::codegen
