#include "collage/plan/plan_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "collage/ir/error.h"
#include "plan/sample_plan.h"

namespace collage {
namespace {

using testing::sample_plan;

TEST(PlanJsonTest, APlanSurvivesTheRoundTrip) {
  Plan original = sample_plan();
  Plan copy = plan_from_json(plan_to_json(original));
  EXPECT_EQ(copy.strategy, "collage");
  EXPECT_EQ(copy.model_hash, "abc123");
  EXPECT_EQ(copy.input_shapes.at("input"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(copy.threads, 2);
  EXPECT_EQ(copy.backend_versions.at("onednn"), "oneDNN 2.6.3");
  ASSERT_EQ(copy.partitions.size(), 2u);
  EXPECT_EQ(copy.partitions[0].nodes, (std::vector<std::string>{"Conv_0", "Relu_1"}));
  EXPECT_EQ(copy.partitions[0].rule, "conv_bias_relu");
  EXPECT_DOUBLE_EQ(*copy.partitions[0].estimated_ms, 1.25);
  EXPECT_FALSE(copy.partitions[0].measured_ms.has_value());
  ASSERT_EQ(copy.partitions[0].alternatives.size(), 2u);
  EXPECT_FALSE(copy.partitions[0].alternatives[1].estimated_ms.has_value());
  EXPECT_EQ(copy.partitions[0].alternatives[1].reason, "compile failed");
  EXPECT_EQ(copy.search.cache_hits, 10);
  EXPECT_DOUBLE_EQ(copy.search.seconds, 12.5);
  EXPECT_EQ(copy.search.routes_dropped, 7);
  EXPECT_TRUE(copy.compute_layouts.empty());
  original.compute_layouts["onednn"] = "blocked-16";
  EXPECT_EQ(plan_from_json(plan_to_json(original)).compute_layouts, original.compute_layouts);
  // The layout a search among several measured in, and the label it gives.
  EXPECT_EQ(copy.search.layout, "");
  EXPECT_EQ(copy.label(), "collage");
  original.search.layout = "blocked-16";
  const Plan searched_in = plan_from_json(plan_to_json(original));
  EXPECT_EQ(searched_in.search.layout, "blocked-16");
  EXPECT_EQ(searched_in.label(), "collage@blocked-16 [onednn:blocked-16]");
}

TEST(PlanJsonTest, TheJsonHasTheDocumentedTopLevelFields) {
  nlohmann::json json = plan_to_json(sample_plan());
  for (const char* key : {"format", "version", "strategy", "model", "machine", "threads",
                          "backends", "partitions", "search", "estimated_ms"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
  EXPECT_EQ(json["partitions"][0]["backend"], "onednn");
  EXPECT_EQ(json["search"]["measured"], 30);
}

TEST(PlanJsonTest, AMissingFieldIsAnErrorNamingIt) {
  nlohmann::json json = plan_to_json(sample_plan());
  json["partitions"][1].erase("backend");
  try {
    plan_from_json(json, "p.json");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, "p.json");
    EXPECT_EQ(e.where().field, "partitions[1].backend");
  }
}

TEST(PlanJsonTest, AnotherFormatVersionIsRejected) {
  nlohmann::json json = plan_to_json(sample_plan());
  json["version"] = 99;
  EXPECT_THROW(plan_from_json(json), Error);
}

// A file of this process in the temporary directory, removed when the test ends.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             (name + "_" + std::to_string(::getpid()) + ".json")) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

TEST(PlanJsonTest, LoadingAFileThatIsNotJsonIsAnError) {
  const TempFile file("collage_plan_garbage");
  const auto& path = file.path;
  std::ofstream(path) << "{ not json";
  EXPECT_THROW(load_plan(path.string()), Error);
  EXPECT_THROW(load_plan("/nonexistent/plan.json"), Error);
}

TEST(PlanJsonTest, AnOnnxModelGivenAsAPlanIsNamedAsSuch) {
  const TempFile file("collage_plan_model.onnx");
  // A model's first bytes: field 1 (ir_version), varint 8.
  std::ofstream(file.path, std::ios::binary) << std::string("\x08\x08\x12\x07pytorch", 11);
  try {
    load_plan(file.path.string());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("looks like an ONNX model, not a plan"), std::string::npos)
        << e.what();
  }
}

// sample_plan() with the body plans `depth` deep: each plan's body 0 of
// node "loop" is planned.
Plan plan_with_bodies(int depth) {
  Plan plan = sample_plan();
  Plan* at = &plan;
  for (int level = 0; level < depth; ++level) {
    Plan inner = sample_plan();
    inner.model_hash = "body" + std::to_string(level);
    at->bodies.push_back(PlanBody{"loop", 0, "body", inner});
    at = &at->bodies.back().plan;
  }
  return plan;
}

TEST(PlanJsonTest, BodyPlansSurviveTheRoundTripNested) {
  Plan original = plan_with_bodies(2);
  original.bodies.push_back(PlanBody{"choice", 1, "else_branch", sample_plan()});
  original.bodies.back().plan.partitions[0].backend = "xnnpack";
  Plan copy = plan_from_json(plan_to_json(original));
  ASSERT_EQ(copy.bodies.size(), 2u);
  EXPECT_EQ(copy.bodies[0].node, "loop");
  EXPECT_EQ(copy.bodies[0].index, 0u);
  EXPECT_EQ(copy.bodies[0].name, "body");
  EXPECT_EQ(copy.bodies[0].plan.model_hash, "body0");
  ASSERT_EQ(copy.bodies[0].plan.bodies.size(), 1u);
  EXPECT_EQ(copy.bodies[0].plan.bodies[0].plan.model_hash, "body1");
  EXPECT_EQ(copy.bodies[1].index, 1u);
  EXPECT_EQ(copy.bodies[1].plan.partitions[0].backend, "xnnpack");
  EXPECT_EQ(copy.partitions_signature(), original.partitions_signature());
  // A plan without bodies writes no "bodies" field.
  EXPECT_FALSE(plan_to_json(sample_plan()).contains("bodies"));
}

TEST(PlanJsonTest, BodiesNestedTooDeepOrPlannedTwiceAreErrorsNamingTheField) {
  EXPECT_NO_THROW(plan_from_json(plan_to_json(plan_with_bodies(16))));
  try {
    plan_from_json(plan_to_json(plan_with_bodies(17)), "deep.json");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nest deeper than 16"), std::string::npos) << e.what();
  }
  Plan twice = plan_with_bodies(1);
  twice.bodies.push_back(twice.bodies[0]);
  try {
    plan_from_json(plan_to_json(twice), "twice.json");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bodies[1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("again"), std::string::npos) << e.what();
  }
  nlohmann::json missing = plan_to_json(plan_with_bodies(1));
  missing["bodies"][0].erase("plan");
  EXPECT_THROW(plan_from_json(missing), Error);
}

TEST(PlanJsonTest, SaveThenLoadGivesThePlanBack) {
  const TempFile file("collage_plan_roundtrip");
  const auto& path = file.path;
  save_plan(sample_plan(), path.string());
  Plan loaded = load_plan(path.string());
  EXPECT_EQ(loaded.partitions.size(), 2u);
  EXPECT_EQ(loaded.partitions_per_backend().at("native"), 1);
}

// Two plans of one model, for batch 1 and batch 4.
std::vector<Plan> two_shape_plans() {
  std::vector<Plan> plans{sample_plan(), sample_plan()};
  plans[1].input_shapes["input"] = {4, 3, 224, 224};
  plans[1].partitions.pop_back();
  return plans;
}

TEST(PlanJsonTest, APlanSetSurvivesTheRoundTripInOrder) {
  nlohmann::json json = plans_to_json(two_shape_plans());
  EXPECT_EQ(json["format"], "collage-plan-set");
  std::vector<Plan> copy = plans_from_json(json, "set.json");
  ASSERT_EQ(copy.size(), 2u);
  EXPECT_EQ(copy[0].input_shapes.at("input"), (Shape{1, 3, 224, 224}));
  EXPECT_EQ(copy[1].input_shapes.at("input"), (Shape{4, 3, 224, 224}));
  EXPECT_EQ(copy[1].partitions.size(), 1u);
}

TEST(PlanJsonTest, OnePlanIsWrittenAsAPlainPlanAndReadAsASetOfOne) {
  nlohmann::json json = plans_to_json({sample_plan()});
  EXPECT_EQ(json["format"], "collage-plan");
  EXPECT_EQ(plans_from_json(json).size(), 1u);
}

TEST(PlanJsonTest, AnErrorInsideAPlanSetNamesThePlan) {
  nlohmann::json json = plans_to_json(two_shape_plans());
  json["plans"][1]["partitions"][0].erase("backend");
  try {
    plans_from_json(json, "set.json");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, "set.json");
    EXPECT_EQ(e.where().field, "plans[1].partitions[0].backend");
  }
}

TEST(PlanJsonTest, APlanSetWithTwoPlansForOneShapeOrNoneIsRejected) {
  std::vector<Plan> plans = two_shape_plans();
  plans[1].input_shapes = plans[0].input_shapes;
  EXPECT_THROW(plans_from_json(plans_to_json(plans)), Error);
  nlohmann::json empty = plans_to_json(two_shape_plans());
  empty["plans"] = nlohmann::json::array();
  EXPECT_THROW(plans_from_json(empty), Error);
}

TEST(PlanJsonTest, LoadPlanRefusesAPlanSetWhereOnePlanIsExpected) {
  const TempFile file("collage_plan_set");
  save_plans(two_shape_plans(), file.path.string());
  EXPECT_EQ(load_plans(file.path.string()).size(), 2u);
  try {
    load_plan(file.path.string());
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("holds plans for 2 input shapes"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace collage
