#include "collage/cost/worker_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace collage {
namespace {

bool write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

WorkerProcess::WorkerProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {
  // A worker that dies while we write to it must not kill us with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
}

WorkerProcess::~WorkerProcess() { stop(); }

Result<bool> WorkerProcess::start() {
  int to_child[2];
  int from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) return Failure{"cannot create a pipe"};
  if (::pipe2(from_child, O_CLOEXEC) != 0) {
    ::close(to_child[0]);
    ::close(to_child[1]);
    return Failure{"cannot create a pipe"};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (std::string& arg : argv_) args.push_back(arg.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (rc != 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    return Failure{fmt::format("cannot start worker '{}': {}", argv_[0], std::strerror(rc))};
  }
  pid_ = pid;
  to_child_ = to_child[1];
  from_child_ = from_child[0];
  pending_.clear();
  ++starts_;
  return true;
}

void WorkerProcess::stop() {
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
  to_child_ = from_child_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

std::string WorkerProcess::describe_exit() {
  if (pid_ <= 0) return "worker ended";
  // The worker closed its end of the pipe; it has normally exited. Give it a
  // moment, then kill it, so a worker that closed stdout but runs on cannot
  // block the caller.
  int status = 0;
  pid_t reaped = 0;
  for (int attempt = 0; attempt < 100 && reaped == 0; ++attempt) {
    reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == 0) ::usleep(10000);
  }
  if (reaped == 0) {
    ::kill(pid_, SIGKILL);
    reaped = ::waitpid(pid_, &status, 0);
  }
  if (reaped != pid_) return "worker ended";
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    return fmt::format("worker crashed with signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  return fmt::format("worker exited with status {}", WEXITSTATUS(status));
}

Result<std::string> WorkerProcess::request(const std::string& line,
                                           std::chrono::duration<double> timeout) {
  if (pid_ <= 0) {
    auto started = start();
    if (!started) return Failure{started.error()};
  }
  if (!write_all(to_child_, line + "\n")) {
    std::string why = describe_exit();
    stop();
    return Failure{why};
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string reply = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return reply;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop();
      return Failure{fmt::format("timed out after {:.1f} s", timeout.count())};
    }
    pollfd fd{from_child_, POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = describe_exit();
      stop();
      return Failure{why};
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace collage
