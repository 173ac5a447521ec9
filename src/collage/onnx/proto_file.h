// Reading and writing whole protobuf messages as files.
//
// ONNX models are single protobuf messages that routinely exceed the 64 MB
// default limit older protobuf readers enforce; this reads any message up to
// protobuf's hard 2 GB limit (larger models keep their weights as external
// data) straight from the file, without an intermediate copy of its bytes.
// Every failure is an Error naming the file.
#pragma once

#include <google/protobuf/message_lite.h>

#include <string>
#include <string_view>

namespace collage {

// Parses the file at `path` into `message`. `what` names the expected content
// in errors ("ONNX model", "ONNX tensor").
void read_proto_file(const std::string& path, google::protobuf::MessageLite& message,
                     std::string_view what);

// Serializes `message` to `path`, replacing the file.
void write_proto_file(const std::string& path, const google::protobuf::MessageLite& message);

}  // namespace collage
