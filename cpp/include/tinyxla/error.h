// The one exception type of the runtime; its kind picks the Python exception class.
#pragma once
#include <stdexcept>
#include <string>

namespace tinyxla {

enum class ErrorKind {
  InvalidArgument,    // bad shapes, axes, dtypes: Python TypeError or ValueError by op
  TypeError,          // Python TypeError
  IndexError,         // Python IndexError
  ResourceExhausted,  // allocation failed: Python MemoryError
  Internal,           // Python RuntimeError
};

// Messages start with the op name in brackets: "[dot_general] contracting dims mismatch: ...".
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void throw_error(ErrorKind kind, const std::string& op, const std::string& msg);

}  // namespace tinyxla
