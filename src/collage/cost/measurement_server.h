// The worker side of isolated measurement: answers measurement requests.
//
// `collage worker` (and test workers with planted backends) call
// serve_measurements() with the model they loaded; it reads one request per
// line, measures it in this process and writes one reply line, until the
// input ends. A request that cannot be served (unknown backend or node) gets
// a transient invalid reply (retried by a later run, not cached as the
// candidate's), never an exception out of the loop.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "collage/cost/measurer.h"
#include "collage/cost/worker_process.h"

namespace collage {

// Finds a backend by name; nullptr when there is none.
using BackendLookup = std::function<const Backend*(const std::string&)>;

void serve_measurements(const Graph& model, InProcessMeasurer& measurer,
                        const BackendLookup& lookup, std::istream& requests, std::FILE* replies);

// The partition protocol, for measurement jobs (session/fleet.h): a request
// names a file holding a partition as ONNX bytes, the directory of the
// weight files it refers to, the backend and how much to evict before each
// timed call; the reply is encode_measure_reply()'s.
struct PartitionRequest {
  std::string file;
  std::string weights_dir;
  std::string backend;
  std::int64_t evict_bytes = 0;
};
std::string encode_partition_request(const PartitionRequest& request);
// Throws Error on a malformed line.
PartitionRequest decode_partition_request(const std::string& line);

// Reads a partition from its bytes and the directory of its weight files;
// throws Error for bytes that are not one.
using PartitionDecoder =
    std::function<Graph(const std::string& bytes, const std::string& weights_dir)>;

// serve_measurements() for the partition protocol. A partition that does
// not decode is an invalid (lasting) cost saying so.
void serve_partition_measurements(InProcessMeasurer& measurer, const BackendLookup& lookup,
                                  const PartitionDecoder& decode, std::istream& requests,
                                  std::FILE* replies);

// The asking side: a `collage worker --partitions` process measuring
// partitions handed over as ONNX bytes (through files in a private
// temporary directory), with the isolation of WorkerMeasurer.
class PartitionWorker {
 public:
  PartitionWorker(std::vector<std::string> worker_command, double timeout_seconds);
  ~PartitionWorker();
  PartitionWorker(const PartitionWorker&) = delete;
  PartitionWorker& operator=(const PartitionWorker&) = delete;

  // A crash or time-out of the worker is a transient invalid cost. The
  // weight files the partition refers to must be in weights_directory().
  Cost measure(const std::string& partition_bytes, const std::string& backend,
               std::int64_t evict_bytes);

  // Where weight files are kept between measurements (this worker's own).
  std::string weights_directory() const { return directory_ + "/weights"; }

 private:
  WorkerProcess worker_;
  double timeout_seconds_;
  std::string directory_;
};

// Points file descriptor 1 at stderr and returns a FILE* on the original
// stdout, so that libraries printing to stdout cannot corrupt the replies.
std::FILE* take_stdout_for_replies();

}  // namespace collage
