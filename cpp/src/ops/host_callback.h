// Attribute record of the host_callback op (its definition: host_callback.cc).
#pragma once
#include <cstdint>
#include <vector>

#include "op_def.h"

namespace tinyxla::ops {

// host_callback(args...) -> (results..., done): calls host function `callback` (an id of
// the binding's table, core/host_calls.h) on the args. `done`, a bool[0] value, gives the
// node a result when the function returns none. The passes keep nodes with side effects
// in their order, so the calls of one graph run in program order.
struct HostCallbackAttrs {
  int64_t callback = 0;
  std::vector<int64_t> result_dtypes;  // DType codes, one per result
  std::vector<int64_t> result_ranks;   // one per result
  std::vector<int64_t> result_dims;    // the results' dimensions, concatenated
  template <class V> void visit(V& v) {
    v("callback", callback);
    v("result_dtypes", result_dtypes);
    v("result_ranks", result_ranks);
    v("result_dims", result_dims, kOmitEmpty);
  }
};

}  // namespace tinyxla::ops
