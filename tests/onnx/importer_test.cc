#include "collage/onnx/importer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collage/backends/native/native_backend.h"
#include "collage/ir/error.h"
#include "collage/onnx/tensor_proto.h"
#include "onnx/error_text.h"
#include "onnx/model_builder.h"
#include "onnx/shape_ops_evaluator.h"
#include "onnx/temp_dir.h"

namespace collage {
namespace {

using testing::attr;
using testing::contains;
using testing::error_of;
using testing::ModelBuilder;
using testing::ShapeOpsEvaluator;
using testing::TempDir;

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// y = Relu(x @ w + b), x: f32[batch, 4]
ModelBuilder dense_model(std::vector<testing::Dim> input_dims = {2, 4}) {
  ModelBuilder m;
  m.input("x", input_dims)
      .initializer("w",
                   Tensor::from_vector<float>(std::vector<float>(12, 0.5f), {12}).reshaped({4, 3}))
      .initializer("b", Tensor::from_vector<float>({1, 2, 3}, {3}))
      .node("MatMul", {"x", "w"}, {"xw"})
      .node("Add", {"xw", "b"}, {"sum"})
      .node("Relu", {"sum"}, {"y"})
      .output("y");
  return m;
}

// Import alone, without the graph optimizations (which make the MatMul and
// Add one Gemm).
ImportOptions unoptimized() {
  ImportOptions options;
  options.graph_opt = GraphOptLevel::kNone;
  return options;
}

TEST(ImporterTest, InitializersBecomeConstantsAndEveryValueIsTyped) {
  Graph g = import_onnx_model(dense_model().shared(), unoptimized());
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  ASSERT_TRUE(g.find_value("w").has_value());
  EXPECT_TRUE(g.value(*g.find_value("w")).is_constant());
  EXPECT_EQ(g.type(*g.find_value("xw")), f32({2, 3}));
  EXPECT_EQ(g.type(g.outputs()[0]), f32({2, 3}));
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.opset, 13);
}

TEST(ImporterTest, OutputsGetTheirElementTypeFromInference) {
  ModelBuilder m;
  m.input("x", {2, 5}).node("ArgMax", {"x"}, {"index"}, {attr("axis", std::int64_t{1})});
  m.output("index");
  Graph g = import_onnx_model(m.shared());
  EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::kInt64, {2, 1}}));
}

TEST(ImporterTest, AnInitializerListedAsAnInputIsAConstant) {
  ModelBuilder m = dense_model();
  m.input("w", {4, 3});
  Graph g = import_onnx_model(m.shared());
  EXPECT_EQ(g.inputs().size(), 1u);
  EXPECT_TRUE(g.value(*g.find_value("w")).is_constant());
}

TEST(ImporterTest, WeightsAreBorrowedFromTheParsedModel) {
  ModelBuilder m = dense_model();
  Graph g = import_onnx_model(m.shared());
  const Tensor& w = *g.value(*g.find_value("w")).constant;
  EXPECT_EQ(w.raw(), static_cast<const void*>(m.graph().initializer(0).raw_data().data()));
}

TEST(ImporterTest, InputShapesFixDynamicDimensions) {
  ImportOptions options;
  options.input_shapes["x"] = {5, 4};
  Graph g = import_onnx_model(dense_model({"batch", 4}).shared(), options);
  EXPECT_EQ(g.type(g.inputs()[0]), f32({5, 4}));
  EXPECT_EQ(g.type(g.outputs()[0]), f32({5, 3}));
}

TEST(ImporterTest, DataShapesFixOnlyTheDimensionsTheModelLeavesOpen) {
  ImportOptions options;
  options.data_shapes[""] = {5, 4};
  Graph g = import_onnx_model(dense_model({"batch", 4}).shared(), options);
  EXPECT_EQ(g.type(g.inputs()[0]), f32({5, 4}));
  EXPECT_TRUE(g.open_dims.empty());
  // The dimension is still one the model leaves dynamic.
  ASSERT_EQ(g.dynamic_dims.size(), 1u);
  EXPECT_EQ(g.dynamic_dims[0].param, "batch");
  // Data that contradicts a fixed dimension leaves the input as the model
  // declares it, here with its dimension still open.
  options.data_shapes[""] = {5, 7};
  g = import_onnx_model(dense_model({"batch", 4}).shared(), options);
  EXPECT_EQ(g.type(g.inputs()[0]), f32({kOpenDimSize, 4}));
  ASSERT_EQ(g.open_dims.size(), 1u);
  // input_shapes win over the data.
  options.input_shapes["x"] = {2, 4};
  options.data_shapes = {{"x", {5, 4}}};
  g = import_onnx_model(dense_model({"batch", 4}).shared(), options);
  EXPECT_EQ(g.type(g.inputs()[0]), f32({2, 4}));
  ASSERT_EQ(g.dynamic_dims.size(), 1u);
  EXPECT_EQ(g.dynamic_dims[0].axis, 0);
}

TEST(ImporterTest, AnOpenDynamicDimensionIsSetToOneAndRecorded) {
  Graph g = import_onnx_model(dense_model({"batch", 4}).shared());
  EXPECT_EQ(g.type(g.inputs()[0]), f32({kOpenDimSize, 4}));
  EXPECT_EQ(g.type(g.outputs()[0]), f32({kOpenDimSize, 3}));
  ASSERT_EQ(g.open_dims.size(), 1u);
  EXPECT_EQ(g.open_dims[0].input, "x");
  EXPECT_EQ(g.open_dims[0].axis, 0);
  EXPECT_EQ(g.open_dims[0].param, "batch");
  ASSERT_EQ(g.dynamic_dims.size(), 1u);
  EXPECT_EQ(g.dynamic_dims[0].param, "batch");
  // A dimension without a name is open too.
  g = import_onnx_model(dense_model({testing::Dim(-1), 4}).shared());
  ASSERT_EQ(g.open_dims.size(), 1u);
  EXPECT_EQ(g.open_dims[0].param, "");
}

// A U-Net's skip join with its height and width left open: the Concat's
// output has no shape ONNX can tell, so neither has the Conv after it, and
// ONNX 1.12's data propagation crashed on the Shape that reads that Conv.
ModelBuilder skip_join_model(std::vector<testing::Dim> input_dims) {
  auto weights = [](std::vector<std::int64_t> dims) {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;
    return Tensor::from_vector<float>(std::vector<float>(static_cast<std::size_t>(n), 0.1f), {n})
        .reshaped(Shape(dims));
  };
  ModelBuilder m(17);
  m.input("x", input_dims)
      .initializer("w1", weights({4, 3, 3, 3}))
      .initializer("wt", weights({4, 4, 2, 2}))
      .initializer("w2", weights({4, 8, 3, 3}))
      .initializer("pads", Tensor::from_vector<std::int64_t>({0, 0, 0, 0, 0, 0, 1, 1}, {8}))
      .initializer("rank3", Tensor::from_vector<std::int64_t>({0, 2, -1}, {3}))
      .node("Conv", {"x", "w1"}, {"a"},
            {attr("kernel_shape", std::vector<std::int64_t>{3, 3}),
             attr("pads", std::vector<std::int64_t>{1, 1, 1, 1})})
      .node("Pad", {"a", "pads"}, {"padded"})
      .node("AveragePool", {"padded"}, {"pooled"},
            {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
             attr("strides", std::vector<std::int64_t>{2, 2})})
      .node("ConvTranspose", {"pooled", "wt"}, {"up"},
            {attr("kernel_shape", std::vector<std::int64_t>{2, 2}),
             attr("strides", std::vector<std::int64_t>{2, 2})})
      .node("Concat", {"up", "a"}, {"joined"}, {attr("axis", std::int64_t{1})})
      .node("Conv", {"joined", "w2"}, {"b"},
            {attr("kernel_shape", std::vector<std::int64_t>{3, 3}),
             attr("pads", std::vector<std::int64_t>{1, 1, 1, 1})})
      .node("Shape", {"b"}, {"b_shape"})
      .node("Reshape", {"b", "rank3"}, {"grouped"})
      .node("Reshape", {"grouped", "b_shape"}, {"y"})
      .output("y");
  return m;
}

TEST(ImporterTest, AShapeOfAValueInferenceCannotShapeIsAnErrorNotACrash) {
  // Left open, the height and width are 1: the padded, pooled and
  // upsampled branch is 2 high, the skip 1, and the join is refused.
  const std::string error = error_of([] {
    import_onnx_model(skip_join_model({"batch", 3, "h", "w"}).shared());
  });
  EXPECT_TRUE(contains(error, "Concat")) << error;
  // Fixed to sizes that join, the model imports and every value is typed.
  ImportOptions options;
  options.input_shapes["x"] = {1, 3, 8, 8};
  Graph g = import_onnx_model(skip_join_model({"batch", 3, "h", "w"}).shared(), options);
  EXPECT_EQ(g.type(g.outputs()[0]), f32({1, 4, 8, 8}));
}

TEST(ImporterTest, AnInputShapeForANameThatIsNoInputIsRejected) {
  ImportOptions options;
  options.input_shapes["w"] = {4, 3};
  std::string message = error_of([&] {
    import_onnx_model(dense_model({"batch", 4}).shared(), options);
  });
  EXPECT_TRUE(contains(message, "'w' is not an input")) << message;
  EXPECT_TRUE(contains(message, "inputs: x")) << message;
}

TEST(ImporterTest, AnInputShapeOfTheWrongRankIsRejected) {
  ImportOptions options;
  options.input_shapes["x"] = {2, 4, 1};
  std::string message = error_of([&] { import_onnx_model(dense_model().shared(), options); });
  EXPECT_TRUE(contains(message, "input 'x'")) << message;
  EXPECT_TRUE(contains(message, "rank 3")) << message;
}

TEST(ImporterTest, AModelFileImportsFromDisk) {
  TempDir dir;
  dense_model().save(dir.file("dense.onnx"));
  Graph g = import_onnx(dir.file("dense.onnx"), unoptimized());
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.type(g.outputs()[0]), f32({2, 3}));
}

TEST(ImporterTest, TheDefaultLevelOptimizesTheGraphAndReportsTheRewrites) {
  CanonicalizeStats stats;
  ImportOptions options;
  options.canonicalize_stats = &stats;
  Graph g = import_onnx_model(dense_model().shared(), options);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(0).op_type, "Gemm");
  EXPECT_EQ(stats.count("MatMul + Add -> Gemm"), 1);
  EXPECT_EQ(stats.ops_before_optimization.at("MatMul"), 1);
}

TEST(ImporterTest, AMissingFileIsAnErrorNamingIt) {
  TempDir dir;
  std::string path = dir.file("absent.onnx");
  std::string message = error_of([&] { import_onnx(path); });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(ImporterTest, GarbageBytesAreAnErrorNamingTheFile) {
  TempDir dir;
  std::string path = dir.file("garbage.onnx");
  std::ofstream(path) << "this is not a protobuf, just some text\n";
  std::string message = error_of([&] { import_onnx(path); });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(ImporterTest, ATruncatedFileIsAnErrorNamingIt) {
  TempDir dir;
  std::string bytes = dense_model().model().SerializeAsString();
  std::string path = dir.file("truncated.onnx");
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() * 2 / 3);
  std::string message = error_of([&] { import_onnx(path); });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(ImporterTest, AnEmptyFileIsNotAModel) {
  TempDir dir;
  std::string path = dir.file("empty.onnx");
  std::ofstream{path};
  std::string message = error_of([&] { import_onnx(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "not an ONNX model")) << message;
}

TEST(ImporterTest, AModelLargerThan64MegabytesImports) {
  TempDir dir;
  const std::int64_t count = 17 * 1024 * 1024;  // 68 MB of float weights
  Tensor big = Tensor::zeros(f32({count}));
  big.data<float>()[count - 1] = 3.0f;
  ModelBuilder m;
  m.input("x", {count}).initializer("big", big).node("Add", {"x", "big"}, {"y"}).output("y");
  m.save(dir.file("big.onnx"));
  Graph g = import_onnx(dir.file("big.onnx"));
  const Tensor& loaded = *g.value(*g.find_value("big")).constant;
  EXPECT_EQ(loaded.numel(), count);
  EXPECT_EQ(loaded.data<float>()[count - 1], 3.0f);
}

TEST(ImporterTest, UnsupportedOperatorsAreListedWithCounts) {
  ModelBuilder m;
  m.input("x", {4})
      .node("Sin", {"x"}, {"a"})
      .node("Erf", {"a"}, {"b"})
      .node("Erf", {"b"}, {"c"})
      .node("Relu", {"c"}, {"y"})
      .output("y");
  ImportOptions options;
  options.is_supported = [](const Node& node) { return node.op_type == "Relu"; };
  std::string message = error_of([&] { import_onnx_model(m.shared(), options); });
  EXPECT_TRUE(contains(message, "unsupported operators: Erf (2), Sin (1)")) << message;
}

TEST(ImporterTest, OperatorsThatFoldAwayNeedNoSupport) {
  ModelBuilder m;
  m.input("x", {2, 3}).node("Shape", {"x"}, {"s"}).node("Reshape", {"x", "s"}, {"y"}).output("y");
  ImportOptions options;
  options.is_supported = [](const Node& node) { return node.op_type == "Reshape"; };
  Graph g = import_onnx_model(m.shared(), options);
  EXPECT_EQ(g.num_nodes(), 1u);
}

// An If on a value known only at run time keeps its branches as graphs.
// What they read from the main graph (x) becomes an explicit input of the
// node and of each branch, and the branches are typed from it.
TEST(ImporterTest, ARuntimeIfCapturesTheValuesItsBranchesRead) {
  onnx::GraphProto branch;
  branch.set_name("branch");
  auto* node = branch.add_node();
  node->set_op_type("Identity");
  node->add_input("x");
  node->add_output("out");
  branch.add_output()->set_name("out");
  onnx::AttributeProto then_branch;
  then_branch.set_name("then_branch");
  then_branch.set_type(onnx::AttributeProto::GRAPH);
  *then_branch.mutable_g() = branch;
  onnx::AttributeProto else_branch = then_branch;
  else_branch.set_name("else_branch");

  ModelBuilder m;
  m.input("cond", {}, onnx::TensorProto::BOOL)
      .input("x", {2})
      .node("If", {"cond"}, {"y"}, {then_branch, else_branch})
      .output("y");
  Graph graph = import_onnx_model(m.shared());
  ASSERT_EQ(graph.num_nodes(), 1u);
  const Node& runtime_if = graph.node(0);
  ASSERT_EQ(runtime_if.inputs.size(), 2u);
  EXPECT_EQ(graph.value(runtime_if.inputs[1]).name, "x");
  const Graph& then_graph = *runtime_if.attributes.get_graph("then_branch");
  EXPECT_EQ(then_graph.captured, 1);
  ASSERT_EQ(then_graph.inputs().size(), 1u);
  EXPECT_EQ(then_graph.type(then_graph.inputs()[0]).to_string(), "f32[2]");
  EXPECT_EQ(graph.type(runtime_if.outputs[0]).to_string(), "f32[2]");
}

// Ops other than If, Loop and Scan that hold graphs stay unsupported.
TEST(ImporterTest, OtherOpsWithGraphsAreUnsupported) {
  onnx::AttributeProto body;
  body.set_name("body");
  body.set_type(onnx::AttributeProto::GRAPH);
  body.mutable_g()->set_name("body");
  ModelBuilder m;
  m.input("x", {2}).node("SequenceMap", {"x"}, {"y"}, {body}).output("y");
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "unsupported operators: SequenceMap (1)")) << message;
}

// A branch graph: `op` over the outer value `input`, its result named `out`.
onnx::AttributeProto branch_attribute(const std::string& name, const std::string& op,
                                      const std::string& input, const std::string& out) {
  onnx::AttributeProto attribute;
  attribute.set_name(name);
  attribute.set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& branch = *attribute.mutable_g();
  branch.set_name(name);
  auto* node = branch.add_node();
  node->set_op_type(op);
  node->set_name(op);
  node->add_input(input);
  node->add_output(out);
  branch.add_output()->set_name(out);
  return attribute;
}

Tensor bool_scalar(bool value) {
  Tensor t = Tensor::zeros(TensorType{DType::kBool, {}});
  static_cast<std::uint8_t*>(t.raw())[0] = value ? 1 : 0;
  return t;
}

std::vector<std::string> op_types(const Graph& graph) {
  std::vector<std::string> ops;
  for (const Node& node : graph.nodes()) ops.push_back(node.op_type);
  return ops;
}

// An If whose condition is a weight or a Constant is its taken branch: the
// branch's nodes in its place, its outputs under the If's names.
TEST(ImporterTest, AnIfWithAConstantConditionBecomesItsTakenBranch) {
  for (bool flag : {true, false}) {
    ModelBuilder m;
    m.input("x", {2})
        .initializer("cond", bool_scalar(flag))
        .node("If", {"cond"}, {"y"},
              {branch_attribute("then_branch", "Relu", "x", "then_out"),
               branch_attribute("else_branch", "Neg", "x", "else_out")})
        .node("Abs", {"y"}, {"z"})
        .output("z");
    Graph graph = import_onnx_model(m.shared(), unoptimized());
    EXPECT_EQ(op_types(graph), (std::vector<std::string>{flag ? "Relu" : "Neg", "Abs"}));
    EXPECT_TRUE(graph.find_value("y").has_value());
  }
  // From a Constant node, with the else branch handing out the outer value.
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = tensor_to_proto(bool_scalar(false), "");
  onnx::AttributeProto pass_through = branch_attribute("else_branch", "Relu", "x", "unused");
  pass_through.mutable_g()->clear_node();
  pass_through.mutable_g()->mutable_output(0)->set_name("x");
  ModelBuilder m;
  m.input("x", {2})
      .node("Constant", {}, {"cond"}, {value})
      .node("If", {"cond"}, {"y"},
            {branch_attribute("then_branch", "Relu", "x", "then_out"), pass_through})
      .node("Abs", {"y"}, {"z"})
      .output("z");
  Graph graph = import_onnx_model(m.shared(), unoptimized());
  // The Identity that hands x on is dropped like any other.
  ASSERT_EQ(op_types(graph), (std::vector<std::string>{"Abs"}));
  EXPECT_EQ(graph.value(graph.node(0).inputs[0]).name, "x");
}

TEST(ImporterTest, NestedConstantIfsAreInlinedInTurn) {
  onnx::AttributeProto outer_then = branch_attribute("then_branch", "Relu", "x", "unused");
  onnx::GraphProto& body = *outer_then.mutable_g();
  body.clear_node();
  body.mutable_output(0)->set_name("inner_y");
  *body.add_initializer() = tensor_to_proto(bool_scalar(true), "inner_cond");
  auto* inner = body.add_node();
  inner->set_op_type("If");
  inner->set_name("inner");
  inner->add_input("inner_cond");
  inner->add_output("inner_y");
  *inner->add_attribute() = branch_attribute("then_branch", "Sigmoid", "x", "s");
  *inner->add_attribute() = branch_attribute("else_branch", "Neg", "x", "n");
  ModelBuilder m;
  m.input("x", {2})
      .initializer("cond", bool_scalar(true))
      .node("If", {"cond"}, {"y"}, {outer_then, branch_attribute("else_branch", "Neg", "x", "n2")})
      .output("y");
  Graph graph = import_onnx_model(m.shared(), unoptimized());
  EXPECT_EQ(op_types(graph), (std::vector<std::string>{"Sigmoid"}));
}

TEST(ImporterTest, ABranchWithTheWrongNumberOfOutputsIsAnErrorNamingTheIf) {
  onnx::AttributeProto two = branch_attribute("then_branch", "Relu", "x", "a");
  two.mutable_g()->add_output()->set_name("x");
  ModelBuilder m;
  m.input("x", {2})
      .initializer("cond", bool_scalar(true))
      .node("If", {"cond"}, {"y"}, {two, branch_attribute("else_branch", "Neg", "x", "n")})
      .output("y");
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "2 outputs where the If has 1")) << message;
}

TEST(ImporterTest, AnOpsetOutsideTheSupportedRangeIsRejected) {
  for (std::int64_t opset : {0, 22}) {
    ModelBuilder m(opset);
    m.input("x", {2}).node("Relu", {"x"}, {"y"}).output("y");
    std::string message = error_of([&] { import_onnx_model(m.shared()); });
    EXPECT_TRUE(contains(message, "opset " + std::to_string(opset))) << message;
  }
}

// A model whose initializer "w" (f32[3]) lives in external data at `location`.
ModelBuilder external_data_model(const std::string& location) {
  ModelBuilder m;
  m.input("x", {3}).node("Add", {"x", "w"}, {"y"}).output("y");
  onnx::TensorProto* w = m.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* entry = w->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  return m;
}

TEST(ImporterTest, ExternalDataIsLoadedFromTheModelsDirectory) {
  TempDir dir;
  const float weights[] = {1.0f, 2.0f, 3.0f};
  std::ofstream(dir.file("model.weights"), std::ios::binary)
      .write(reinterpret_cast<const char*>(weights), sizeof(weights));
  external_data_model("model.weights").save(dir.file("model.onnx"));
  Graph g = import_onnx(dir.file("model.onnx"));
  const Tensor& loaded = *g.value(*g.find_value("w")).constant;
  EXPECT_EQ(loaded.data<float>()[2], 3.0f);
}

TEST(ImporterTest, AMissingExternalDataFileNamesTheFileAndTheTensor) {
  TempDir dir;
  external_data_model("gone.weights").save(dir.file("model.onnx"));
  std::string message = error_of([&] { import_onnx(dir.file("model.onnx")); });
  EXPECT_TRUE(contains(message, "gone.weights")) << message;
  EXPECT_TRUE(contains(message, "tensor 'w'")) << message;
  EXPECT_TRUE(contains(message, dir.file("model.onnx"))) << message;
}

// A location without ".." can still leave the model's directory through a
// symlink; it used to be followed (to /etc/passwd, or a file beside the
// model's directory).
TEST(ImporterTest, ExternalDataThroughASymlinkOutOfTheModelsDirectoryIsRefused) {
  TempDir outer;
  std::filesystem::create_directories(outer.path() / "model");
  const float secret[] = {7.0f, 8.0f, 9.0f};
  std::ofstream(outer.file("secret.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(secret), sizeof(secret));
  std::filesystem::create_symlink("../secret.bin", outer.path() / "model" / "w.bin");
  std::filesystem::create_symlink("/etc/passwd", outer.path() / "model" / "passwd.bin");
  for (const char* location : {"w.bin", "passwd.bin"}) {
    std::string model = (outer.path() / "model" / "model.onnx").string();
    external_data_model(location).save(model);
    std::string message = error_of([&] { import_onnx(model); });
    EXPECT_TRUE(contains(message, "outside the model's directory")) << message;
    EXPECT_TRUE(contains(message, "tensor 'w'")) << message;
  }
}

TEST(ImporterTest, ExternalDataThroughASymlinkInsideTheModelsDirectoryLoads) {
  TempDir dir;
  const float weights[] = {1.0f, 2.0f, 3.0f};
  std::filesystem::create_directories(dir.path() / "data");
  std::ofstream(dir.file("data/w.bin"), std::ios::binary)
      .write(reinterpret_cast<const char*>(weights), sizeof(weights));
  std::filesystem::create_symlink("data/w.bin", dir.path() / "w.bin");
  external_data_model("w.bin").save(dir.file("model.onnx"));
  Graph g = import_onnx(dir.file("model.onnx"));
  EXPECT_EQ(g.value(*g.find_value("w")).constant->data<float>()[1], 2.0f);
}

TEST(ImporterTest, AbsoluteOrParentExternalDataLocationsAreRefused) {
  TempDir dir;
  for (const char* location : {"/etc/passwd", "../w.bin", "sub/../../w.bin"}) {
    external_data_model(location).save(dir.file("model.onnx"));
    std::string message = error_of([&] { import_onnx(dir.file("model.onnx")); });
    EXPECT_TRUE(contains(message, "must be a relative path inside")) << message;
  }
}

// An initializer whose dimensions multiply past int64 (2^62 x 4).
TEST(ImporterTest, AnInitializerWhoseSizeOverflowsIsAnErrorNamingIt) {
  ModelBuilder m;
  m.input("x", {4}).node("Add", {"x", "w"}, {"y"}).output("y");
  onnx::TensorProto* w = m.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(std::int64_t{1} << 62);
  w->add_dims(4);
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "tensor 'w'")) << message;
  EXPECT_TRUE(contains(message, "overflows")) << message;
}

// Names from the model are quoted, escaped and cut: one line, bounded.
TEST(ImporterTest, ANodeNameWithControlCharactersIsEscapedInErrors) {
  ModelBuilder m;
  m.input("x", {2}).node("Relu", {"nothing"}, {"y"}).output("y");
  m.graph().mutable_node(0)->set_name("evil\n\x1b[31mname" + std::string(1000, 'a'));
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_TRUE(contains(message, "evil\\n\\x1b[31mname")) << message;
  EXPECT_LT(message.size(), 400u) << message;
}

TEST(ImporterTest, AValueShapeInferenceCannotTypeIsNamedWithItsProducer) {
  ModelBuilder m;
  m.input("x", {2})
      .node("Mystery", {"x"}, {"m"}, {}, "com.example")
      .node("Relu", {"m"}, {"y"})
      .output("y");
  m.model().add_opset_import()->set_domain("com.example");
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "'m'")) << message;
  EXPECT_TRUE(contains(message, "com.example.Mystery")) << message;
}

TEST(ImporterTest, TypesTheModelDeclaresCoverWhatInferenceCannot) {
  ModelBuilder m;
  m.input("x", {2})
      .node("Mystery", {"x"}, {"m"}, {}, "com.example")
      .node("Relu", {"m"}, {"y"})
      .value_info("m", {2})
      .output("y", {2});
  m.model().add_opset_import()->set_domain("com.example");
  Graph g = import_onnx_model(m.shared());
  EXPECT_EQ(g.type(*g.find_value("m")), f32({2}));
  EXPECT_EQ(g.node(0).domain, "com.example");
  EXPECT_EQ(g.other_opsets.count("com.example"), 1u);
}

TEST(ImporterTest, AnUnsupportedElementTypeOfAnInputIsNamed) {
  ModelBuilder m;
  m.input("x", {2}, onnx::TensorProto::UINT32).node("Identity", {"x"}, {"y"}).output("y");
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "input 'x'")) << message;
  EXPECT_TRUE(contains(message, "UINT32")) << message;
}

TEST(ImporterTest, AReadOfAnUndefinedValueNamesTheNode) {
  ModelBuilder m;
  m.input("x", {2}).node("Add", {"x", "nowhere"}, {"y"}).output("y");
  m.graph().mutable_node(0)->set_name("adder");
  std::string message = error_of([&] { import_onnx_model(m.shared()); });
  EXPECT_TRUE(contains(message, "adder")) << message;
  EXPECT_TRUE(contains(message, "nowhere")) << message;
}

TEST(ImporterTest, EmptyAndDuplicateNodeNamesAreMadeUnique) {
  ModelBuilder m;
  m.input("x", {2})
      .node("Relu", {"x"}, {"a"})
      .node("Neg", {"a"}, {"b"})
      .node("Abs", {"b"}, {"y"})
      .output("y");
  m.graph().mutable_node(1)->set_name("same");
  m.graph().mutable_node(2)->set_name("same");
  Graph g = import_onnx_model(m.shared());
  std::set<std::string> names;
  for (const Node& node : g.nodes()) names.insert(node.name);
  EXPECT_EQ(names.size(), 3u);
  EXPECT_FALSE(names.count(""));
}

TEST(ImporterTest, CanonicalizationRemovesIdentitiesAndKeepsOutputNames) {
  ModelBuilder m;
  m.input("x", {2})
      .node("Identity", {"x"}, {"a"})
      .node("Relu", {"a"}, {"r"})
      .node("Identity", {"r"}, {"y"})
      .output("y");
  Graph g = import_onnx_model(m.shared());
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Relu");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(ImporterTest, WithoutCanonicalizationTheGraphIsAsWritten) {
  ModelBuilder m;
  m.input("x", {2}).node("Identity", {"x"}, {"a"}).node("Relu", {"a"}, {"y"}).output("y");
  ImportOptions options;
  options.canonicalize = false;
  Graph g = import_onnx_model(m.shared(), options);
  EXPECT_EQ(g.num_nodes(), 2u);
}

// x.view(x.size(0), -1) as PyTorch exports it, with Constant nodes.
ModelBuilder flatten_model() {
  ModelBuilder m;
  m.input("x", {"batch", 3, 4, 5})
      .node("Shape", {"x"}, {"shape"})
      .node("Constant", {}, {"zero"}, {attr("value", Tensor::from_vector<std::int64_t>({0}, {}))})
      .node("Gather", {"shape", "zero"}, {"batch"}, {attr("axis", std::int64_t{0})})
      .node("Constant", {}, {"axes"}, {attr("value", Tensor::from_vector<std::int64_t>({0}, {1}))})
      .node("Unsqueeze", {"batch", "axes"}, {"batch1"})
      .node("Constant", {}, {"rest"}, {attr("value", Tensor::from_vector<std::int64_t>({-1}, {1}))})
      .node("Concat", {"batch1", "rest"}, {"target"}, {attr("axis", std::int64_t{0})})
      .node("Reshape", {"x", "target"}, {"y"})
      .output("y");
  return m;
}

TEST(ImporterTest, AShapeChainFoldsToAPlainReshapeWithAConstantShape) {
  ShapeOpsEvaluator evaluator;
  ImportOptions options;
  options.evaluator = &evaluator;
  options.input_shapes["x"] = {2, 3, 4, 5};
  Graph g = import_onnx_model(flatten_model().shared(), options);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& reshape = g.node(0);
  EXPECT_EQ(reshape.op_type, "Reshape");
  const Value& target = g.value(reshape.inputs[1]);
  ASSERT_TRUE(target.is_constant());
  EXPECT_EQ(target.constant->int_at(0), 2);
  EXPECT_EQ(target.constant->int_at(1), -1);
  EXPECT_EQ(g.type(g.outputs()[0]), f32({2, 60}));
  // The Gather of the first dimension folds from the type, without it.
  EXPECT_EQ(evaluator.evaluations, 2);
}

TEST(ImporterTest, TheNativeEvaluatorFoldsAShapeChainToAPlainReshape) {
  ImportOptions options;
  options.evaluator = &native_evaluator();
  options.input_shapes["x"] = {2, 3, 4, 5};
  Graph g = import_onnx_model(flatten_model().shared(), options);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op_type, "Reshape");
  const Value& target = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(target.is_constant());
  EXPECT_EQ(target.constant->int_at(0), 2);
  EXPECT_EQ(g.type(g.outputs()[0]), f32({2, 60}));
}

TEST(ImporterTest, TheNativeEvaluatorFoldsATransposedWeight) {
  ModelBuilder m;
  m.input("x", {2, 3})
      .initializer("w", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {6}).reshaped({2, 3}))
      .node("Transpose", {"w"}, {"wt"}, {attr("perm", std::vector<std::int64_t>{1, 0})})
      .node("MatMul", {"x", "wt"}, {"y"})
      .output("y");
  ImportOptions options;
  options.evaluator = &native_evaluator();
  Graph g = import_onnx_model(m.shared(), options);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& wt = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(wt.is_constant());
  EXPECT_EQ(wt.type, f32({3, 2}));
  // wt[0][1] = w[1][0]
  EXPECT_EQ(wt.constant->data<float>()[1], 4.0f);
}

TEST(ImporterTest, FoldingMakesShapesKnownThatInferenceAloneCannot) {
  // The Reshape's target comes out of a Mul, which ONNX 1.12's data
  // propagation does not follow for this pattern; folding it makes the
  // Reshape's output shape known in the next round of inference.
  ModelBuilder m;
  m.input("x", {2, 6})
      .initializer("half", Tensor::from_vector<std::int64_t>({1, 3}, {2}))
      .initializer("two", Tensor::from_vector<std::int64_t>({2}, {1}))
      .node("Mul", {"half", "two"}, {"target"})
      .node("Reshape", {"x", "target"}, {"y"})
      .output("y");
  ShapeOpsEvaluator evaluator;
  ImportOptions options;
  options.evaluator = &evaluator;
  Graph g = import_onnx_model(m.shared(), options);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.type(g.outputs()[0]), f32({2, 6}));
}

TEST(ParseInputShapeTest, ReadsANameAndItsDimensions) {
  auto [name, shape] = parse_input_shape("input:0=1,3,224,224");
  EXPECT_EQ(name, "input:0");
  EXPECT_EQ(shape, (Shape{1, 3, 224, 224}));
}

TEST(ParseInputShapeTest, AnEmptyDimensionListIsAScalar) {
  auto [name, shape] = parse_input_shape("scale=");
  EXPECT_EQ(name, "scale");
  EXPECT_TRUE(shape.empty());
}

TEST(ParseInputShapeTest, MalformedTextIsRejected) {
  for (const char* text : {"x", "=1,2", "x=1,,2", "x=1,", "x=a", "x=-1", "x=1.5"}) {
    EXPECT_THROW(parse_input_shape(text), Error) << text;
  }
}

}  // namespace
}  // namespace collage
