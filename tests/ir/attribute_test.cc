#include "collage/ir/attribute.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collage/ir/error.h"

namespace collage {
namespace {

TEST(AttributesTest, TypedGettersReturnWhatWasSet) {
  Attributes attributes;
  attributes.set("axis", std::int64_t{-1});
  attributes.set("alpha", 0.25f);
  attributes.set("mode", std::string("linear"));
  attributes.set("pads", std::vector<std::int64_t>{1, 2});
  attributes.set("scales", std::vector<float>{0.5f, 2.0f});
  attributes.set("value", Tensor::from_vector<float>({3}, {1}));
  EXPECT_EQ(attributes.get_int("axis"), -1);
  EXPECT_EQ(attributes.get_float("alpha"), 0.25f);
  EXPECT_EQ(attributes.get_string("mode"), "linear");
  EXPECT_EQ(attributes.get_ints("pads"), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(attributes.get_floats("scales"), (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(attributes.get_tensor("value").data<float>()[0], 3.0f);
}

TEST(AttributesTest, AMissingAttributeReadsAsTheFallback) {
  Attributes attributes;
  EXPECT_EQ(attributes.get_int("group", 1), 1);
  EXPECT_EQ(attributes.get_float("epsilon", 1e-5f), 1e-5f);
  EXPECT_EQ(attributes.get_string("auto_pad", "NOTSET"), "NOTSET");
  EXPECT_EQ(attributes.get_ints("strides", {1, 1}), (std::vector<std::int64_t>{1, 1}));
}

TEST(AttributesTest, AMissingAttributeWithoutAFallbackIsAnErrorNamingIt) {
  Attributes attributes;
  try {
    attributes.get_ints("kernel_shape");
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().field, "kernel_shape");
    EXPECT_EQ(error.message(), "missing attribute");
  }
}

TEST(AttributesTest, AnAttributeOfAnotherKindIsAnErrorNamingItAndTheKindAskedFor) {
  Attributes attributes;
  attributes.set("axis", 1.0f);
  try {
    attributes.get_int("axis");
    FAIL() << "expected an Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.where().field, "axis");
    EXPECT_EQ(error.message(), "attribute is not of kind int");
  }
}

TEST(AttributesTest, AFallbackDoesNotHideAnAttributeOfAnotherKind) {
  Attributes attributes;
  attributes.set("group", std::string("2"));
  EXPECT_THROW(attributes.get_int("group", 1), Error);
}

TEST(AttributesTest, SetReplacesAValueAndEraseRemovesIt) {
  Attributes attributes;
  EXPECT_TRUE(attributes.empty());
  attributes.set("axis", std::int64_t{0});
  attributes.set("axis", std::int64_t{2});
  EXPECT_EQ(attributes.get_int("axis"), 2);
  EXPECT_EQ(attributes.all().size(), 1u);
  attributes.erase("axis");
  EXPECT_FALSE(attributes.has("axis"));
  EXPECT_TRUE(attributes.empty());
}

TEST(AttributesTest, TextListsTheAttributesSortedByName) {
  Attributes attributes;
  attributes.set("strides", std::vector<std::int64_t>{2, 2});
  attributes.set("mode", std::string("nearest"));
  attributes.set("alpha", 0.5f);
  attributes.set("value", Tensor::zeros(TensorType{DType::kInt64, {3}}));
  attributes.set("names", std::vector<std::string>{"a", "b"});
  EXPECT_EQ(to_string(attributes),
            "alpha=0.5, mode=\"nearest\", names=[\"a\",\"b\"], strides=[2,2], value=tensor i64[3]");
}

}  // namespace
}  // namespace collage
