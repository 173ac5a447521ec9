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
#include "collage/ir/file_io.h"

namespace collage {

void read_proto_file(const std::string& path, google::protobuf::MessageLite& message,
                     std::string_view what) {
  int fd = open_regular_file(path);
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
  std::string bytes;
  if (!message.SerializeToString(&bytes)) throw Error("cannot serialize", {.file = path});
  write_file_atomically(path, bytes);
}

}  // namespace collage
