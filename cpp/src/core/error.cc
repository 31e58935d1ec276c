// Error construction with the op-name prefix.
#include "tinyxla/error.h"

namespace tinyxla {

void throw_error(ErrorKind kind, const std::string& op, const std::string& msg) {
  throw Error(kind, "[" + op + "] " + msg);
}

}  // namespace tinyxla
