#include "collage/cost/measurement_server.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

Cost answer(const Graph& model, const std::unordered_map<std::string, NodeId>& node_by_name,
            InProcessMeasurer& measurer, const BackendLookup& lookup, const std::string& line) {
  MeasureRequest request = decode_measure_request(line);
  // A request this worker cannot serve says nothing of the candidate, whose
  // measurement is cached under its structure for every model that has it:
  // transient, so that a later run measures it.
  const Backend* backend = lookup(request.backend);
  if (backend == nullptr) {
    return Cost::transient_invalid("unknown backend '" + request.backend + "'");
  }
  std::vector<NodeId> nodes;
  for (const std::string& name : request.nodes) {
    auto it = node_by_name.find(name);
    if (it == node_by_name.end()) {
      return Cost::transient_invalid("the model has no node '" + name + "'");
    }
    nodes.push_back(it->second);
  }
  return request.screen ? measurer.screen(model, nodes, *backend)
                        : measurer.measure(model, nodes, *backend);
}

// Answers each request line with one reply line, until the input ends; an
// exception out of `answer` is an invalid cost saying what it was.
void serve_lines(std::istream& requests, std::FILE* replies,
                 const std::function<Cost(const std::string&)>& answer) {
  std::string line;
  while (std::getline(requests, line)) {
    Cost cost = Cost::invalid("no answer");
    try {
      cost = answer(line);
    } catch (const std::exception& e) {
      cost = Cost::invalid(e.what());
    }
    std::string reply;
    try {
      reply = encode_measure_reply(cost);
    } catch (const std::exception&) {
      // A reason that is not valid UTF-8 (an untrusted name in it).
      reply =
          encode_measure_reply(Cost::invalid("the measurement failed with an unprintable reason"));
    }
    std::fprintf(replies, "%s\n", reply.c_str());
    std::fflush(replies);
  }
}

}  // namespace

void serve_measurements(const Graph& model, InProcessMeasurer& measurer,
                        const BackendLookup& lookup, std::istream& requests, std::FILE* replies) {
  std::unordered_map<std::string, NodeId> node_by_name;
  for (std::size_t i = 0; i < model.num_nodes(); ++i) {
    node_by_name.emplace(model.node(static_cast<NodeId>(i)).name, static_cast<NodeId>(i));
  }
  serve_lines(requests, replies, [&](const std::string& line) {
    return answer(model, node_by_name, measurer, lookup, line);
  });
}

std::string encode_partition_request(const PartitionRequest& request) {
  return nlohmann::json{{"partition", request.file},
                        {"weights", request.weights_dir},
                        {"backend", request.backend},
                        {"evict", request.evict_bytes}}
      .dump();
}

PartitionRequest decode_partition_request(const std::string& line) {
  try {
    nlohmann::json document = nlohmann::json::parse(line);
    return PartitionRequest{
        document.at("partition").get<std::string>(), document.at("weights").get<std::string>(),
        document.at("backend").get<std::string>(), document.at("evict").get<std::int64_t>()};
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed measurement request: ") + e.what());
  }
}

void serve_partition_measurements(InProcessMeasurer& measurer, const BackendLookup& lookup,
                                  const PartitionDecoder& decode, std::istream& requests,
                                  std::FILE* replies) {
  serve_lines(requests, replies, [&](const std::string& line) {
    PartitionRequest request = decode_partition_request(line);
    const Backend* backend = lookup(request.backend);
    if (backend == nullptr) return Cost::invalid("unknown backend '" + request.backend + "'");
    std::optional<Graph> partition;
    try {
      partition = decode(read_regular_file(request.file), request.weights_dir);
    } catch (const Error& e) {
      return Cost::invalid("malformed job: the partition does not load: " + std::string(e.what()));
    }
    return measurer.measure_partition(*partition, *backend,
                                      static_cast<std::size_t>(request.evict_bytes));
  });
}

PartitionWorker::PartitionWorker(std::vector<std::string> worker_command, double timeout_seconds)
    : worker_(std::move(worker_command)), timeout_seconds_(timeout_seconds) {
  // One directory per worker: two fleet workers on one machine share the
  // private temporary directory.
  std::string pattern = private_temp_directory() + "/job-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error("cannot create a directory for measurement jobs", {.file = pattern});
  }
  directory_ = pattern;
  std::filesystem::create_directory(weights_directory());
}

PartitionWorker::~PartitionWorker() {
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

Cost PartitionWorker::measure(const std::string& partition_bytes, const std::string& backend,
                              std::int64_t evict_bytes) {
  const std::string file = directory_ + "/partition.onnx";
  write_file_atomically(file, partition_bytes);
  auto reply =
      worker_.request(encode_partition_request({file, weights_directory(), backend, evict_bytes}),
                      std::chrono::duration<double>(timeout_seconds_));
  std::error_code ignored;
  std::filesystem::remove(file, ignored);
  if (!reply) return Cost::transient_invalid(backend + ": " + reply.error());
  return decode_measure_reply(reply.value());
}

std::FILE* take_stdout_for_replies() {
  std::fflush(stdout);
  int reply_fd = ::dup(STDOUT_FILENO);
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return ::fdopen(reply_fd, "w");
}

}  // namespace collage
