#include "collage/ir/file_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "collage/ir/error.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

void write_plainly(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The Error reading `path` with `max_bytes` throws; fails the test without one.
Error read_error(const std::string& path, std::int64_t max_bytes = 1 << 20) {
  try {
    read_regular_file(path, max_bytes);
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no Error reading " << path;
  return Error("none");
}

TEST(FileIoTest, ReadsBackWhatWasWritten) {
  TempDir dir;
  const std::string bytes("binary\0data\n", 12);
  write_file_atomically(dir.file("out.bin"), bytes);
  EXPECT_EQ(read_regular_file(dir.file("out.bin")), bytes);
}

TEST(FileIoTest, WritingReplacesTheWholeFileAndLeavesNoTemporaryFile) {
  TempDir dir;
  write_plainly(dir.file("plan.json"), "a much longer old content");
  write_file_atomically(dir.file("plan.json"), "new");
  EXPECT_EQ(read_regular_file(dir.file("plan.json")), "new");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) files += entry.exists() ? 1 : 0;
  EXPECT_EQ(files, 1);
}

TEST(FileIoTest, WritingOverASymlinkReplacesTheLinkNotItsTarget) {
  TempDir dir;
  write_plainly(dir.file("target"), "keep");
  fs::create_symlink(dir.file("target"), dir.file("link"));
  write_file_atomically(dir.file("link"), "new");
  EXPECT_FALSE(fs::is_symlink(dir.file("link")));
  EXPECT_EQ(read_regular_file(dir.file("link")), "new");
  EXPECT_EQ(read_regular_file(dir.file("target")), "keep");
}

TEST(FileIoTest, ANewFileGetsReadWriteModeLessTheUmask) {
  TempDir dir;
  const mode_t saved = ::umask(027);
  write_file_atomically(dir.file("out"), "x");
  ::umask(saved);
  struct stat info {};
  ASSERT_EQ(::stat(dir.file("out").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST(FileIoTest, AFailedWriteIsAnErrorNamingTheFileAndLeavesNoTemporaryFile) {
  TempDir dir;
  fs::create_directory(dir.file("taken"));
  try {
    write_file_atomically(dir.file("taken"), "x");
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().file, dir.file("taken"));
  }
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(dir.path())) entries += entry.exists() ? 1 : 0;
  EXPECT_EQ(entries, 1);
}

TEST(FileIoTest, CheckWritableAcceptsANewFileInAWritableDirectoryAndLeavesNothing) {
  TempDir dir;
  check_writable(dir.file("plan.json"));
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(FileIoTest, CheckWritableThrowsWhatTheWriteWouldThrow) {
  TempDir dir;
  try {
    check_writable(dir.file("missing/plan.json"));
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().file, dir.file("missing/plan.json"));
    EXPECT_NE(error.message().find("cannot create"), std::string::npos) << error.what();
  }
  fs::create_directory(dir.file("taken"));
  EXPECT_THROW(check_writable(dir.file("taken")), Error);
}

TEST(FileIoTest, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  Error error = read_error(dir.file("absent.onnx"));
  EXPECT_EQ(error.where().file, dir.file("absent.onnx"));
  EXPECT_EQ(error.message(), "no such file");
}

TEST(FileIoTest, ADirectoryIsNotReadAsAFile) {
  TempDir dir;
  EXPECT_EQ(read_error(dir.path().string()).message(), "is a directory, not a file");
}

TEST(FileIoTest, ADeviceIsNotReadAsAFile) {
  EXPECT_EQ(read_error("/dev/zero").message(), "not a regular file");
}

TEST(FileIoTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_EQ(read_error(dir.file("fifo")).message(), "not a regular file");
}

TEST(FileIoTest, AFileLargerThanTheLimitIsAnErrorGivingBothSizes) {
  TempDir dir;
  write_plainly(dir.file("big"), std::string(11, 'x'));
  EXPECT_EQ(read_regular_file(dir.file("big"), 11).size(), 11u);
  EXPECT_EQ(read_error(dir.file("big"), 10).message(), "is 11 bytes, more than the 10 accepted");
}

TEST(FileIoTest, AnOpenedFileIsClosedOnExec) {
  TempDir dir;
  write_plainly(dir.file("f"), "x");
  const int fd = open_regular_file(dir.file("f"));
  ASSERT_GE(fd, 0);
  EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  ::close(fd);
}

}  // namespace
}  // namespace collage
