// Placement constraints: the flags' syntax, which nodes a selector names,
// and the search and greedy covers honouring pins, avoids and pattern rules.
#include "collage/search/placement.h"

#include <gtest/gtest.h>

#include "collage/ir/error.h"
#include "collage/search/strategy.h"
#include "search/search_fixture.h"

namespace collage {
namespace {

using testing::GraphBuilder;
using testing::SearchFixture;
using testing::SmallRegionsBackend;

// x -> a Relu -> b Abs -> c Neg (output)
SearchFixture chain_with(const Placement& placement) {
  SearchFixture fixture(testing::chain3());
  fixture.native_singles().graph_backend("byoc", {"Relu", "Abs", "Neg"});
  fixture.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  SearchFixture constrained(testing::chain3());
  for (const PartitionSpecPtr& spec : fixture.specs()) {
    PartitionSpecPtr c = placement.constrain(spec);
    constrained.add_spec(c->name, c->rule, c->config, c->merge_config);
  }
  constrained.costs().set_default_op_cost("native", 10.0).set_default_op_cost("byoc", 1.0);
  return constrained;
}

Node node(const std::string& name, const std::string& op, const std::string& domain = "") {
  Node n;
  n.name = name;
  n.op_type = op;
  n.domain = domain;
  return n;
}

TEST(GlobTest, StarsAndQuestionMarks) {
  EXPECT_TRUE(glob_match("Conv_*", "Conv_12"));
  EXPECT_TRUE(glob_match("Conv_*", "Conv_"));
  EXPECT_FALSE(glob_match("Conv_*", "conv_12"));
  EXPECT_TRUE(glob_match("*relu*", "layer1.0/relu_1"));
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_FALSE(glob_match("a?c", "ac"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
}

TEST(PlacementTest, ParsesPinsAndAvoidsAsTheFlagsWriteThem) {
  Placement placement;
  placement.pin("Conv_12=onednn");
  placement.pin("op:Softmax=native");
  placement.avoid("xnnpack:op:Sigmoid");
  placement.avoid("xnnpack:head_*");
  ASSERT_EQ(placement.rules().size(), 4u);
  EXPECT_EQ(placement.rules()[0].backend, "onednn");
  EXPECT_FALSE(placement.rules()[0].nodes.by_op);
  EXPECT_TRUE(placement.rules()[1].nodes.by_op);
  EXPECT_EQ(placement.rules()[2].backend, "xnnpack");
  EXPECT_EQ(placement.rules()[2].nodes.glob, "Sigmoid");
  EXPECT_EQ(placement.describe(),
            (std::vector<std::string>{"place Conv_12=onednn", "place op:Softmax=native",
                                      "avoid xnnpack:op:Sigmoid", "avoid xnnpack:head_*"}));
}

TEST(PlacementTest, MalformedFlagsAreErrorsNamingTheFlag) {
  Placement placement;
  for (const char* text : {"Conv_12", "Conv_12=", "=onednn", "op:=onednn"}) {
    try {
      placement.pin(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.where().field.find("--place"), std::string::npos) << e.what();
    }
  }
  for (const char* text : {"xnnpack", "xnnpack:", ":op:Relu", "xnn pack:op:Relu"}) {
    try {
      placement.avoid(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(e.where().field.find("--avoid"), std::string::npos) << e.what();
    }
  }
}

TEST(PlacementTest, PinsAndAvoidsDecideWhichBackendsMayRunANode) {
  Placement placement;
  placement.pin("op:Softmax=native");
  placement.avoid("xnnpack:conv*");
  EXPECT_TRUE(placement.admits(node("s", "Softmax"), "native"));
  EXPECT_FALSE(placement.admits(node("s", "Softmax"), "onednn"));
  EXPECT_FALSE(placement.admits(node("conv1", "Conv"), "xnnpack"));
  EXPECT_TRUE(placement.admits(node("conv1", "Conv"), "onednn"));
  EXPECT_TRUE(placement.admits(node("relu", "Relu"), "xnnpack"));
  EXPECT_EQ(placement.pin_of(node("relu", "Relu")), nullptr);
  ASSERT_NE(placement.pin_of(node("s", "Softmax")), nullptr);
  // Ops of other domains answer to their qualified name too.
  Placement qualified;
  qualified.pin("op:com.microsoft.QLinear*=native");
  EXPECT_NE(qualified.pin_of(node("q", "QLinearAdd", "com.microsoft")), nullptr);
}

TEST(PlacementTest, TheSearchHonoursAPinAgainstTheCheaperBackend) {
  Placement placement;
  placement.pin("b=native");
  SearchFixture f = chain_with(placement);
  // byoc is ten times cheaper, yet b stays on native.
  EXPECT_EQ(f.describe(f.search()), (std::vector<std::string>{"byoc:a", "native:b", "byoc:c"}));
}

TEST(PlacementTest, TheSearchHonoursAnAvoid) {
  Placement placement;
  placement.avoid("byoc:op:Neg");
  SearchFixture f = chain_with(placement);
  EXPECT_EQ(f.describe(f.search()), (std::vector<std::string>{"byoc:a,b", "native:c"}));
}

TEST(PlacementTest, AGreedyBaselinePlacesPinnedNodesOnTheirBackendFirst) {
  SearchFixture fixture(testing::chain3());
  fixture.native_singles().graph_backend("byoc", {"Relu", "Abs", "Neg"});
  Placement placement;
  placement.pin("c=byoc");
  std::vector<PartitionSpecPtr> specs;
  for (const PartitionSpecPtr& spec : fixture.specs()) specs.push_back(placement.constrain(spec));
  // The native strategy: no backend of its own but native, so byoc takes
  // only its pinned node.
  std::vector<PartitionSpecPtr> priority = placement.baseline_priority(specs, {}, "native");
  ASSERT_EQ(priority.size(), 1u);
  EXPECT_EQ(fixture.describe(greedy_cover(fixture.dfg(), priority, specs.front())),
            (std::vector<std::string>{"native:a", "native:b", "byoc:c"}));
  // A baseline that names byoc itself needs no extra spec.
  EXPECT_EQ(placement.baseline_priority(specs, {specs[1]}, "native"),
            (std::vector<PartitionSpecPtr>{specs[1]}));
}

TEST(PlacementTest, CheckRefusesWhatCannotBeHonouredNamingTheNode) {
  Graph graph = testing::chain3();
  SmallRegionsBackend small(8, {"Neg"});
  struct Native : SmallRegionsBackend {
    Native() : SmallRegionsBackend(8) {}
    std::string name() const override { return "native"; }
  } native;
  const std::vector<const Backend*> backends = {&native, &small};
  const std::vector<std::string> known = {"native", "small", "other"};
  auto error_of = [&](const Placement& placement) -> std::string {
    try {
      placement.check(graph, backends, known);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  Placement fine;
  fine.pin("a=small");
  fine.avoid("small:op:Abs");
  EXPECT_EQ(error_of(fine), "");

  Placement unsupported;
  unsupported.pin("c=small");
  EXPECT_NE(error_of(unsupported).find("does not run this Neg"), std::string::npos)
      << error_of(unsupported);
  EXPECT_NE(error_of(unsupported).find("'c'"), std::string::npos) << error_of(unsupported);

  Placement nowhere;
  nowhere.pin("conv_*=small");
  EXPECT_NE(error_of(nowhere).find("matches no node"), std::string::npos);

  Placement not_enabled;
  not_enabled.pin("a=other");
  EXPECT_NE(error_of(not_enabled).find("not among the backends of this run"), std::string::npos);

  Placement unknown;
  unknown.avoid("nosuch:op:Relu");
  EXPECT_NE(error_of(unknown).find("has no backend 'nosuch'"), std::string::npos)
      << error_of(unknown);

  Placement disagree;
  disagree.pin("a=small");
  disagree.pin("op:Relu=native");
  EXPECT_NE(error_of(disagree).find("pinned to small"), std::string::npos) << error_of(disagree);

  Placement stranded;
  stranded.avoid("native:c");
  EXPECT_NE(error_of(stranded).find("no backend of this run may run this Neg"), std::string::npos)
      << error_of(stranded);
}

TEST(PlacementTest, PatternRulesOfTheUsersOwnBecomeCandidates) {
  Placement placement;
  placement.add_patterns_json(R"({"patterns": [
      {"name": "relu_abs", "backend": "lib",
       "pattern": {"op": "Abs", "inputs": [{"op": "Relu", "inputs": ["any"]}]}}]})",
                              "rules.json");
  ASSERT_EQ(placement.patterns().size(), 1u);
  SearchFixture fixture(testing::chain3());
  fixture.native_singles().add_spec("lib", std::make_shared<OpPredicateRule>(testing::any_op), {});
  PartitionSpecPtr lib = placement.constrain(fixture.spec("lib"));
  std::vector<std::string> names;
  for (const CandidatePartition& c : gather_candidates(fixture.dfg(), lib)) {
    names.push_back(c.rule_name);
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "relu_abs"), names.end());
  // Native gets none of lib's rules.
  EXPECT_EQ(placement.constrain(fixture.spec("native")), fixture.spec("native"));
}

TEST(PlacementTest, PatternPredicatesTestAttributesAndShapes) {
  GraphBuilder b;
  ValueId x = b.input("x");  // f32[1,8]
  ValueId e = b.op("Elu", {x}, "e");
  b.graph().node(0).attributes.set("alpha", 0.5f);
  b.output(e);
  Graph graph = std::move(b.graph());
  auto matches = [&](const std::string& where) {
    Placement placement;
    placement.add_patterns_json(
        R"({"patterns": [{"name": "p", "backend": "lib", "pattern": {"op": "Elu", "where": )" +
            where + "}}]}",
        "rules.json");
    return collage::match(placement.patterns()[0].pattern, graph, 0).has_value();
  };
  EXPECT_TRUE(matches(R"({"attributes": {"alpha": 0.5}})"));
  EXPECT_FALSE(matches(R"({"attributes": {"alpha": 1.0}})"));
  EXPECT_FALSE(matches(R"({"attributes": {"beta": 1}})"));
  EXPECT_TRUE(matches(R"({"rank": 2, "dtype": "f32", "max_elements": 8})"));
  EXPECT_FALSE(matches(R"({"max_elements": 7})"));
  EXPECT_FALSE(matches(R"({"dtype": "i8"})"));
}

TEST(PlacementTest, MalformedPatternFilesAreErrorsNamingTheFileAndRule) {
  auto error_of = [](const std::string& json) -> std::string {
    Placement placement;
    try {
      placement.add_patterns_json(json, "rules.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("{").find("rules.json"), std::string::npos);
  EXPECT_NE(error_of(R"({"rules": []})").find("\"patterns\""), std::string::npos);
  EXPECT_NE(error_of(R"({"patterns": [{"name": "p", "backend": "lib", "pattern": "some"}]})")
                .find("rule 'p'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"patterns": [{"name": "p", "backend": "lib",
                                      "pattern": {"op": "Relu", "where": {"size": 1}}}]})")
                .find("unknown predicate key 'size'"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"patterns": [{"backend": "lib", "pattern": {"op": "Relu"}}]})").find("\"name\""),
      std::string::npos);
  EXPECT_NE(error_of(R"({"patterns": [{"name": "p", "backend": "lib", "pattern": {"op": "Relu"}},
                                     {"name": "p", "backend": "lib", "pattern": {"op": "Abs"}}]})")
                .find("given twice"),
            std::string::npos);
}

}  // namespace
}  // namespace collage
