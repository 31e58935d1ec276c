// The system compiler for the upper tier (see toolchain.h). The child runs in its own
// process group so that a timeout or the exit of this process kills the driver and the
// compiler proper (cc1) it started.
#include "toolchain.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace tinyxla::codegen {
namespace {

thread_local Environment current_environment;  // set by UseEnvironment

std::string env(const char* name) {
  if (!current_environment) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
  }
  const std::string prefix = std::string(name) + "=";
  for (const std::string& e : *current_environment)
    if (e.compare(0, prefix.size(), prefix) == 0) return e.substr(prefix.size());
  return "";
}

// Process groups of running compilers, killed at exit.
std::mutex& children_mutex() {
  static std::mutex m;
  return m;
}
std::set<pid_t>& children() {
  static auto* s = new std::set<pid_t>();  // never destroyed: used by the exit handler
  return *s;
}
// Set at exit: a background build whose compiler was just killed would otherwise go on to
// spawn its next step (the compile after the version probe), which nothing kills.
bool exiting = false;  // guarded by children_mutex()
void kill_children_at_exit() {
  std::lock_guard<std::mutex> lock(children_mutex());
  exiting = true;
  for (pid_t pid : children()) kill(-pid, SIGKILL);
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The CPU's model and feature flags: -march=native resolves to these. (This and the other
// tables below are never destroyed: the builder thread may still use them while the process
// exits; ThreadSanitizer found it reading one that exit had freed.)
const std::string& cpu_description() {
  static const std::string& desc = *new std::string([] {
    std::ifstream f("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(f, line)) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
      if (!model.empty() && !flags.empty()) break;
    }
    return model + "\n" + flags;
  }());
  return desc;
}

bool executable_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

int timeout_seconds() {
  const std::string t = env("TINYXLA_CODEGEN_TIMEOUT");
  const int s = t.empty() ? 0 : std::atoi(t.c_str());
  return s > 0 ? s : 120;
}

// Runs argv[0] with stdout and stderr into `log_path`, in its own process group; kills
// the group after the timeout. Returns the wait status, or -1 when it could not start
// and -2 when it timed out.
int run_child(std::vector<std::string> args, const std::string& log_path) {
  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(kill_children_at_exit); });
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  if (current_environment)
    for (const std::string& e : *current_environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  // The lock is not held across the spawn: a fork() from another thread meanwhile would
  // leave the child a locked mutex (its own builds then hang).
  pid_t pid = 0;
  int rc;
  {
    std::lock_guard<std::mutex> lock(children_mutex());
    rc = exiting ? ECANCELED : 0;
  }
  if (rc == 0) rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(),
                               current_environment ? envp.data() : environ);
  if (rc == 0) {
    std::lock_guard<std::mutex> lock(children_mutex());
    if (exiting) kill(-pid, SIGKILL);  // the exit handler ran during the spawn
    else children().insert(pid);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds());
  int status = 0;
  bool timed_out = false;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  {
    std::lock_guard<std::mutex> lock(children_mutex());
    children().erase(pid);
  }
  return timed_out ? -2 : status;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// mkdir -p; the directories it creates are private to this user.
void make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') mkdir(dir.substr(0, i).c_str(), 0700);
}

// Whether `path` is of file type `type` (S_IFDIR, S_IFREG; a symlink is neither), owned by
// this user and writable by nobody else: only such places may hold code this process loads.
bool private_to_user(const std::string& path, mode_t type) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type &&
         st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

std::string module_marker(const std::string& key) { return "tinyxla-module:" + key; }

// The first line of `compiler --version` (run once per compiler).
std::string compiler_version(const std::string& compiler) {
  static std::mutex m;
  static auto& versions = *new std::map<std::string, std::string>();
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = versions.find(compiler);
    if (it != versions.end()) return it->second;
  }
  // Probed without the lock held (a fork meanwhile would inherit it locked); two threads
  // may both probe, with the same answer.
  make_dirs(cache_dir());
  static std::atomic<int> probes{0};
  const std::string log = cache_dir() + "/version" + std::to_string(getpid()) + "_" +
                          std::to_string(probes++) + ".txt";
  std::string line = run_child({compiler, "--version"}, log) == 0 ? read_file(log) : "";
  std::remove(log.c_str());
  line = line.substr(0, line.find('\n'));
  std::lock_guard<std::mutex> lock(m);
  versions[compiler] = line;
  return line;
}

}  // namespace

Environment capture_environment() {
  auto entries = std::make_shared<std::vector<std::string>>();
  for (char** e = environ; e && *e; ++e) entries->emplace_back(*e);
  return entries;
}

UseEnvironment::UseEnvironment(Environment environment) : previous_(current_environment) {
  current_environment = std::move(environment);
}
UseEnvironment::~UseEnvironment() { current_environment = std::move(previous_); }

std::string find_compiler() {
  std::string cc = env("TINYXLA_CC");
  if (cc.empty()) cc = env("CC");
  if (cc.empty()) cc = "cc";
  if (cc.find('/') != std::string::npos) return executable_file(cc) ? cc : "";
  std::stringstream path(env("PATH"));
  std::string dir;
  while (std::getline(path, dir, ':'))
    if (!dir.empty() && executable_file(dir + "/" + cc)) return dir + "/" + cc;
  return "";
}

// -fno-trapping-math: no code reads the FP exception flags, and with traps assumed GCC
// will not compute a select's arms unconditionally (a division sunk into one arm stops
// the loop from vectorizing). -fno-tree-pre: PRE merges a comparison of a select with an
// equal earlier comparison into a phi of two masks, which GCC 12 cannot vectorize (a fused
// lane-loop trip ending in a count of pending lanes ran scalar, 3.6x slower); the emitter
// has already shared common subexpressions. Values are unchanged: no reassociation, no
// contraction.
const char* compile_flags() {
  return "-O3 -march=native -ffp-contract=off -fno-math-errno -fno-trapping-math -fno-tree-pre -fPIC -shared -w";
}

std::string configured_cache_dir() {
  std::string d = env("TINYXLA_CACHE_DIR");
  if (!d.empty()) return d;
  d = env("XDG_CACHE_HOME");
  if (!d.empty()) return d + "/tinyxla/codegen";
  return env("HOME").empty() ? "/tmp/tinyxla-codegen" : env("HOME") + "/.cache/tinyxla/codegen";
}

std::string cache_dir() {
  static std::mutex m;
  static auto& resolved = *new std::map<std::string, std::string>();  // configured -> used
  const std::string wanted = configured_cache_dir();
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = resolved.find(wanted);
    if (it != resolved.end()) return it->second;
  }
  // Checked without the lock held (a fork meanwhile would inherit it locked).
  make_dirs(wanted);
  std::string dir = wanted;
  if (!private_to_user(wanted, S_IFDIR)) {
    const std::string tmp = env("TMPDIR").empty() ? "/tmp" : env("TMPDIR");
    std::string name = tmp + "/tinyxla-codegen-XXXXXX";
    dir = mkdtemp(name.data()) ? name : "";
    std::fprintf(stderr,
                 "tinyxla: warning: the codegen cache directory %s is not private to this user "
                 "(another owner, writable by group or others, or not a directory); modules "
                 "are built afresh in %s\n",
                 wanted.c_str(), dir.empty() ? "(none: mkdtemp failed)" : dir.c_str());
  }
  std::lock_guard<std::mutex> lock(m);
  return resolved.emplace(wanted, dir).first->second;
}

void trim_cache(const std::string& dir, const std::string& used_so) {
  utimensat(AT_FDCWD, used_so.c_str(), nullptr, 0);  // now: the module's last use
  const std::string limit_text = env("TINYXLA_CACHE_MAX_BYTES");
  const long long parsed = limit_text.empty() ? 0 : std::atoll(limit_text.c_str());
  const int64_t limit = parsed > 0 ? parsed : int64_t(256) << 20;
  struct Module {
    timespec used;
    int64_t bytes;
    std::string path;
  };
  std::vector<Module> modules;
  int64_t total = 0;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    // Only finished modules ("<key>.so"); temporaries of running builds end otherwise.
    if (name.size() < 4 || name.compare(name.size() - 3, 3, ".so") != 0 || name.find(".tmp") != std::string::npos)
      continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    modules.push_back({st.st_mtim, int64_t(st.st_size), path});
    total += int64_t(st.st_size);
  }
  closedir(d);
  if (total <= limit) return;
  std::sort(modules.begin(), modules.end(), [](const Module& a, const Module& b) {
    return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec : a.used.tv_nsec < b.used.tv_nsec;
  });
  // A process that has a deleted module loaded keeps its mapping; others rebuild it.
  for (const Module& m : modules) {
    if (total <= limit) break;
    if (m.path == used_so) continue;
    if (std::remove(m.path.c_str()) == 0) total -= m.bytes;
  }
}

void warn_fallback_once(const std::string& why) {
  {
    // A build the exit handler killed is no reason to warn: the process is ending.
    std::lock_guard<std::mutex> lock(children_mutex());
    if (exiting) return;
  }
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  const std::string first_line = why.substr(0, why.find('\n'));
  std::fprintf(stderr,
               "tinyxla: warning: the upper tier is unavailable (%s); fused kernels run on "
               "the base tier (TINYXLA_CODEGEN=0 turns the upper tier off; this warning is "
               "shown once)\n",
               first_line.c_str());
}

bool module_matches(const std::string& so_path, const std::string& key) {
  if (!private_to_user(so_path, S_IFREG)) return false;
  std::ifstream f(so_path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return bytes.find(module_marker(key)) != std::string::npos;
}

std::string cache_key(const std::string& source, const std::string& compiler) {
  uint64_t h = fnv1a(source);
  h = fnv1a(compiler, h);
  h = fnv1a(compiler_version(compiler), h);
  h = fnv1a(compile_flags(), h);
  h = fnv1a(cpu_description(), h);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string build_shared_library(const std::string& compiler, const std::string& source,
                                 const std::string& so_path, const std::string& key) {
  const std::string dir = so_path.substr(0, so_path.rfind('/'));
  make_dirs(dir);
  static std::atomic<int> counter{0};
  const std::string stem = so_path + ".tmp" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  const std::string c_path = stem + ".c", tmp_so = stem + ".so", log_path = stem + ".log";
  {
    std::ofstream f(c_path);
    f << source;
    if (!f) return "cannot write " + c_path;
  }
  std::vector<std::string> args{compiler};
  std::stringstream flags(compile_flags());
  for (std::string f; flags >> f;) args.push_back(f);
  args.push_back("-DTX_MODULE_KEY=\"" + module_marker(key) + "\"");
  for (const char* a : {"-o", tmp_so.c_str(), c_path.c_str()}) args.push_back(a);
  const int status = run_child(std::move(args), log_path);
  auto cleanup = [&] {
    std::remove(c_path.c_str());
    std::remove(tmp_so.c_str());
    std::remove(log_path.c_str());
  };
  if (status == -1) {
    cleanup();
    return "cannot run " + compiler;
  }
  std::string why;
  if (status == -2) {
    why = "the compiler timed out";
  } else if (WIFSIGNALED(status)) {
    why = "the compiler was killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    why = "the compiler failed: " + read_file(log_path).substr(0, 2000);
  } else if (chmod(tmp_so.c_str(), 0700) != 0 || std::rename(tmp_so.c_str(), so_path.c_str()) != 0) {
    why = "cannot write " + so_path;
  }
  cleanup();
  return why;
}

}  // namespace tinyxla::codegen
