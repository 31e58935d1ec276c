// The tiled interpreter: runs a fused body (elementwise chains, optionally ending in
// reductions) as a small register program over tiles of a few hundred elements that stay
// in L1, using the per-op dense tile functions of elementwise_ops.h.
#pragma once
#include <memory>
#include <vector>

#include "../cpu/elementwise_ops.h"
#include "tinyxla/array.h"
#include "tinyxla/graph.h"

namespace tinyxla::cpu {

// A broadcast input whose elements repeat within this many tiles (only its trailing dims
// move) is read, in both tiers, from one copy of its pattern per chunk.
constexpr int64_t kPeriodTiles = 8;

// Whether the interpreter has a tile function for elementwise node `n` of `g`.
bool can_fuse_elementwise(const Node& n, const Graph& g);
// Whether the interpreter reduces `operand` over `axes` with `op`: the op accepts the
// dtype and the reduced dims (of size > 1) are contiguous once size-1 dims are dropped.
bool can_fuse_reduce(ReduceOp op, DType dtype, const Shape& operand,
                     const std::vector<int64_t>& axes);

// The tile function of `convert` from `from` to `to` (the semantics of cpu::convert).
UnaryTileFn convert_tile_fn(DType from, DType to);

// The reduction of `shape` over `axes` as [K1, R, K2]: kept dims before the reduced
// ones, the reduced ones, kept dims after. False when reduced dims of size > 1 are not
// contiguous.
bool reduce_layout(const Shape& shape, const std::vector<int64_t>& axes, int64_t* k1, int64_t* r,
                   int64_t* k2);

struct Program;

class FusedKernel {
 public:
  // Compiles a body that check_fused_body accepts; throws an Error when an op or
  // reduction has no tile function here.
  explicit FusedKernel(const Graph& body);
  ~FusedKernel();
  FusedKernel(const FusedKernel&) = delete;
  FusedKernel& operator=(const FusedKernel&) = delete;

  // Reads ready `inputs` (any strides, broadcast to their uses) and writes dense `outputs`
  // of the body's output types. An output may share its buffer with an input that the
  // body reads only element for element (see may_alias).
  void run(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  // A run of a body without reduces bound to its inputs and outputs, whose parts run
  // separately: a producer's epilogue, each range of elements run (from any thread) as soon
  // as the producer has written it, while it is still in cache.
  class Bound {
   public:
    Bound(Bound&&) noexcept;
    ~Bound();
    // Elements [begin, end) of the iteration space, on the calling thread.
    void run(int64_t begin, int64_t end) const;

   private:
    friend class FusedKernel;
    struct State;
    explicit Bound(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
  };
  // As run(), without running anything yet; throws for a body with reduces.
  Bound bind(const std::vector<Array>& inputs, const std::vector<Array>& outputs) const;
  // Whether input `i` is read element for element in the iteration order, so output `o`
  // (a non-reduced one) may overwrite it.
  bool may_alias(int input, int output) const;
  // Cost units per element (1 per cheap op), for parallel grains.
  int cost() const;

 private:
  std::unique_ptr<Program> p_;
};

}  // namespace tinyxla::cpu
