#include "collage/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "api/api_models.h"
#include "collage/collage.h"

namespace collage {
namespace {

using api_testing::conv_model_bytes;
using api_testing::ScratchDir;

std::vector<float> input_values(float seed) {
  std::vector<float> values(1 * 8 * 12 * 12);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = std::cos(seed + 0.05f * static_cast<float>(i));
  }
  return values;
}

float max_abs_difference(const Array& a, const Array& b) {
  EXPECT_EQ(a.dims(), b.dims());
  float worst = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a.data_as<float>()[i] - b.data_as<float>()[i]));
  }
  return worst;
}

class SessionTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
  std::string model_ = dir_.write("conv.onnx", conv_model_bytes());
};

TEST_F(SessionTest, DescribesTheModelsInputsAndOutputs) {
  Session session(model_, {.threads = 1});
  ASSERT_EQ(session.inputs().size(), 1u);
  EXPECT_EQ(session.inputs()[0].name, "x");
  EXPECT_EQ(session.inputs()[0].type, ElementType::kFloat32);
  EXPECT_EQ(session.inputs()[0].dims, (std::vector<std::int64_t>{1, 8, 12, 12}));
  ASSERT_EQ(session.outputs().size(), 2u);
  EXPECT_EQ(session.outputs()[0].name, "y");
  EXPECT_EQ(session.outputs()[1].name, "z");
  EXPECT_EQ(session.strategy(), "native");
  EXPECT_EQ(session.threads(), 1);
}

TEST_F(SessionTest, EveryBackendGivesTheNativeOutputs) {
  std::vector<float> x = input_values(0.3f);
  std::map<std::string, Array> inputs = {{"x", Array::view(x.data(), {1, 8, 12, 12})}};
  std::map<std::string, Array> reference = Session(model_, {.threads = 1}).run(inputs);
  for (const BackendInfo& backend : backends()) {
    if (backend.name == "native") continue;
    Session session(model_, {.strategy = "single:" + backend.name, .threads = 1});
    std::map<std::string, Array> outputs = session.run(inputs);
    EXPECT_LT(max_abs_difference(outputs.at("y"), reference.at("y")), 1e-4) << backend.name;
    EXPECT_LT(max_abs_difference(outputs.at("z"), reference.at("z")), 1e-4) << backend.name;
  }
}

TEST_F(SessionTest, WritesOutputsIntoTheCallersBuffers) {
  Session session(model_, {.threads = 1});
  std::vector<float> x = input_values(0.7f);
  std::map<std::string, Array> inputs = {{"x", Array::view(x.data(), {1, 8, 12, 12})}};
  std::map<std::string, Array> expected = session.run(inputs);

  std::vector<float> z(16 * 12 * 12, -1.0f);
  std::map<std::string, Array> outputs = {{"z", Array::view(z.data(), {1, 16, 12, 12})}};
  session.run(inputs, outputs);
  EXPECT_EQ(outputs.at("z").data(), z.data());
  EXPECT_EQ(max_abs_difference(outputs.at("z"), expected.at("z")), 0.0f);
  // The output not given comes back in a buffer of its own.
  ASSERT_EQ(outputs.count("y"), 1u);
  EXPECT_EQ(max_abs_difference(outputs.at("y"), expected.at("y")), 0.0f);
}

TEST_F(SessionTest, ACallerBufferOfTheWrongShapeIsAnErrorNamingTheOutput) {
  Session session(model_, {.threads = 1});
  std::vector<float> x = input_values(0.1f);
  std::vector<float> z(10);
  std::map<std::string, Array> outputs = {{"z", Array::view(z.data(), {10})}};
  try {
    session.run({{"x", Array::view(x.data(), {1, 8, 12, 12})}}, outputs);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("output 'z'"), std::string::npos) << e.what();
  }
}

TEST_F(SessionTest, AMistypedInputIsAnErrorNamingTheInput) {
  Session session(model_, {.threads = 1});
  std::vector<double> x(1 * 8 * 12 * 12);
  try {
    session.run({{"x", Array::view(x.data(), {1, 8, 12, 12})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f32[1,8,12,12]"), std::string::npos) << e.what();
  }
}

// The conv model with its batch dimension left open ("batch").
std::string dynamic_batch_bytes() {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(conv_model_bytes()));
  model.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  for (onnx::ValueInfoProto& output : *model.mutable_graph()->mutable_output()) {
    output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(
        "batch");
  }
  return model.SerializeAsString();
}

TEST_F(SessionTest, AnOpenDimensionIsSetToOneWithAWarningAndOtherSizesCompileOnFirstUse) {
  const std::string bytes = dynamic_batch_bytes();
  Session session = Session::from_bytes(bytes, {.threads = 1});
  ASSERT_EQ(session.warnings().size(), 1u);
  EXPECT_NE(session.warnings()[0].find("'x' dimension 0 ('batch')"), std::string::npos)
      << session.warnings()[0];
  EXPECT_EQ(session.inputs()[0].dims, (std::vector<std::int64_t>{1, 8, 12, 12}));
  EXPECT_EQ(session.inputs()[0].open_dims, (std::vector<std::string>{"batch", "", "", ""}));
  // Another batch size is compiled for on its first run, with a warning.
  std::vector<float> two(2 * 8 * 12 * 12, 0.5f);
  EXPECT_EQ(session.run({{"x", Array::view(two.data(), {2, 8, 12, 12})}}).at("z").dims(),
            (std::vector<std::int64_t>{2, 16, 12, 12}));
  ASSERT_EQ(session.warnings().size(), 2u);
  EXPECT_NE(session.warnings()[1].find("no plan for x=[2,8,12,12]"), std::string::npos)
      << session.warnings()[1];
  // A size where the model fixes the dimension is refused.
  std::vector<float> wide(8 * 12 * 13, 0.5f);
  try {
    session.run({{"x", Array::view(wide.data(), {1, 8, 12, 13})}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  Session sized =
      Session::from_bytes(bytes, {.threads = 1, .input_shapes = {{"x", {2, 8, 12, 12}}}});
  EXPECT_TRUE(sized.warnings().empty());
  EXPECT_EQ(sized.run({{"x", Array::view(two.data(), {2, 8, 12, 12})}}).at("z").dims(),
            (std::vector<std::int64_t>{2, 16, 12, 12}));
}

TEST_F(SessionTest, APlanSetRunsEachShapeUnderItsPlanAndAnotherThroughTheClosest) {
  const std::string path = dir_.write("dynamic.onnx", dynamic_batch_bytes());
  auto plan_at = [&](std::int64_t batch) {
    return Session(path, {.strategy = "single:onednn",
                          .threads = 1,
                          .input_shapes = {{"x", {batch, 8, 12, 12}}}})
        .plan_json();
  };
  const std::string set = R"({"format": "collage-plan-set", "version": 1, "plans": [)" +
                          plan_at(1) + "," + plan_at(4) + "]}";
  Session session(path, {.plan_json = set});
  EXPECT_TRUE(session.warnings().empty());
  EXPECT_EQ(session.inputs()[0].dims, (std::vector<std::int64_t>{1, 8, 12, 12}));
  Session native(path, {.threads = 1, .input_shapes = {{"x", {4, 8, 12, 12}}}});
  std::vector<float> x(4 * 8 * 12 * 12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01f * static_cast<float>(i));
  Array four = Array::view(x.data(), {4, 8, 12, 12});
  const Array expected = native.run({{"x", four}}).at("z");
  for (std::int64_t batch : {1, 4}) {
    Array input = Array::view(x.data(), {batch, 8, 12, 12});
    EXPECT_EQ(session.run({{"x", input}}).at("z").dims()[0], batch);
  }
  EXPECT_LT(max_abs_difference(session.run({{"x", four}}).at("z"), expected), 1e-4f);
  EXPECT_TRUE(session.warnings().empty()) << session.warnings()[0];
  // Batch 3 has no plan: the plan for 4, the closest, is compiled for it.
  Array three = Array::view(x.data(), {3, 8, 12, 12});
  EXPECT_EQ(session.run({{"x", three}}).at("z").dims()[0], 3);
  ASSERT_EQ(session.warnings().size(), 1u);
  EXPECT_NE(session.warnings()[0].find("ran the plan for x=[4,8,12,12] compiled for "
                                       "x=[3,8,12,12]"),
            std::string::npos)
      << session.warnings()[0];
  EXPECT_EQ(session.strategy(), "single:onednn");
}

TEST_F(SessionTest, AMissingModelIsAnErrorNamingTheFile) {
  try {
    Session session(dir_.file("missing.onnx"));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.onnx"), std::string::npos) << e.what();
  }
}

TEST_F(SessionTest, RunsAModelGivenAsBytes) {
  std::vector<float> x = input_values(0.2f);
  std::map<std::string, Array> inputs = {{"x", Array::view(x.data(), {1, 8, 12, 12})}};
  Session from_file(model_, {.threads = 1});
  Session from_bytes = Session::from_bytes(conv_model_bytes(), {.threads = 1});
  EXPECT_EQ(max_abs_difference(from_bytes.run(inputs).at("z"), from_file.run(inputs).at("z")),
            0.0f);
  EXPECT_THROW(Session::from_bytes("not a model"), Error);
}

TEST_F(SessionTest, ConcurrentRunsOnOneSessionGiveTheOutputsOfSequentialRuns) {
  Session session(model_, {.strategy = "greedy:onednn,xnnpack", .threads = 2});
  constexpr int kThreads = 4;
  constexpr int kRuns = 25;
  std::vector<std::vector<float>> xs;
  std::vector<Array> expected;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(input_values(static_cast<float>(t)));
    expected.push_back(session.run({{"x", Array::view(xs.back().data(), {1, 8, 12, 12})}}).at("z"));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        Array z = session.run({{"x", Array::view(xs[t].data(), {1, 8, 12, 12})}}).at("z");
        if (max_abs_difference(z, expected[t]) != 0.0f) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
}

TEST_F(SessionTest, ReplaysItsOwnPlan) {
  Session greedy(model_, {.strategy = "greedy:onednn,xnnpack", .threads = 1});
  Session replay(model_, {.plan_json = greedy.plan_json()});
  EXPECT_EQ(replay.strategy(), greedy.strategy());
  EXPECT_EQ(replay.partitions(), greedy.partitions());
  EXPECT_EQ(replay.threads(), 1);
  EXPECT_THROW(Session(model_, {.plan_file = "a.json", .plan_json = "{}"}), Error);
  EXPECT_THROW(Session(model_, {.plan_json = "not json"}), Error);
}

TEST_F(SessionTest, ArraysRoundTripThroughNpyFiles) {
  Array a = Array::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  save_npy(dir_.file("a.npy"), a);
  Array b = load_npy(dir_.file("a.npy"));
  EXPECT_EQ(b.to_string(), "float32[2,3]");
  EXPECT_EQ(max_abs_difference(a, b), 0.0f);
  EXPECT_THROW(b.data_as<std::int64_t>(), Error);
  EXPECT_THROW(load_npy(dir_.file("none.npy")), Error);
  EXPECT_THROW((Array::from_vector<float>({1, 2}, {3})), Error);
}

}  // namespace
}  // namespace collage
