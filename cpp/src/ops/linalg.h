// Attribute records of the linear algebra ops (their definitions: linalg.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct EigAttrs {
  bool compute_left = false, compute_right = true;
  template <class V> void visit(V& v) {
    v("left", compute_left);
    v("right", compute_right);
  }
};
struct EighAttrs {
  bool lower = true;
  template <class V> void visit(V& v) { v("lower", lower); }
};

}  // namespace tinyxla::ops
