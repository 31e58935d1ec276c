// The CPU as a fusion target: what the base tier's tiled interpreter (fused/interpreter.h) runs.
#pragma once
#include "../passes/passes.h"

namespace tinyxla::compiler {

class CpuFusionTarget final : public passes::FusionTarget {
 public:
  bool can_fuse_elementwise(const Node& n, const Graph& g) const override;
  bool can_fuse_reduce(ReduceOp op, DType dtype, const Shape& operand,
                       const std::vector<int64_t>& axes) const override;
  bool is_expensive(const Node& n) const override;
  bool can_anchor(const Node& n) const override;
};

}  // namespace tinyxla::compiler
