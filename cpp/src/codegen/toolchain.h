// The system C compiler as the upper tier uses it: finding it, the disk cache of built
// modules (keyed by source, compiler, flags and the resolved CPU), and running it as a
// child process that is killed after a timeout or when this process exits.
#pragma once
#include <string>

namespace tinyxla::codegen {

// The compiler command: $TINYXLA_CC, else $CC, else cc; "" when it is not on PATH.
std::string find_compiler();
// The flags every module is built with (no -ffast-math: NaN semantics and rounding stay
// the base tier's; no FMA contraction, so results match it exactly).
const char* compile_flags();
// $TINYXLA_CACHE_DIR, else $XDG_CACHE_HOME/tinyxla/codegen, else ~/.cache/tinyxla/codegen.
std::string cache_dir();
// The file name stem of the module built from `source` by `compiler` here: a hash of the
// source, the compiler's path and version, the flags and the CPU's model and features.
std::string cache_key(const std::string& source, const std::string& compiler);

// Builds `source` into the shared library `so_path` (written under a temporary name and
// renamed, so readers never see half a file). Returns "" on success, else why not.
std::string build_shared_library(const std::string& compiler, const std::string& source,
                                 const std::string& so_path);

}  // namespace tinyxla::codegen
