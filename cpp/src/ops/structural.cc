// Definitions of the structural kinds: parameters, constants and fused regions. They do
// not run as ops; a constant's value and a fused region's body are the node's content
// (Node::constant, Node::body), which infer_types checks itself.
#include "structural.h"

#include <algorithm>

// Inference rules of this family (error messages as JAX's).
namespace tinyxla::ops::infer {

void full(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0)  // lax.full's message, which comes from its broadcast_in_dim
      throw_error(ErrorKind::TypeError, "full",
                  "broadcast_in_dim shape must have every element be nonnegative, got " +
                      shape_str(shape) + ".");
}

}  // namespace tinyxla::ops::infer

namespace tinyxla::ops {
namespace {

class ParameterDef final : public TypedOpDef<ParameterAttrs> {
 public:
  ParameterDef() : TypedOpDef(OpKind::parameter) {}
  std::vector<ValueType> infer(std::any& a, const Types& ins) const override {
    need(ins, 0);
    infer::full(get(a).shape);
    return {{get(a).shape, get(a).dtype}};
  }
  bool runs() const override { return false; }
};

// Typed by their content, in infer_types.
class ContentDef : public TypedOpDef<NoAttrs> {
 public:
  explicit ContentDef(OpKind kind) : TypedOpDef(kind) {}
  std::vector<ValueType> infer(std::any&, const Types&) const override {
    throw_error(ErrorKind::Internal, name(), "is typed by its content");
  }
  bool runs() const override { return false; }
};
struct ConstantDef : ContentDef { ConstantDef() : ContentDef(OpKind::constant) {} };
struct FusedDef : ContentDef { FusedDef() : ContentDef(OpKind::fused) {} };

}  // namespace

TINYXLA_REGISTER_OP(parameter, ParameterDef)
TINYXLA_REGISTER_OP(constant, ConstantDef)
TINYXLA_REGISTER_OP(fused, FusedDef)

}  // namespace tinyxla::ops
