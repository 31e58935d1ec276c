// Attribute records of the dot ops (their definitions: dot.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct DotGeneralAttrs {
  DotDims dims;
  std::optional<DType> preferred;  // the result dtype when not the operands'
  template <class V> void visit(V& v) {
    v("lhs_contracting", dims.lhs_contracting);
    v("rhs_contracting", dims.rhs_contracting);
    v("lhs_batch", dims.lhs_batch);
    v("rhs_batch", dims.rhs_batch);
    v("preferred", preferred, kResultDtype);
  }
};

}  // namespace tinyxla::ops
