#include "collage/partition/op_kind.h"

#include <gtest/gtest.h>

namespace collage {
namespace {

TEST(OpKindTest, TheFusedActivationsAreElementwise) {
  for (const char* op : {"Gelu", "Swish", "HardSwish", "HardSigmoid", "Sigmoid"}) {
    EXPECT_EQ(op_kind_of(op), OpKind::kElementwise) << op;
  }
}

TEST(OpKindTest, LayerNormalizationIsOpaque) {
  EXPECT_EQ(op_kind_of("LayerNormalization"), OpKind::kOpaque);
}

TEST(OpKindTest, AnUnknownOpIsOpaque) { EXPECT_EQ(op_kind_of("Frobnicate"), OpKind::kOpaque); }

}  // namespace
}  // namespace collage
