// The CPU fusion target (see cpu_target.h).
#include "cpu_target.h"

#include "../cpu/elementwise_ops.h"
#include "../fused/interpreter.h"
#include "../ops/elementwise.h"
#include "../ops/windows.h"

namespace tinyxla::compiler {

bool CpuFusionTarget::can_fuse_elementwise(const Node& n, const Graph& g) const {
  return cpu::can_fuse_elementwise(n, g);
}

bool CpuFusionTarget::can_fuse_reduce(ReduceOp op, DType dtype, const Shape& operand,
                                      const std::vector<int64_t>& axes) const {
  return cpu::can_fuse_reduce(op, dtype, operand, axes);
}

bool CpuFusionTarget::is_expensive(const Node& n) const {
  if (n.kind == OpKind::unary) return cpu::is_expensive(n.attr<ops::UnaryAttrs>().op);
  if (n.kind == OpKind::binary) return cpu::is_expensive(n.attr<ops::BinaryAttrs>().op);
  return false;
}

bool CpuFusionTarget::can_anchor(const Node& n) const {
  // The conv kernel hands out whole output rows only without groups.
  if (n.kind != OpKind::conv) return false;
  const auto& a = n.attr<ops::ConvAttrs>();
  return a.feature_group_count == 1 && a.batch_group_count == 1;
}

}  // namespace tinyxla::compiler
