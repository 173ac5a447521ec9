#include "collage/backends/halide/kernel_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <thread>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"
#include "collage/ir/structural_hash.h"

extern char** environ;

namespace collage::halide {
namespace {

namespace fs = std::filesystem;

std::string hex64(std::uint64_t value) { return fmt::format("{:016x}", value); }

// The record beside a library: the key, then the library's size and checksum.
std::string make_record(const std::string& key, const std::string& library_bytes) {
  return fmt::format("key {}\nbytes {}\nfnv1a64 {}\n", key, library_bytes.size(),
                     hex64(fnv1a_64(library_bytes)));
}

// Runs `argv` and waits; the exit status, or -1 when it could not start.
int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string compiler_driver() {
  const char* cc = std::getenv("CC");
  return cc != nullptr && *cc != '\0' ? cc : "cc";
}

// In the child: object file, then the shared library. Exit 0 on success;
// otherwise the reason is written to `reason_fd`.
[[noreturn]] void build_in_child(const ObjectWriter& write_object, const std::string& object,
                                 const std::string& library, int reason_fd) {
  auto fail = [reason_fd](const std::string& reason) {
    ssize_t written = ::write(reason_fd, reason.data(), reason.size());
    (void)written;
    ::_exit(1);
  };
  try {
    Result<bool> written = write_object(object);
    if (!written) fail(written.error());
  } catch (const std::exception& error) {
    fail(error.what());
  }
  // -Bsymbolic: the library's copy of the Halide runtime binds to itself,
  // never to another kernel's.
  const int status = run_program(
      {compiler_driver(), "-shared", "-o", library, object, "-Wl,-Bsymbolic", "-Wl,-z,now"});
  if (status != 0) {
    fail(status < 0 ? fmt::format("cannot run the C compiler driver '{}' to link the kernel "
                                  "(install build-essential or set CC)",
                                  compiler_driver())
                    : fmt::format("linking the kernel failed ({} exited with {})",
                                  compiler_driver(), status));
  }
  ::_exit(0);
}

// A build running in a child process.
struct ChildBuild {
  pid_t pid = -1;
  int reason_fd = -1;
  std::chrono::steady_clock::time_point start;
};

// Forks and builds in the child.
Result<ChildBuild> start_child_build(const ObjectWriter& write_object, const std::string& object,
                                     const std::string& library) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Failure{fmt::format("cannot create a pipe: {}", std::strerror(errno))};
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Failure{fmt::format("cannot fork the compiler: {}", std::strerror(errno))};
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    build_in_child(write_object, object, library, pipe_fds[1]);
  }
  ::close(pipe_fds[1]);
  return ChildBuild{pid, pipe_fds[0], std::chrono::steady_clock::now()};
}

// The outcome of `build` once its child has exited, or killed once it has
// run past `budget_seconds`; nothing while it still runs within its budget.
// With `wait`, waits for one of the two.
std::optional<Result<bool>> poll_child_build(ChildBuild& build, double budget_seconds, bool wait) {
  int status = 0;
  bool timed_out = false;
  while (true) {
    const pid_t done = ::waitpid(build.pid, &status, WNOHANG);
    if (done == build.pid) break;
    if (done < 0 && errno != EINTR) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - build.start).count();
    if (elapsed > budget_seconds) {
      ::kill(build.pid, SIGKILL);
      ::waitpid(build.pid, &status, 0);
      timed_out = true;
      break;
    }
    if (!wait) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::string reason;
  char buffer[4096];
  ssize_t got = 0;
  while ((got = ::read(build.reason_fd, buffer, sizeof buffer)) > 0) {
    reason.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(build.reason_fd);
  build.reason_fd = -1;
  if (timed_out) {
    return Failure{
        fmt::format("compiling the kernel exceeded its budget of {:.0f} s", budget_seconds)};
  }
  if (WIFSIGNALED(status)) {
    return Failure{fmt::format("the kernel compiler died with signal {}", WTERMSIG(status))};
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Failure{reason.empty() ? std::string("the kernel compiler failed") : reason};
  }
  return Result<bool>(true);
}

}  // namespace

std::string default_kernel_cache_dir() {
  if (const char* dir = std::getenv("COLLAGE_HALIDE_CACHE"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return (fs::path(cache_directory()) / "halide-kernels").string();
}

KernelCache::KernelCache(std::string directory) : directory_(std::move(directory)) {}

std::string KernelCache::library_path(const std::string& key) const {
  return (fs::path(directory_) / (hex64(fnv1a_64(key)) + ".so")).string();
}

std::string KernelCache::record_path(const std::string& key) const {
  return (fs::path(directory_) / (hex64(fnv1a_64(key)) + ".record")).string();
}

Result<bool> KernelCache::check_stored(const std::string& key) const {
  std::string record;
  std::string bytes;
  try {
    record = read_regular_file(record_path(key), 1 << 16);
    bytes = read_regular_file(library_path(key), std::int64_t{1} << 30);
  } catch (const Error& error) {
    return Failure{error.what()};
  }
  if (record != make_record(key, bytes)) {
    return Failure{"the cached kernel does not match its record (stale or corrupt)"};
  }
  return true;
}

Result<KernelLibrary> KernelCache::load(const std::string& key) const {
  if (Result<bool> stored = check_stored(key); !stored) return Failure{stored.error()};
  void* handle = ::dlopen(library_path(key).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Failure{fmt::format("cannot load the kernel: {}", ::dlerror())};
  KernelLibrary library;
  library.handle = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
  library.entry = reinterpret_cast<int (*)(void**)>(
      ::dlsym(handle, (std::string(kKernelFunction) + "_argv").c_str()));
  if (library.entry == nullptr) return Failure{"the cached kernel has no entry point"};
  return library;
}

KernelCache::Paths KernelCache::build_paths(const std::string& key) const {
  std::error_code ignored;
  fs::create_directories(directory_, ignored);
  // Unique names per process and key: concurrent tunes may build the same
  // key, and one tune builds several keys at once.
  const std::string stem =
      (fs::path(directory_) / fmt::format("build-{}-{}", ::getpid(), hex64(fnv1a_64(key))))
          .string();
  return Paths{stem + ".o", stem + ".so"};
}

Result<bool> KernelCache::store(const std::string& key, const Paths& paths,
                                const Result<bool>& built) const {
  std::error_code ignored;
  fs::remove(paths.object, ignored);
  if (!built) {
    fs::remove(paths.library, ignored);
    return Failure{built.error()};
  }
  try {
    const std::string bytes = read_regular_file(paths.library);
    // The library first, its record last: a reader that sees the new
    // record sees the library it describes.
    fs::rename(paths.library, library_path(key));
    write_file_atomically(record_path(key), make_record(key, bytes));
  } catch (const std::exception& error) {
    fs::remove(paths.library, ignored);
    return Failure{fmt::format("cannot store the compiled kernel: {}", error.what())};
  }
  return true;
}

bool KernelCache::holds(const std::string& key) const { return check_stored(key).ok(); }

Result<KernelLibrary> KernelCache::load_or_build(const std::string& key,
                                                 const ObjectWriter& write_object,
                                                 double budget_seconds) const {
  if (Result<KernelLibrary> cached = load(key)) {
    cached->from_cache = true;
    return cached;
  }
  const Paths paths = build_paths(key);
  const auto start = std::chrono::steady_clock::now();
  Result<bool> built = [&]() -> Result<bool> {
    Result<ChildBuild> child = start_child_build(write_object, paths.object, paths.library);
    if (!child) return Failure{child.error()};
    return *poll_child_build(*child, budget_seconds, true);
  }();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (Result<bool> stored = store(key, paths, built); !stored) return Failure{stored.error()};
  Result<KernelLibrary> loaded = load(key);
  if (loaded) loaded->compile_seconds = seconds;
  return loaded;
}

struct ParallelBuilds::Running {
  std::string key;
  KernelCache::Paths paths;
  ChildBuild child;
};

ParallelBuilds::ParallelBuilds(const KernelCache& cache, double budget_seconds, int parallel,
                               std::function<void()> on_done)
    : cache_(cache),
      budget_seconds_(budget_seconds),
      parallel_(std::max(1, parallel)),
      on_done_(std::move(on_done)) {}

ParallelBuilds::~ParallelBuilds() { wait_all(); }

void ParallelBuilds::reap(bool wait_for_one) {
  while (true) {
    for (auto it = running_.begin(); it != running_.end();) {
      std::optional<Result<bool>> outcome = poll_child_build(it->child, budget_seconds_, false);
      if (!outcome) {
        ++it;
        continue;
      }
      // A failure is left to compile(), which builds the kernel again and
      // reports why it fails.
      if (cache_.store(it->key, it->paths, *outcome)) ++built_;
      it = running_.erase(it);
      if (on_done_) on_done_();
      wait_for_one = false;
    }
    if (!wait_for_one || running_.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool ParallelBuilds::add(const std::string& key, const ObjectWriter& write_object) {
  if (!started_.insert(key).second || cache_.holds(key)) return false;
  reap(false);
  while (static_cast<int>(running_.size()) >= parallel_) reap(true);
  KernelCache::Paths paths = cache_.build_paths(key);
  Result<ChildBuild> child = start_child_build(write_object, paths.object, paths.library);
  if (!child) return false;
  running_.push_back(Running{key, std::move(paths), *child});
  return true;
}

void ParallelBuilds::wait_all() {
  while (!running_.empty()) reap(true);
}

}  // namespace collage::halide
