// A test hook for faults in async kernels (issue 19): arms the next `count` runs of one op's
// kernel, eager or compiled, to throw. Tests use it to check that the error reaches every
// dependent result at the wait, names the op, and leaves the device usable. Unarmed, a
// check costs one relaxed atomic load.
#pragma once
#include <string>

namespace tinyxla::runtime {

void arm_fault(const std::string& op, int count);

// Throws "[op] injected fault" when armed for `op`.
void check_fault(const char* op);

}  // namespace tinyxla::runtime
