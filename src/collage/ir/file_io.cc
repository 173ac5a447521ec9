#include "collage/ir/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

void write_file_atomically(const std::string& path, std::string_view bytes) {
  std::filesystem::path target(path);
  std::filesystem::path dir = target.parent_path();
  if (target.filename().empty()) throw Error("not a file name", {.file = path});
  std::string pattern = ((dir.empty() ? std::filesystem::path(".") : dir) /
                         ("." + target.filename().string() + ".XXXXXX"))
                            .string();
  std::vector<char> temp(pattern.begin(), pattern.end());
  temp.push_back('\0');
  // mkstemp creates the file with O_CREAT | O_EXCL: it never opens an
  // existing file or follows a symlink.
  int fd = ::mkstemp(temp.data());
  if (fd < 0) throw file_error(path, "cannot create");
  const std::string temp_path(temp.data());
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

}  // namespace collage
