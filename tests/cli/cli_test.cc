// The `collage` binary as a user meets it: bad input of every kind exits
// with code 2 and exactly one line on stderr, and a good run succeeds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  // The exit code, or -1 when the process died of a signal.
  int exit_code = -1;
  int signal = 0;
  std::string err;
  std::string out;
};

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0)
    text.append(buffer, static_cast<std::size_t>(n));
  return text;
}

// Runs the built binary with `args` (after `env`, NAME=VALUE settings);
// stdout and stderr go to files so that a chatty process cannot block on a
// full pipe. `as_nobody`: as user nobody, when this test runs as root.
Outcome run_collage(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                    bool as_nobody = false) {
  fs::path scratch = fs::temp_directory_path() / ("collage_cli_test_" + std::to_string(getpid()));
  fs::create_directories(scratch);
  std::string out_path = (scratch / "stdout").string();
  std::string err_path = (scratch / "stderr").string();
  std::string binary = std::string(COLLAGE_BINARY_DIR) + "/collage";
  pid_t child = fork();
  if (child == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<std::string> copies = env;
    for (std::string& setting : copies) putenv(setting.data());
    std::vector<std::string> command = {binary};
    if (as_nobody) {
      command = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", binary};
    }
    command.insert(command.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : command) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(command.front().c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  Outcome outcome;
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  int fd = open(err_path.c_str(), O_RDONLY);
  outcome.err = read_all(fd);
  close(fd);
  fd = open(out_path.c_str(), O_RDONLY);
  outcome.out = read_all(fd);
  close(fd);
  fs::remove_all(scratch);
  return outcome;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collage_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // `collage tune MODEL` with XDG_CACHE_HOME=xdg in the test's directory is
  // one line and exit 2 about a symbolic link, and leaves `elsewhere` empty.
  void expect_tune_refuses_the_cache_and_writes_nothing_elsewhere(const std::string& model) const;

  // A measurement cache at `cache`, made by a quick tune of `model`.
  void make_cache(const std::string& model, const std::string& cache) const;

  // y = Relu(x), x: float[2,3] — the smallest real model.
  std::string write_relu_model(std::int64_t opset = 13) const {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name("relu");
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("Relu");
    node->add_input("x");
    node->add_output("y");
    for (auto [info, name] : {std::pair{graph->add_input(), "x"}, {graph->add_output(), "y"}}) {
      info->set_name(name);
      auto* tensor = info->mutable_type()->mutable_tensor_type();
      tensor->set_elem_type(onnx::TensorProto::FLOAT);
      tensor->mutable_shape()->add_dim()->set_dim_value(2);
      tensor->mutable_shape()->add_dim()->set_dim_value(3);
    }
    std::string file = path("relu.onnx");
    std::ofstream out(file, std::ios::binary);
    model.SerializeToOstream(&out);
    return file;
  }

  // A model built by `fill` on an empty graph (of opset 13 unless told),
  // saved as `name`.
  template <typename Fill>
  std::string write_model(const std::string& name, Fill fill, std::int64_t opset = 13) const {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(opset);
    model.mutable_graph()->set_name("test");
    fill(*model.mutable_graph());
    std::string file = path(name);
    std::ofstream out(file, std::ios::binary);
    model.SerializeToOstream(&out);
    return file;
  }

  // A float array of zeros of `shape`, saved as .npy under `name`.
  std::string write_zero_npy(const std::string& name,
                             const std::vector<std::int64_t>& shape) const {
    std::string dims;
    std::int64_t count = 1;
    for (std::int64_t dim : shape) {
      dims += (dims.empty() ? "" : ", ") + std::to_string(dim);
      count *= dim;
    }
    if (shape.size() == 1) dims += ",";
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    header.append(128 - 10 - header.size() - 1, ' ');
    header.push_back('\n');
    std::string file = path(name);
    std::ofstream out(file, std::ios::binary);
    out << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size()) << '\x00' << header
        << std::string(static_cast<std::size_t>(count) * 4, '\0');
    return file;
  }

  fs::path dir_;
};

void add_tensor_info(onnx::ValueInfoProto* info, const std::string& name,
                     const std::vector<std::int64_t>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  // No dimensions: the shape is left to inference. A negative one is dynamic.
  for (std::int64_t dim : dims) {
    auto* added = tensor->mutable_shape()->add_dim();
    if (dim < 0) {
      added->set_dim_param("N");
    } else {
      added->set_dim_value(dim);
    }
  }
}

onnx::NodeProto* add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

void add_ints(onnx::NodeProto* node, const std::string& name,
              const std::vector<std::int64_t>& values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (std::int64_t value : values) attribute->add_ints(value);
}

void add_int64_initializer(onnx::GraphProto& graph, const std::string& name,
                           const std::vector<std::int64_t>& values) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<std::int64_t>(values.size()));
  for (std::int64_t value : values) tensor->add_int64_data(value);
}

// The contract for bad input: exit code 2, one line on stderr, no crash.
void expect_one_line_error(const Outcome& outcome, const std::string& mentions) {
  EXPECT_EQ(outcome.signal, 0) << "crashed with signal " << outcome.signal;
  EXPECT_EQ(outcome.exit_code, 2) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  EXPECT_EQ(outcome.err.rfind("collage: error: ", 0), 0u) << outcome.err;
  EXPECT_NE(outcome.err.find(mentions), std::string::npos) << outcome.err;
}

TEST_F(CliTest, MissingModelFileIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"info", path("absent.onnx")}), "absent.onnx");
}

TEST_F(CliTest, GarbageModelFileIsOneLineAndExitCodeTwo) {
  std::string garbage = path("garbage.onnx");
  std::ofstream(garbage) << "\x01\x02 this is not a protobuf \xff\xfe";
  expect_one_line_error(run_collage({"run", garbage}), "garbage.onnx");
}

TEST_F(CliTest, UnknownStrategyIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--strategy", "fastest"}),
                        "fastest");
}

TEST_F(CliTest, MalformedInputShapeIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--input-shape", "x=2,three"}),
                        "--input-shape");
}

TEST_F(CliTest, InputShapeForAnUnknownInputIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"info", write_relu_model(), "--input-shape", "z=2,3"}), "'z'");
}

TEST_F(CliTest, AZeroQuantizationScaleIsOneLineAndExitCodeTwo) {
  std::string model = write_model("zero_scale.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {2, 3});
    add_tensor_info(graph.add_output(), "y", {});
    onnx::TensorProto* scale = graph.add_initializer();
    scale->set_name("s");
    scale->set_data_type(onnx::TensorProto::FLOAT);
    scale->add_float_data(0.0f);
    add_node(graph, "QuantizeLinear", {"x", "s"}, "q")->set_name("quantize");
    add_node(graph, "DequantizeLinear", {"q", "s"}, "y");
  });
  expect_one_line_error(run_collage({"run", model}), "'quantize'");
}

TEST_F(CliTest, UnknownFlagIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--fast"}), "--fast");
}

TEST_F(CliTest, NonPositiveThreadCountIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--threads", "0"}), "--threads");
}

TEST_F(CliTest, InputFileWithTheWrongShapeIsOneLineAndExitCodeTwo) {
  std::string model = write_relu_model();
  // A float[4] array: the model wants float[2,3].
  std::string npy = write_zero_npy("x.npy", {4});
  expect_one_line_error(run_collage({"run", model, "--input", "x=" + npy}), "'x'");
}

TEST_F(CliTest, AnInputFileFixesTheDynamicDimensionsOfItsInput) {
  std::string model = write_model("dynamic.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {-1, 3});
    add_tensor_info(graph.add_output(), "y", {});
    add_node(graph, "Relu", {"x"}, "y");
  });
  Outcome outcome = run_collage({"run", model, "--input", write_zero_npy("x.npy", {5, 3}),
                                 "--repeat", "1", "--threads", "1"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("output y  f32[5,3]"), std::string::npos) << outcome.out;
  EXPECT_EQ(outcome.err.find("warning"), std::string::npos) << outcome.err;
  // A dimension the model fixes is not overridden by the file.
  expect_one_line_error(
      run_collage({"run", model, "--input", "x=" + write_zero_npy("w.npy", {5, 4})}), "'x'");
  // --input-shape wins over the file, whose shape is then checked against it.
  expect_one_line_error(run_collage({"run", model, "--input-shape", "x=2,3", "--input",
                                     "x=" + write_zero_npy("v.npy", {5, 3})}),
                        "'x'");
}

TEST_F(CliTest, AnOpenDimensionIsSetToOneWithAWarningThatSaysHowToChangeIt) {
  std::string model = write_model("dynamic.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {-1, 3});
    add_tensor_info(graph.add_output(), "y", {});
    add_node(graph, "Relu", {"x"}, "y");
  });
  Outcome outcome = run_collage({"run", model, "--repeat", "1", "--threads", "1"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("output y  f32[1,3]"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.err.find("collage: warning: dynamic input dimension set to 1: 'x' dimension "
                             "0 ('N'); other sizes: --input-shape x=1,3\n"),
            std::string::npos)
      << outcome.err;
  // info names the open dimension and says what it counts it as.
  outcome = run_collage({"info", model});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("x  f32[N,3]"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("open dimensions: counted as 1"), std::string::npos) << outcome.out;
  // A plan tuned for the open dimension records the size it was tuned at.
  std::string plan = path("dynamic.plan.json");
  outcome = run_collage({"tune", model, "--backends", "native", "--no-verify", "--cache", "none",
                         "--threads", "1", "-q", "-o", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.err.find("'x' dimension 0 ('N')"), std::string::npos) << outcome.err;
  std::ifstream in(plan);
  std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(std::regex_search(saved, std::regex("\"x\": \\[\\s*1,\\s*3\\s*\\]"))) << saved;
}

TEST_F(CliTest, TuneWithSeveralShapesWritesAPlanPerShapeThatRunPicksFrom) {
  std::string model = write_model("dynamic.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {-1, 3});
    add_tensor_info(graph.add_output(), "y", {});
    add_node(graph, "Relu", {"x"}, "y");
  });
  const std::string plan = path("shapes.plan.json");
  Outcome outcome =
      run_collage({"tune", model, "--input-shape", "x=1..4,3", "--backends", "native",
                   "--no-verify", "--cache", "none", "--threads", "1", "-q", "-o", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("plan 3 of 3: x=[4,3]"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("3 plans saved to"), std::string::npos) << outcome.out;
  // Each shape tuned runs under its own plan, without a warning.
  for (std::int64_t batch : {1, 2, 4}) {
    const std::string npy = write_zero_npy("x" + std::to_string(batch) + ".npy", {batch, 3});
    outcome = run_collage({"run", model, "--plan", plan, "--input", npy, "--repeat", "1"});
    ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_NE(outcome.out.find("plan: for x=[" + std::to_string(batch) + ",3], of 3 plans"),
              std::string::npos)
        << outcome.out;
    EXPECT_EQ(outcome.err.find("warning"), std::string::npos) << outcome.err;
  }
  // Another shape runs under the closest plan, compiled for it, with one warning.
  outcome = run_collage({"run", model, "--plan", plan, "--input-shape", "x=3,3", "--repeat", "1"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("output y  f32[3,3]"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.err.find("no plan for x=[3,3] (plans for x=[1,3]; x=[2,3]; x=[4,3]); ran "
                             "the plan for x=[4,3] compiled for x=[3,3]"),
            std::string::npos)
      << outcome.err;
  // show shows one of them, the first unless --input-shape names another.
  outcome = run_collage({"show", plan, "--input-shape", "x=2,3"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("x=[2,3]"), std::string::npos) << outcome.out;
  outcome = run_collage({"show", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.err.find("holds 3 plans"), std::string::npos) << outcome.err;
  expect_one_line_error(run_collage({"show", plan, "--input-shape", "x=3,3"}), "no plan for");
}

TEST_F(CliTest, ShapesForTuneThatDoNotPairUpAreOneLineAndExitCodeTwo) {
  const std::string model = write_relu_model();
  expect_one_line_error(run_collage({"tune", model, "--input-shape", "x=4..2,3"}), "LO < HI");
  expect_one_line_error(run_collage({"tune", model, "--input-shape", "x=1..4,1..2"}), "as many");
  expect_one_line_error(
      run_collage({"tune", model, "--input-shape", "x=1,3", "--input-shape", "x=2,3",
                   "--input-shape", "y=1,3", "--input-shape", "y=2,3", "--input-shape", "y=4,3"}),
      "give each as many");
  expect_one_line_error(
      run_collage({"tune", model, "--input-shape", "x=2,3", "--input-shape", "x=2,3"}), "twice");
  expect_one_line_error(run_collage({"tune", model, "--input-shape", "x=1..1000000000000,3"}),
                        "more than 32");
}

// Placement constraints that cannot be honoured are refused before anything
// is measured: one line naming the flag or the node, exit 2.
TEST_F(CliTest, PlacementThatCannotBeHonouredIsOneLineAndExitCodeTwo) {
  const std::string model = write_relu_model();
  auto tune = [&](std::vector<std::string> flags) {
    std::vector<std::string> args = {
        "tune", model, "--cache", "none", "-q", "-o", path("relu.plan.json")};
    args.insert(args.end(), flags.begin(), flags.end());
    return run_collage(args);
  };
  expect_one_line_error(tune({"--place", "Relu_0"}), "--place 'Relu_0': expected NODES=BACKEND");
  expect_one_line_error(tune({"--avoid", "op:Relu"}), "--avoid 'op:Relu': expected BACKEND:NODES");
  expect_one_line_error(tune({"--place", "Relu_9=native"}), "matches no node of the model");
  expect_one_line_error(tune({"--place", "op:Conv=native"}), "no node of this op type");
  expect_one_line_error(tune({"--place", "op:Relu=nosuch"}), "this build has no backend 'nosuch'");
  expect_one_line_error(tune({"--backends", "native", "--place", "op:Relu=xnnpack"}),
                        "xnnpack is not among the backends of this run");
  expect_one_line_error(tune({"--backends", "openblas", "--place", "op:Relu=openblas"}),
                        "node 'Relu_0': cannot be pinned to openblas");
  expect_one_line_error(tune({"--backends", "native", "--avoid", "native:op:Relu"}),
                        "node 'Relu_0': no backend of this run may run this Relu");
  expect_one_line_error(tune({"--place", "Relu_0=native", "--place", "op:Relu=xnnpack"}),
                        "pinned to native");
  expect_one_line_error(tune({"--patterns", path("absent.json")}), "absent.json");
  std::ofstream(path("rules.json")) << R"({"patterns": [{"name": "p", "backend": "native"}]})";
  expect_one_line_error(tune({"--patterns", path("rules.json")}), "rule 'p': a rule needs");
  // compare refuses the same way.
  expect_one_line_error(
      run_collage({"compare", model, "--cache", "none", "-q", "--place", "op:Relu=nosuch"}),
      "this build has no backend 'nosuch'");
  EXPECT_FALSE(fs::exists(path("relu.plan.json")));
}

// A pinned node runs where it is pinned in every plan tune builds, the plan
// records the constraint, and show marks the partition.
TEST_F(CliTest, APinIsHonouredRecordedInThePlanAndMarkedByShow) {
  const std::string model = write_relu_model();
  const std::string plan = path("relu.plan.json");
  Outcome outcome = run_collage({"tune", model, "--backends", "native,xnnpack", "--threads", "1",
                                 "--cache", "none", "--repeat", "2", "--refine-rounds", "0", "-q",
                                 "--place", "op:Relu=xnnpack", "-o", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::ifstream in(plan);
  std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved.find("\"place op:Relu=xnnpack\""), std::string::npos) << saved;
  // Keys are sorted: partitions' and alternatives' backends are the only
  // "backend" keys, and native's candidates were never offered.
  EXPECT_NE(saved.find("\"backend\": \"xnnpack\""), std::string::npos) << saved;
  EXPECT_EQ(saved.find("\"backend\": \"native\""), std::string::npos) << saved;
  outcome = run_collage({"show", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("xnnpack*"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("place op:Relu=xnnpack"), std::string::npos) << outcome.out;
  outcome = run_collage({"info", model, "--nodes"});
  EXPECT_NE(outcome.out.find("Relu_0  Relu  f32[2,3]"), std::string::npos) << outcome.out;
}

// The HTML report escapes what the model names: a node name is text on
// the page, never markup; and its flags refuse what they cannot use.
TEST_F(CliTest, TheHtmlReportEscapesNamesAndRefusesBadFlags) {
  const std::string hostile = "<img src=x onerror=alert(1)></script>";
  std::string model = write_model("hostile.onnx", [&](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {2, 3});
    add_tensor_info(graph.add_output(), "y", {2, 3});
    add_node(graph, "Relu", {"x"}, "y")->set_name(hostile);
  });
  const std::string plan = path("hostile.plan.json");
  Outcome outcome = run_collage({"tune", model, "--backends", "native", "--no-verify", "--cache",
                                 "none", "--threads", "1", "-q", "-o", plan});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const std::string report = path("hostile.html");
  outcome = run_collage({"show", plan, "--format", "html", "-o", report});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::ifstream in(report);
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.find(hostile), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(html.find("id=\"partition_0\""), std::string::npos);
  // In the page's data the name is a JSON string with '<' escaped.
  EXPECT_NE(html.find("\\u003cimg src=x onerror=alert(1)>\\u003c/script>"), std::string::npos);

  expect_one_line_error(run_collage({"show", plan, "--format", "pdf"}), "--format");
  expect_one_line_error(run_collage({"show", plan, "--compare", path("c.json")}), "--compare");
  std::ofstream(path("c.json")) << "{\"rows\": []}";
  expect_one_line_error(run_collage({"show", plan, "--format", "html", "--compare", path("c.json"),
                                     "-o", path("r.html")}),
                        "c.json");
}

TEST_F(CliTest, InfoDescribesAValidModel) {
  Outcome outcome = run_collage({"info", write_relu_model()});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("f32[2,3]"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("Relu"), std::string::npos) << outcome.out;
}

TEST_F(CliTest, InfoOfAnOpset18ModelSaysItWasConvertedTo17) {
  Outcome outcome = run_collage({"info", write_relu_model(18)});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("opset: 18 (converted to 17)"), std::string::npos) << outcome.out;
}

TEST_F(CliTest, AnOpset18FormWithoutAnOpset17OneIsOneLineAndExitCodeTwo) {
  std::string model = write_model(
      "antialias.onnx",
      [](onnx::GraphProto& graph) {
        add_tensor_info(graph.add_input(), "x", {1, 1, 4, 4});
        add_tensor_info(graph.add_output(), "y", {});
        onnx::TensorProto* scales = graph.add_initializer();
        scales->set_name("scales");
        scales->set_data_type(onnx::TensorProto::FLOAT);
        scales->add_dims(4);
        for (float scale : {1.0f, 1.0f, 0.5f, 0.5f}) scales->add_float_data(scale);
        onnx::NodeProto* node = add_node(graph, "Resize", {"x", "", "scales"}, "y");
        node->set_name("shrink");
        onnx::AttributeProto* antialias = node->add_attribute();
        antialias->set_name("antialias");
        antialias->set_type(onnx::AttributeProto::INT);
        antialias->set_i(1);
      },
      18);
  expect_one_line_error(run_collage({"info", model}), "antialias");
}

TEST_F(CliTest, RunSavesEveryOutputAsNpy) {
  Outcome outcome = run_collage({"run", write_relu_model(), "--repeat", "2", "--threads", "1",
                                 "--save-outputs", path("out")});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("median"), std::string::npos) << outcome.out;
  EXPECT_TRUE(fs::exists(path("out/y.npy")));
}

TEST_F(CliTest, RunWithProfileWritesAChromeTraceAndSummarizesIt) {
  Outcome outcome = run_collage({"run", write_relu_model(), "--repeat", "3", "--threads", "1",
                                 "--profile", path("trace.json")});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("profile over 3 runs"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("between kernels"), std::string::npos) << outcome.out;
  std::ifstream trace(path("trace.json"));
  std::string text((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"cat\": \"partition\""), std::string::npos) << text;
}

TEST_F(CliTest, ShowWithAProfilePutsTheInContextTimeBesideTheEstimate) {
  std::string model = write_relu_model();
  Outcome tuned = run_collage({"tune", model, "--backends", "native", "--threads", "1", "--cache",
                               "none", "--no-verify", "-q", "-o", path("p.json")});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  Outcome ran = run_collage({"run", model, "--plan", path("p.json"), "--repeat", "2", "--threads",
                             "1", "--profile", path("trace.json")});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  Outcome shown = run_collage({"show", path("p.json"), "--profile", path("trace.json")});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("ctx ms"), std::string::npos) << shown.out;
}

TEST_F(CliTest, RunWithTwoPlansTimesThemSideBySide) {
  std::string model = write_relu_model();
  Outcome native = run_collage({"tune", model, "--backends", "native", "--threads", "1", "--cache",
                                "none", "--no-verify", "-q", "-o", path("native.json")});
  ASSERT_EQ(native.exit_code, 0) << native.err;
  Outcome onednn = run_collage({"tune", model, "--backends", "onednn", "--threads", "1", "--cache",
                                "none", "--no-verify", "-q", "-o", path("onednn.json")});
  ASSERT_EQ(onednn.exit_code, 0) << onednn.err;
  Outcome ran = run_collage({"run", model, "--plan", path("native.json"), "--plan",
                             path("onednn.json"), "--repeat", "3", "--threads", "1"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.out.find("2 plans side by side, 3 rounds"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("plan " + path("onednn.json") + ": collage"), std::string::npos)
      << ran.out;
  EXPECT_NE(ran.out.find("1.000x the first plan's"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("x the first plan's", ran.out.find("onednn.json: collage")),
            std::string::npos)
      << ran.out;
  EXPECT_EQ(ran.err, "") << ran.err;
  // One trace and one set of outputs per run.
  expect_one_line_error(run_collage({"run", model, "--plan", path("native.json"), "--plan",
                                     path("onednn.json"), "--profile", path("t.json")}),
                        "--profile");
  expect_one_line_error(run_collage({"run", model, "--plan", path("native.json"), "--plan",
                                     path("onednn.json"), "--save-outputs", path("out")}),
                        "--save-outputs");
}

TEST_F(CliTest, CompareEstimatesFromPartitionsTimedAgainAndShowsTheSearchsEstimate) {
  Outcome outcome = run_collage({"compare", write_relu_model(), "--backends", "onednn", "--threads",
                                 "1", "--cache", path("cache.sqlite"), "--repeat", "2", "-q",
                                 "--json", path("compare.json")});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("timed again in between the runs"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("the search's estimate"), std::string::npos) << outcome.out;
  std::ifstream json(path("compare.json"));
  std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(std::regex_search(text, std::regex("\"search_estimated_ms\": [0-9]"))) << text;
}

TEST_F(CliTest, CompareWithoutACacheEstimatesFromTheSearchsMeasurements) {
  Outcome outcome = run_collage({"compare", write_relu_model(), "--backends", "onednn", "--threads",
                                 "1", "--cache", "none", "--repeat", "2", "-q"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("collage: estimated"), std::string::npos) << outcome.out;
  EXPECT_EQ(outcome.out.find("timed again"), std::string::npos) << outcome.out;
}

TEST_F(CliTest, ShowWithAFileThatIsNotATraceIsOneLineAndExitCodeTwo) {
  std::string model = write_relu_model();
  Outcome tuned = run_collage({"tune", model, "--backends", "native", "--threads", "1", "--cache",
                               "none", "--no-verify", "-q", "-o", path("p.json")});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  expect_one_line_error(run_collage({"show", path("p.json"), "--profile", model}), "relu.onnx");
}

TEST_F(CliTest, SearchLimitsOutOfRangeAreOneLineAndExitCodeTwo) {
  expect_one_line_error(
      run_collage({"tune", write_relu_model(), "--max-exits", "0", "--cache", "none"}),
      "--max-exits");
  expect_one_line_error(
      run_collage({"tune", write_relu_model(), "--search-layout", "diagonal", "--cache", "none"}),
      "--search-layout");
}

// ONNX's shape inference divided by the stride: the process died of SIGFPE.
TEST_F(CliTest, ConvWithAZeroStrideIsOneLineAndExitCodeTwo) {
  std::string model = write_model("conv.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {1, 1, 4, 4});
    add_tensor_info(graph.add_input(), "w", {1, 1, 3, 3});
    add_ints(add_node(graph, "Conv", {"x", "w"}, "y"), "strides", {0, 1});
    add_tensor_info(graph.add_output(), "y", {});
  });
  expect_one_line_error(run_collage({"info", model}), "attribute 'strides'");
}

TEST_F(CliTest, MaxPoolWithAZeroStrideIsOneLineAndExitCodeTwo) {
  std::string model = write_model("pool.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {1, 1, 4, 4});
    onnx::NodeProto* pool = add_node(graph, "MaxPool", {"x"}, "y");
    add_ints(pool, "kernel_shape", {2, 2});
    add_ints(pool, "strides", {1, 0});
    add_tensor_info(graph.add_output(), "y", {});
  });
  expect_one_line_error(run_collage({"run", model}), "attribute 'strides'");
}

// 2^62 x 4 elements used to wrap around to 0: a 0-byte buffer, then a
// heap-buffer-overflow filling it with random data.
TEST_F(CliTest, AnInputShapeWhoseSizeOverflowsIsOneLineAndExitCodeTwo) {
  expect_one_line_error(
      run_collage({"run", write_relu_model(), "--input-shape", "x=4611686018427387904,4"}),
      "input 'x'");
}

TEST_F(CliTest, AnInputShapeLargerThanMemoryIsRefusedNamingTheTensor) {
  expect_one_line_error(
      run_collage({"run", write_relu_model(), "--input-shape", "x=1000000,1000000"}),
      "--max-memory");
}

TEST_F(CliTest, ATileToBillionsOfElementsIsRefusedNamingItsOutput) {
  std::string model = write_model("tile.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {2, 3});
    add_int64_initializer(graph, "repeats", {100000, 100000});
    add_node(graph, "Tile", {"x", "repeats"}, "y");
    add_tensor_info(graph.add_output(), "y", {});
  });
  Outcome outcome = run_collage({"run", model, "--max-memory", "1G"});
  expect_one_line_error(outcome, "--max-memory");
  EXPECT_NE(outcome.err.find("'y' f32[200000,300000]"), std::string::npos) << outcome.err;
}

TEST_F(CliTest, AMalformedMaxMemoryIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--max-memory", "lots"}),
                        "--max-memory");
}

TEST_F(CliTest, ThreadCountsAreBoundedAlikeInEveryCommand) {
  for (const char* command : {"run", "tune", "compare"}) {
    expect_one_line_error(run_collage({command, write_relu_model(), "--threads", "10000"}),
                          "--threads");
    expect_one_line_error(run_collage({command, write_relu_model(), "--threads", "-3"}),
                          "--threads");
  }
}

// A minimal valid plan for write_relu_model()'s model, made by `collage
// run --strategy native` is not saved; `compare -o` would measure, so the
// plan is written by hand with the model's hash taken from a tune-free run.
std::string plan_json(const std::string& threads, const std::string& hash) {
  return "{\"format\": \"collage-plan\", \"version\": 1, \"strategy\": \"native\", "
         "\"model\": {\"path\": \"\", \"hash\": \"" +
         hash + "\"}, \"threads\": " + threads +
         ", \"partitions\": [{\"backend\": \"native\", \"nodes\": [\"Relu_0\"]}]}";
}

TEST_F(CliTest, APlanWithAnOutOfRangeNumberIsOneLineAndExitCodeTwo) {
  std::string plan = path("plan.json");
  std::ofstream(plan) << plan_json("1e999", "abc");
  expect_one_line_error(run_collage({"run", write_relu_model(), "--plan", plan}), "plan.json");
  std::ofstream(plan) << plan_json("1e300", "abc");
  expect_one_line_error(run_collage({"run", write_relu_model(), "--plan", plan}), "threads");
}

TEST_F(CliTest, APlanThatIsADirectoryIsOneLineAndExitCodeTwo) {
  fs::create_directories(path("plans"));
  expect_one_line_error(run_collage({"run", write_relu_model(), "--plan", path("plans")}),
                        "directory");
}

TEST_F(CliTest, APlanWithoutAModelHashIsRefused) {
  std::string plan = path("plan.json");
  std::ofstream(plan) << plan_json("1", "");
  expect_one_line_error(run_collage({"run", write_relu_model(), "--plan", plan}), "model hash");
}

// run --plan used to ignore the plan's thread count and said nothing when
// the plan came from another machine.
TEST_F(CliTest, RunPlanReplaysAtThePlansThreadCountAndWarnsAboutAnotherMachine) {
  std::string model = write_relu_model();
  std::string plan = path("relu.plan.json");
  Outcome tuned = run_collage({"tune", model, "--backends", "native", "--no-verify", "--cache",
                               "none", "--threads", "1", "-q", "-o", plan});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  std::ifstream in(plan);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  text = std::regex_replace(text, std::regex("\"threads\": [0-9]+"), "\"threads\": 2");
  text = std::regex_replace(text, std::regex("\"machine\": \"[^\"]*\""),
                            "\"machine\": \"another CPU|avx|t2\"");
  std::ofstream(plan) << text;
  Outcome replayed = run_collage({"run", model, "--plan", plan, "--repeat", "1"});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_NE(replayed.out.find("threads: 2"), std::string::npos) << replayed.out;
  EXPECT_EQ(std::count(replayed.err.begin(), replayed.err.end(), '\n'), 1) << replayed.err;
  EXPECT_EQ(replayed.err.rfind("collage: warning: ", 0), 0u) << replayed.err;
  EXPECT_NE(replayed.err.find("another CPU"), std::string::npos) << replayed.err;
  Outcome given = run_collage({"run", model, "--plan", plan, "--repeat", "1", "--threads", "1"});
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_NE(given.out.find("threads: 1"), std::string::npos) << given.out;
}

TEST_F(CliTest, AnUnknownGraphOptLevelIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--graph-opt", "extended"}),
                        "--graph-opt");
}

// Two transposes that cancel around a Relu: what `info` shows before and
// after optimization, and which rewrites ran.
TEST_F(CliTest, InfoListsTheOperatorsBeforeAndAfterOptimizationAndTheRewrites) {
  std::string model = write_model("transposes.onnx", [](onnx::GraphProto& graph) {
    add_tensor_info(graph.add_input(), "x", {2, 3});
    add_tensor_info(graph.add_output(), "y", {});
    add_ints(add_node(graph, "Transpose", {"x"}, "t"), "perm", {1, 0});
    add_ints(add_node(graph, "Transpose", {"t"}, "u"), "perm", {1, 0});
    add_node(graph, "Relu", {"u"}, "y");
  });
  Outcome optimized = run_collage({"info", model});
  ASSERT_EQ(optimized.exit_code, 0) << optimized.err;
  EXPECT_NE(optimized.out.find("operators: 1 nodes"), std::string::npos) << optimized.out;
  EXPECT_NE(optimized.out.find("3 nodes before graph optimization"), std::string::npos)
      << optimized.out;
  EXPECT_NE(optimized.out.find("Transpose  0  (was 2)"), std::string::npos) << optimized.out;
  EXPECT_NE(optimized.out.find("cancel Transpose pairs"), std::string::npos) << optimized.out;
  Outcome plain = run_collage({"info", model, "--graph-opt", "none"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("operators: 3 nodes"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("rewrites: none"), std::string::npos) << plain.out;
}

TEST_F(CliTest, APlanKeepsItsGraphOptLevelAndRefusesAnother) {
  std::string model = write_relu_model();
  std::string plan = path("relu.plan.json");
  Outcome tuned = run_collage({"tune", model, "--backends", "native", "--no-verify", "--cache",
                               "none", "--threads", "1", "-q", "-o", plan, "--graph-opt", "basic"});
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  std::ifstream in(plan);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"graph_opt\": \"basic\""), std::string::npos) << text;
  Outcome replayed = run_collage({"run", model, "--plan", plan, "--repeat", "1"});
  EXPECT_EQ(replayed.exit_code, 0) << replayed.err;
  expect_one_line_error(
      run_collage({"run", model, "--plan", plan, "--repeat", "1", "--graph-opt", "all"}),
      "--graph-opt");
}

TEST_F(CliTest, AnNpyHeaderIsQuotedAndCutInTheError) {
  std::string npy = path("x.npy");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'evil': \n" +
                       std::string(10000, 'A') + "\n}";
  std::ofstream out(npy, std::ios::binary);
  out << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(header.size() & 0xff)
      << static_cast<char>(header.size() >> 8) << header;
  out.close();
  Outcome outcome = run_collage({"run", write_relu_model(), "--input", "x=" + npy});
  expect_one_line_error(outcome, "x.npy");
  EXPECT_LT(outcome.err.size(), 600u) << outcome.err;
}

// Reading /dev/zero never ends and opening a FIFO without a writer blocks
// forever: only regular files are read.
TEST_F(CliTest, AnInputThatIsADeviceOrAFifoIsRefused) {
  expect_one_line_error(run_collage({"run", write_relu_model(), "--input", "x=/dev/zero"}),
                        "not a regular file");
  std::string fifo = path("fifo.npy");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_one_line_error(run_collage({"run", write_relu_model(), "--input", "x=" + fifo}),
                        "not a regular file");
  expect_one_line_error(run_collage({"info", fifo}), "not a regular file");
}

// A plan file name with shell syntax used to be pasted into a shell command.
TEST_F(CliTest, ShowSvgRunsNoShellOnThePlanName) {
  std::string model = write_relu_model();
  std::string plan = path("p';touch PWNED;'.json");
  std::ofstream(plan) << plan_json("1", "abc");
  pid_t child = fork();
  if (child == 0) {
    // Run in the scratch directory, where "touch PWNED" would create it.
    if (chdir(dir_.c_str()) != 0) _exit(127);
    std::string binary = std::string(COLLAGE_BINARY_DIR) + "/collage";
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(binary.c_str(), binary.c_str(), "show", plan.c_str(), "--format", "svg", nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "PWNED"));
  EXPECT_FALSE(fs::exists("PWNED"));
}

// A symlink planted at DIR/y.npy used to be followed and its target overwritten.
TEST_F(CliTest, SaveOutputsReplacesAPlantedSymlinkInsteadOfWritingThroughIt) {
  std::string victim = path("victim.txt");
  std::ofstream(victim) << "precious";
  fs::create_directories(path("out"));
  fs::create_symlink(victim, path("out/y.npy"));
  Outcome outcome = run_collage({"run", write_relu_model(), "--repeat", "1", "--threads", "1",
                                 "--save-outputs", path("out")});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(fs::is_symlink(path("out/y.npy")));
  EXPECT_TRUE(fs::is_regular_file(path("out/y.npy")));
}

TEST_F(CliTest, CacheStatsOfAMissingCacheIsOneLineAndExitCodeTwo) {
  expect_one_line_error(run_collage({"cache", "stats", "--cache", path("none.sqlite")}),
                        "none.sqlite");
}

// The cache file and the default cache directory are never reached through
// a symbolic link (docs/security.md): a tune once created its database
// wherever a planted link pointed.
void CliTest::expect_tune_refuses_the_cache_and_writes_nothing_elsewhere(
    const std::string& model) const {
  expect_one_line_error(run_collage({"tune", model, "-q", "-o", path("relu.plan.json")},
                                    {"XDG_CACHE_HOME=" + path("xdg")}),
                        "symbolic link");
  EXPECT_TRUE(fs::is_empty(path("elsewhere")));
}

void CliTest::make_cache(const std::string& model, const std::string& cache) const {
  Outcome tune = run_collage({"tune", model, "-q", "--backends", "native", "--no-verify", "--cache",
                              cache, "-o", path("p.json")});
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
}

// Measurements move between caches: export writes every row, import into
// another cache stores them (all or none), a valid row already there is
// kept, stats counts them per machine class, and a damaged file is refused
// with its line named before anything is stored.
TEST_F(CliTest, MeasurementsExportAndImportBetweenCaches) {
  const std::string model = write_relu_model();
  const std::string cache = path("a.sqlite");
  make_cache(model, cache);
  const std::string file = path("measurements.jsonl");
  Outcome outcome = run_collage({"cache", "export", file, "--cache", cache});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  std::smatch rows;
  ASSERT_TRUE(std::regex_search(outcome.out, rows, std::regex("exported (\\d+) rows")))
      << outcome.out;
  const std::string exported = rows[1];
  EXPECT_NE(exported, "0");
  std::ifstream in(file);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("\"format\":\"collage-measurements\""), std::string::npos) << header;

  const std::string other = path("b.sqlite");
  outcome = run_collage({"cache", "import", file, "--cache", other});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("imported " + exported + " of " + exported + " rows"),
            std::string::npos)
      << outcome.out;
  // Again: every row is a valid one already there.
  outcome = run_collage({"cache", "import", file, "--cache", other});
  EXPECT_NE(outcome.out.find("imported 0 of " + exported + " rows"), std::string::npos)
      << outcome.out;
  outcome = run_collage({"cache", "stats", "--cache", other});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_NE(outcome.out.find("rows: " + exported), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("machine class"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.out.find("(this machine)"), std::string::npos) << outcome.out;
  // A tune from the imported cache measures nothing again.
  outcome = run_collage({"tune", model, "--backends", "native", "--no-verify", "--cache", other,
                         "-o", path("p2.json")});
  EXPECT_NE(outcome.out.find("0 measured"), std::string::npos) << outcome.out;

  // Damaged files: nothing is stored.
  std::ofstream(path("bad.jsonl")) << header << "\n{\"key\": \"k\", \"valid\": 1}\n";
  expect_one_line_error(
      run_collage({"cache", "import", path("bad.jsonl"), "--cache", path("c.sqlite")}),
      "line 2: \"valid\" is missing or not true/false");
  std::ofstream(path("short.jsonl")) << "{\"format\":\"collage-measurements\",\"version\":1,"
                                        "\"rows\":5}\n";
  expect_one_line_error(
      run_collage({"cache", "import", path("short.jsonl"), "--cache", path("c.sqlite")}),
      "cut short");
  std::ofstream(path("other.jsonl")) << "{\"format\":\"collage-measurements\",\"version\":9}\n";
  expect_one_line_error(
      run_collage({"cache", "import", path("other.jsonl"), "--cache", path("c.sqlite")}),
      "format version 9");
  expect_one_line_error(
      run_collage({"cache", "import", path("absent.jsonl"), "--cache", path("c.sqlite")}),
      "absent.jsonl");
}

TEST_F(CliTest, ACacheFileThatIsASymlinkIsRefusedAndNothingIsWrittenAtItsTarget) {
  std::string model = write_relu_model();
  fs::create_directories(path("xdg/collage"));
  fs::create_directories(path("elsewhere"));
  fs::create_symlink(path("elsewhere/measurements.sqlite"),
                     path("xdg/collage/measurements.sqlite"));
  expect_tune_refuses_the_cache_and_writes_nothing_elsewhere(model);
}

TEST_F(CliTest, ACacheDirectoryThatIsASymlinkIsRefusedAndNothingIsWrittenThere) {
  std::string model = write_relu_model();
  fs::create_directories(path("xdg"));
  fs::create_directories(path("elsewhere"));
  fs::create_directory_symlink(path("elsewhere"), path("xdg/collage"));
  expect_tune_refuses_the_cache_and_writes_nothing_elsewhere(model);
}

// A tune writes its plan after minutes of search; an output it cannot write
// is reported before the search starts, with nothing measured.
TEST_F(CliTest, TuneWithAnUnwritableOutputFailsBeforeItMeasuresAnything) {
  std::string model = write_relu_model();
  Outcome outcome = run_collage(
      {"tune", model, "--cache", path("cache.sqlite"), "-o", path("no/such/dir/relu.plan.json")});
  expect_one_line_error(outcome, "relu.plan.json");
  EXPECT_EQ(outcome.out, "");
  EXPECT_FALSE(fs::exists(path("cache.sqlite")));
}

TEST_F(CliTest, CompareWithAnUnwritableJsonFailsBeforeItMeasuresAnything) {
  std::string model = write_relu_model();
  Outcome outcome = run_collage({"compare", model, "--cache", path("cache.sqlite"), "--json",
                                 path("no/such/dir/results.json")});
  expect_one_line_error(outcome, "results.json");
  EXPECT_EQ(outcome.out, "");
}

TEST_F(CliTest, CacheStatsOfADamagedCacheIsOneLineAndExitCodeTwo) {
  std::string model = write_relu_model();
  std::string cache = path("cache.sqlite");
  make_cache(model, cache);
  Outcome stats = run_collage({"cache", "stats", "--cache", cache});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  // Page 1 is the header and the schema; page 2 holds the measurements' rows.
  ASSERT_GE(fs::file_size(cache), 3u * 4096u);
  std::FILE* file = std::fopen(cache.c_str(), "r+b");
  ASSERT_NE(file, nullptr);
  std::fseek(file, 4096, SEEK_SET);
  const std::string garbage(4096, '\xa5');
  std::fwrite(garbage.data(), 1, garbage.size(), file);
  std::fclose(file);
  expect_one_line_error(run_collage({"cache", "stats", "--cache", cache}), "damaged");
}

// Whether user nobody may run `binary`: it and every directory above it
// are executable by others.
bool others_can_run(fs::path binary) {
  for (fs::path p = fs::absolute(binary); p != p.root_path(); p = p.parent_path()) {
    if ((fs::status(p).permissions() & fs::perms::others_exec) == fs::perms::none) return false;
  }
  return true;
}

// stats only reads: a cache this user cannot write is counted all the same.
TEST_F(CliTest, CacheStatsReadsACacheThisUserCannotWrite) {
  // Root writes any file whatever its mode: the command runs as nobody then.
  const bool root = ::geteuid() == 0;
  if (root && !others_can_run(std::string(COLLAGE_BINARY_DIR) + "/collage")) {
    GTEST_SKIP() << "running as root, and user nobody cannot reach the binary";
  }
  std::string model = write_relu_model();
  std::string cache = path("cache.sqlite");
  make_cache(model, cache);
  ::chmod(cache.c_str(), 0444);
  ::chmod(dir_.c_str(), 0555);
  Outcome stats = run_collage({"cache", "stats", "--cache", cache}, {}, root);
  ::chmod(dir_.c_str(), 0755);
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("rows:"), std::string::npos) << stats.out;
}

}  // namespace
