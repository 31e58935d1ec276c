// The system C compiler as the upper tier uses it: finding it, the disk cache of built
// modules (keyed by source, compiler, flags and the resolved CPU), and running it as a
// child process that is killed after a timeout or when this process exits.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace tinyxla::codegen {

// A copy of the process environment ("NAME=value" entries). compile() takes one on its
// caller's thread and the build of its module reads only that (UseEnvironment), never
// `environ`, which another thread may be changing: setenv is not safe beside any reader
// (ThreadSanitizer found a Python os.environ update racing with the compiler's spawn).
using Environment = std::shared_ptr<const std::vector<std::string>>;
Environment capture_environment();
// While it lives, the functions below read `environment` on this thread (and spawn the
// compiler with it) instead of the process environment.
class UseEnvironment {
 public:
  explicit UseEnvironment(Environment environment);
  ~UseEnvironment();
  UseEnvironment(const UseEnvironment&) = delete;
  UseEnvironment& operator=(const UseEnvironment&) = delete;

 private:
  Environment previous_;
};

// The compiler command: $TINYXLA_CC, else $CC, else cc; "" when it is not on PATH.
std::string find_compiler();
// The flags every module is built with (no -ffast-math: NaN semantics and rounding stay
// the base tier's; no FMA contraction, so results match it exactly).
const char* compile_flags();
// Where modules are cached: $TINYXLA_CACHE_DIR, else $XDG_CACHE_HOME/tinyxla/codegen, else
// ~/.cache/tinyxla/codegen, created 0700. One that another user owns or others may write
// (anyone who can write it could make this process run their code) is refused with a
// warning on stderr, once, for a fresh private directory under $TMPDIR; "" if none.
std::string cache_dir();
// The file name stem of the module built from `source` by `compiler` here: a hash of the
// source, the compiler's path and version, the flags and the CPU's model and features.
std::string cache_key(const std::string& source, const std::string& compiler);

// Bounds the disk cache: marks `used_so` (a module just built or loaded) as recently used,
// then deletes the least recently used modules of `dir` while their total size exceeds
// $TINYXLA_CACHE_MAX_BYTES (default 256 MiB), never `used_so` itself.
void trim_cache(const std::string& dir, const std::string& used_so);

// Says on stderr, once per process, that the upper tier fell back to the base tier and
// why (the first line of `why`): no compiler, or one that failed, timed out or was killed.
void warn_fallback_once(const std::string& why);

// Whether the module file `so_path` may be loaded as the one built under `key`: a regular
// file private to this user that carries its key (TX_MODULE_KEY, "tinyxla-module:<key>").
// Checked before dlopen, which runs code.
bool module_matches(const std::string& so_path, const std::string& key);

// Builds `source` into the shared library `so_path` (written under a temporary name,
// made private and renamed, so readers never see half a file), with TX_MODULE_KEY defined
// as its key's marker. Returns "" on success, else why not.
std::string build_shared_library(const std::string& compiler, const std::string& source,
                                 const std::string& so_path, const std::string& key);

}  // namespace tinyxla::codegen
