// WorkerProcess: a helper process that answers one-line requests, and that
// may crash or hang without taking the caller down.
//
// Measuring a candidate runs a backend on a sub-graph it may never have seen;
// a library bug there must cost one candidate, not the tuning run. So the
// tuner sends each measurement to a worker process (`collage worker`) over a
// pipe and waits with a time limit. A worker that dies or overruns is killed
// and started again for the next request. A fresh process is also the only
// safe way to isolate OpenMP code: libgomp does not survive fork() once its
// thread pool is running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "collage/ir/result.h"

namespace collage {

class WorkerProcess {
 public:
  // `argv[0]` is the program to run; it is started on the first request.
  explicit WorkerProcess(std::vector<std::string> argv);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `line` (no newline inside) and waits for one line of reply. A
  // Failure says what happened (crash with its signal, time-out, no start);
  // the worker is then stopped and restarted by the next request.
  Result<std::string> request(const std::string& line, std::chrono::duration<double> timeout);

  // Number of times a worker had to be started (1 for a healthy run).
  int starts() const { return starts_; }

 private:
  Result<bool> start();
  void stop();
  // Reaps the exited child and describes how it ended.
  std::string describe_exit();

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;
  int starts_ = 0;
};

}  // namespace collage
