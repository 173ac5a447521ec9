// onnx_conformance: runs ONNX's own operator test cases against our kernels.
//
// Each case directory of ONNX's backend test data (libonnx-testdata:
// data/node/test_*/) holds model.onnx and test_data_set_*/ with input_*.pb
// and output_*.pb. A case is imported like any model (native constant
// folding, shapes pinned to the test data), compiled with the backend under
// test, run on every data set, and its outputs compared with ONNX's
// (numpy.testing.assert_allclose rules, rtol 1e-3, atol 1e-5; integers and
// bools exact).
//
// A case the backend cannot run (an op it does not support, an element type
// or input kind the importer does not handle) is skipped with the reason,
// never counted as passed. Every case runs in a child process with a time
// limit, so a crash or a hang in one kernel is reported as that case's
// failure instead of ending the run.
//
// Output: one line per failure, one line per skip reason with its case
// count, and last exactly `N passed, M failed, K skipped`. Exit status 1 if
// any case failed.
//
// Usage: onnx_conformance [--data-dir DIR] [--backend reference|NAME]
//                         [--filter SUBSTRING] [--threads N] [--timeout SECONDS]
//                         [--no-fork] [--verbose]
// --backend reference (the default) runs the reference executor
// (compile_reference, node by node); a backend name compiles each case's
// whole graph with that backend, on the cases whose every node it supports.
#include <fcntl.h>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collage/backends/native/native_backend.h"
#include "collage/backends/registry.h"
#include "collage/ir/error.h"
#include "collage/onnx/importer.h"
#include "collage/onnx/proto_file.h"
#include "collage/onnx/tensor_proto.h"
#include "collage/runtime/executor.h"
#include "conformance/tensor_compare.h"

namespace fs = std::filesystem;

namespace collage::testing {
namespace {

constexpr const char* kDefaultDataDir = "/usr/share/libonnx-testdata/data/node";
constexpr const char* kReference = "reference";

struct Options {
  std::string data_dir = kDefaultDataDir;
  std::string backend = kReference;
  std::string filter;
  int threads = 2;
  int timeout_seconds = 120;
  bool fork = true;
  bool verbose = false;
};

enum class Outcome : char { kPass = 'P', kFail = 'F', kSkip = 'S' };

struct CaseResult {
  Outcome outcome;
  // Failure: what went wrong. Skip: the reason, worded so that cases
  // skipped for the same reason share it (it is the summary's key).
  std::string detail;
};

CaseResult pass() { return {Outcome::kPass, ""}; }
CaseResult fail(std::string why) { return {Outcome::kFail, std::move(why)}; }
CaseResult skip(std::string why) { return {Outcome::kSkip, std::move(why)}; }

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Errors that mean "outside what the project implements" rather than
// "wrong", as the skip reason (worded so that cases skipped for one cause
// share it); nullopt for a real failure.
std::optional<std::string> unsupported_reason(const std::string& message) {
  // Every shape is static by design: a value whose shape depends on input
  // data (Range over a computed limit) cannot be planned for.
  if (contains(message, "shape is still unknown") ||
      contains(message, "not known after shape inference")) {
    return "a shape depends on input values (only static shapes are supported)";
  }
  // Models of the training operator sets (ai.onnx.preview.training) only.
  if (contains(message, "imports no opset of the default ONNX domain")) {
    return "no opset of the default ONNX domain";
  }
  if (contains(message, "not supported") || contains(message, "unsupported")) return message;
  return std::nullopt;
}

std::vector<fs::path> sorted_entries(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) entries.push_back(entry.path());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// input_0.pb, input_1.pb, ... in numeric order (input_10 after input_9).
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& stem) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path file = dir / fmt::format("{}_{}.pb", stem, i);
    if (!fs::exists(file)) break;
    files.push_back(file);
  }
  return files;
}

struct DataSet {
  std::string name;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
};

// The backend under test, as a whole-graph compiler.
class Subject {
 public:
  explicit Subject(const std::string& name) : name_(name) {
    const std::string& backend = name == kReference ? std::string("native") : name;
    backend_ = &BackendRegistry::global().get(backend);
  }
  const std::string& name() const { return name_; }
  bool is_reference() const { return name_ == kReference; }
  const Backend& backend() const { return *backend_; }

  Result<std::unique_ptr<Kernel>> compile(const Graph& graph, int threads) const {
    if (is_reference()) return compile_reference(graph, threads);
    return backend_->compile(graph, CompileOptions{.threads = threads});
  }

 private:
  std::string name_;
  const Backend* backend_ = nullptr;
};

std::optional<std::string> non_tensor_signature(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    if (!input.type().has_tensor_type()) return "non-tensor input (sequence, optional or map)";
  }
  for (const auto& output : graph.output()) {
    if (!output.type().has_tensor_type()) return "non-tensor output (sequence, optional or map)";
  }
  return std::nullopt;
}

CaseResult run_case_unisolated(const fs::path& dir, const Subject& subject,
                               const Options& options) {
  auto model = std::make_shared<onnx::ModelProto>();
  try {
    read_proto_file((dir / "model.onnx").string(), *model, "ONNX model");
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (auto reason = non_tensor_signature(model->graph())) return skip(*reason);

  std::vector<std::string> input_names;
  {
    std::set<std::string> initializers;
    for (const auto& init : model->graph().initializer()) initializers.insert(init.name());
    for (const auto& input : model->graph().input()) {
      if (!initializers.count(input.name())) input_names.push_back(input.name());
    }
  }

  std::vector<DataSet> data_sets;
  for (const fs::path& set_dir : sorted_entries(dir, "test_data_set_")) {
    DataSet set{set_dir.filename().string(), {}, {}};
    try {
      for (const fs::path& file : numbered_files(set_dir, "input")) {
        set.inputs.push_back(load_tensor_proto_file(file.string()));
      }
      for (const fs::path& file : numbered_files(set_dir, "output")) {
        set.outputs.push_back(load_tensor_proto_file(file.string()));
      }
    } catch (const Error& e) {
      if (auto reason = unsupported_reason(e.message())) return skip("test data: " + *reason);
      return fail(e.what());
    }
    if (set.inputs.size() != input_names.size()) {
      return skip("data sets omit optional inputs");
    }
    data_sets.push_back(std::move(set));
  }
  if (data_sets.empty()) return fail("no test_data_set_* directory");

  ImportOptions import_options;
  import_options.evaluator = &native_evaluator();
  for (std::size_t i = 0; i < input_names.size(); ++i) {
    import_options.input_shapes[input_names[i]] = data_sets[0].inputs[i].shape();
  }
  Graph graph;
  try {
    graph = import_onnx_model(model, import_options, dir.string());
  } catch (const Error& e) {
    if (auto reason = unsupported_reason(e.message())) return skip("import: " + *reason);
    return fail("import: " + std::string(e.what()));
  }

  std::set<std::string> missing;
  for (const Node& node : graph.nodes()) {
    if (!subject.backend().supports(graph, node)) {
      missing.insert(node.domain.empty() ? node.op_type : node.domain + "." + node.op_type);
    }
  }
  if (!missing.empty()) {
    return skip(
        fmt::format("not supported by {}: {}", subject.backend().name(), fmt::join(missing, ", ")));
  }

  std::optional<Executor> executor;
  try {
    executor.emplace(whole_model_executor(graph, subject.name(), [&](const Graph& partition) {
      return subject.compile(partition, options.threads);
    }));
  } catch (const Error& e) {
    // The native kernels claimed every node, so refusing one is a bug; other
    // backends may decline a multi-node graph they support node by node.
    if (subject.is_reference() || subject.backend().name() == "native") return fail(e.what());
    return skip(e.message());
  }

  for (const DataSet& set : data_sets) {
    std::map<std::string, Tensor> inputs;
    for (std::size_t i = 0; i < input_names.size(); ++i) inputs[input_names[i]] = set.inputs[i];
    std::map<std::string, Tensor> outputs;
    try {
      outputs = executor->run(inputs);
    } catch (const std::exception& e) {
      return fail(fmt::format("{}: {}", set.name, e.what()));
    }
    const std::vector<std::string>& names = executor->output_names();
    if (names.size() != set.outputs.size()) {
      return fail(fmt::format("{}: the model has {} outputs, the data set {}", set.name,
                              names.size(), set.outputs.size()));
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (auto difference = compare_tensors(outputs.at(names[i]), set.outputs[i])) {
        return fail(fmt::format("{}: output {} '{}': {}", set.name, i, names[i], *difference));
      }
    }
  }
  return pass();
}

CaseResult run_case_guarded(const fs::path& dir, const Subject& subject, const Options& options) {
  try {
    return run_case_unisolated(dir, subject, options);
  } catch (const std::exception& e) {
    return fail(fmt::format("unexpected exception: {}", e.what()));
  }
}

// Runs the case in a child process, which reports "<outcome><detail>"
// through a pipe. The parent never runs a kernel, so the child starts with
// no OpenMP thread pool to inherit.
CaseResult run_case_isolated(const fs::path& dir, const Subject& subject, const Options& options) {
  int fds[2];
  if (pipe(fds) != 0) return fail(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) return fail(fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(options.timeout_seconds));
    CaseResult result = run_case_guarded(dir, subject, options);
    std::string message = static_cast<char>(result.outcome) + result.detail;
    std::size_t written = 0;
    while (written < message.size()) {
      ssize_t n = write(fds[1], message.data() + written, message.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string message;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0)
    message.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    if (signal == SIGALRM)
      return fail(fmt::format("timed out after {} s", options.timeout_seconds));
    return fail(fmt::format("crashed: {}", strsignal(signal)));
  }
  if (message.empty()) return fail("the test process exited without a result");
  return CaseResult{static_cast<Outcome>(message[0]), message.substr(1)};
}

// One line, whatever the detail holds.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

int run(const Options& options) {
  Subject subject(options.backend);
  if (!fs::is_directory(options.data_dir)) {
    std::fprintf(stderr, "onnx_conformance: no test data at %s (install libonnx-testdata)\n",
                 options.data_dir.c_str());
    return 2;
  }
  std::vector<fs::path> cases;
  for (const fs::path& dir : sorted_entries(options.data_dir, "")) {
    if (!fs::exists(dir / "model.onnx")) continue;
    if (dir.filename().string().find(options.filter) == std::string::npos) continue;
    cases.push_back(dir);
  }

  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::map<std::string, int> skip_reasons;
  for (const fs::path& dir : cases) {
    std::string name = dir.filename().string();
    CaseResult result = options.fork ? run_case_isolated(dir, subject, options)
                                     : run_case_guarded(dir, subject, options);
    switch (result.outcome) {
      case Outcome::kPass:
        ++passed;
        if (options.verbose) fmt::print("PASS {}\n", name);
        break;
      case Outcome::kFail:
        ++failed;
        fmt::print("FAIL {}: {}\n", name, one_line(result.detail));
        break;
      case Outcome::kSkip:
        ++skipped;
        ++skip_reasons[one_line(result.detail)];
        if (options.verbose) fmt::print("SKIP {}: {}\n", name, one_line(result.detail));
        break;
    }
    std::fflush(stdout);
  }

  std::vector<std::pair<std::string, int>> reasons(skip_reasons.begin(), skip_reasons.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [reason, count] : reasons) {
    fmt::print("SKIP {} case{}: {}\n", count, count == 1 ? "" : "s", reason);
  }
  fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return failed == 0 ? 0 : 1;
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    std::optional<std::string> v;
    if (arg == "--no-fork") {
      options.fork = false;
    } else if (arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--data-dir" && (v = value())) {
      options.data_dir = *v;
    } else if (arg == "--backend" && (v = value())) {
      options.backend = *v;
    } else if (arg == "--filter" && (v = value())) {
      options.filter = *v;
    } else if (arg == "--threads" && (v = value()) && std::atoi(v->c_str()) > 0) {
      options.threads = std::atoi(v->c_str());
    } else if (arg == "--timeout" && (v = value()) && std::atoi(v->c_str()) > 0) {
      options.timeout_seconds = std::atoi(v->c_str());
    } else {
      std::fprintf(stderr,
                   "usage: onnx_conformance [--data-dir DIR] [--backend reference|NAME] "
                   "[--filter SUBSTRING] [--threads N] [--timeout SECONDS] [--no-fork] "
                   "[--verbose]\n");
      return std::nullopt;
    }
  }
  return options;
}

}  // namespace
}  // namespace collage::testing

int main(int argc, char** argv) {
  std::optional<collage::testing::Options> options = collage::testing::parse_args(argc, argv);
  if (!options) return 2;
  try {
    return collage::testing::run(*options);
  } catch (const collage::Error& e) {
    std::fprintf(stderr, "onnx_conformance: %s\n", e.what());
    return 2;
  }
}
