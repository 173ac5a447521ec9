#include "collage/onnx/proto_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "collage/ir/error.h"

namespace collage {

void read_proto_file(const std::string& path, google::protobuf::MessageLite& message,
                     std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error("no such file", {.file = path});
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error("not a regular file", {.file = path});
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(std::string("cannot open: ") + std::strerror(errno), {.file = path});
  google::protobuf::io::FileInputStream raw(fd);
  raw.SetCloseOnDelete(true);
  bool parsed = false;
  {
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    parsed = message.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  if (raw.GetErrno() != 0) {
    throw Error(std::string("cannot read: ") + std::strerror(raw.GetErrno()), {.file = path});
  }
  if (!parsed) {
    throw Error("not a valid " + std::string(what) + " (corrupt or truncated protobuf)",
                {.file = path});
  }
}

void write_proto_file(const std::string& path, const google::protobuf::MessageLite& message) {
  if (message.ByteSizeLong() > static_cast<std::size_t>(INT_MAX)) {
    throw Error("message exceeds protobuf's 2 GB limit", {.file = path});
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(std::string("cannot create: ") + std::strerror(errno), {.file = path});
  if (!message.SerializeToOstream(&out)) throw Error("cannot serialize", {.file = path});
  out.close();
  if (!out) throw Error(std::string("cannot write: ") + std::strerror(errno), {.file = path});
}

}  // namespace collage
