#include "collage/ir/file_io.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

Error file_error(const std::string& path, const std::string& what) {
  return Error(what + ": " + std::strerror(errno), {.file = path});
}

// The process's umask, read without changing it for good.
mode_t current_umask() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

}  // namespace

int open_regular_file(const std::string& path, std::int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below like any other file that is not regular.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) throw Error("no such file", {.file = path});
    throw file_error(path, "cannot open");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    Error error = file_error(path, "cannot stat");
    ::close(fd);
    throw error;
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw Error(S_ISDIR(info.st_mode) ? "is a directory, not a file" : "not a regular file",
                {.file = path});
  }
  if (info.st_size > max_bytes) {
    ::close(fd);
    throw Error("is " + std::to_string(info.st_size) + " bytes, more than the " +
                    std::to_string(max_bytes) + " accepted",
                {.file = path});
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(const std::string& path, std::int64_t max_bytes) {
  int fd = open_regular_file(path, max_bytes);
  struct stat info {};
  ::fstat(fd, &info);
  std::string bytes;
  bytes.resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  // Never read past the size fstat gave: a file that grows while being read
  // is read as it was.
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error error = file_error(path, "cannot read");
      ::close(fd);
      throw error;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

namespace {

// A new, empty temporary file in the directory `path` would be written to,
// open for writing. mkstemp creates it with O_CREAT | O_EXCL: it never opens
// an existing file or follows a symlink.
struct TempFile {
  int fd;
  std::string path;
};

TempFile create_temp_beside(const std::string& path) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (target.filename().empty()) throw Error("not a file name", {.file = path});
  std::string pattern = ((dir.empty() ? std::filesystem::path(".") : dir) /
                         ("." + target.filename().string() + ".XXXXXX"))
                            .string();
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  int fd = ::mkstemp(temp.data());
  if (fd < 0) throw file_error(path, "cannot create");
  return {fd, std::string(temp.data())};
}

}  // namespace

void check_writable(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw Error("is a directory, not a file", {.file = path});
  }
  TempFile temp = create_temp_beside(path);
  ::close(temp.fd);
  ::unlink(temp.path.c_str());
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const TempFile temp = create_temp_beside(path);
  const int fd = temp.fd;
  const std::string& temp_path = temp.path;
  auto fail = [&](const std::string& what) {
    Error error = file_error(path, what);
    ::close(fd);
    ::unlink(temp_path.c_str());
    return error;
  };
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("cannot write");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0666 & ~current_umask()) != 0) throw fail("cannot set the mode of");
  if (::close(fd) != 0) {
    Error error = file_error(path, "cannot write");
    ::unlink(temp_path.c_str());
    throw error;
  }
  if (::rename(temp_path.c_str(), path.c_str()) != 0) {
    Error error = file_error(path, "cannot replace");
    ::unlink(temp_path.c_str());
    throw error;
  }
}

std::string private_temp_directory() {
  const uid_t uid = ::geteuid();
  const std::string dir =
      (std::filesystem::temp_directory_path() / fmt::format("collage-{}", uid)).string();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    throw Error(fmt::format("cannot create the private cache directory: {}", std::strerror(errno)),
                {.file = dir});
  }
  // lstat: the directory itself, not what a planted symlink points to.
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) {
    throw Error(fmt::format("cannot inspect the cache directory: {}", std::strerror(errno)),
                {.file = dir});
  }
  if (!S_ISDIR(info.st_mode) || info.st_uid != uid || (info.st_mode & 077) != 0) {
    throw Error(
        "refusing the cache directory: it must be a directory owned by this user with "
        "mode 0700 (another user may control it); set XDG_CACHE_HOME or pass --cache",
        {.file = dir});
  }
  return dir;
}

namespace {

// `dir` when it is absent (created on first use) or a real directory of this
// user. A symbolic link is refused, not followed: whoever planted it would
// choose where measurements and compiled kernels are written and read.
std::string own_cache_directory(const std::string& dir) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) return dir;
  if (S_ISLNK(info.st_mode)) {
    throw Error(
        "refusing the cache directory: it is a symbolic link; point XDG_CACHE_HOME at a real "
        "directory, or pass --cache",
        {.file = dir});
  }
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid()) {
    throw Error(
        "refusing the cache directory: it must be a directory owned by this user; set "
        "XDG_CACHE_HOME or pass --cache",
        {.file = dir});
  }
  return dir;
}

}  // namespace

std::string cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return own_cache_directory((std::filesystem::path(xdg) / "collage").string());
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return own_cache_directory((std::filesystem::path(home) / ".cache" / "collage").string());
  }
  // The shared temp directory is writable by everyone: another user could
  // plant a cache there whose rows steer our plans.
  return private_temp_directory();
}

}  // namespace collage
