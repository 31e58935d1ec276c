// Attribute records of the sorting ops (their definitions: sorting.cc).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

struct SortAttrs {
  int64_t dimension = 0;
  int64_t num_keys = 1;
  template <class V> void visit(V& v) {
    v("dimension", dimension);
    v("num_keys", num_keys);
  }
};

}  // namespace tinyxla::ops
