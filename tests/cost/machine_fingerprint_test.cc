#include "collage/cost/machine_fingerprint.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace collage {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::istringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  return parts;
}

TEST(MachineFingerprintTest, TextJoinsModelFlagsAndThreadCount) {
  MachineFingerprint fingerprint{"AMD EPYC 7B13", "avx,avx2,fma", 2};
  EXPECT_EQ(fingerprint.to_string(), "AMD EPYC 7B13|avx,avx2,fma|t2");
}

TEST(MachineFingerprintTest, UnknownFieldsStayEmptyInTheText) {
  EXPECT_EQ(MachineFingerprint{}.to_string(), "||t1");
}

TEST(MachineFingerprintTest, TheCurrentMachineIsTheSameEveryTime) {
  EXPECT_EQ(MachineFingerprint::current(4).to_string(), MachineFingerprint::current(4).to_string());
}

TEST(MachineFingerprintTest, TheThreadCountIsPartOfTheFingerprint) {
  MachineFingerprint one = MachineFingerprint::current(1);
  MachineFingerprint eight = MachineFingerprint::current(8);
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(eight.threads, 8);
  EXPECT_EQ(one.cpu_model, eight.cpu_model);
  EXPECT_NE(one.to_string(), eight.to_string());
}

TEST(MachineFingerprintTest, IsaFlagsAreSortedDistinctAndOnlyTheSimdRelevantOnes) {
  const std::string flags = MachineFingerprint::current(1).isa_flags;
  const std::vector<std::string> parts = split(flags, ',');
  for (std::size_t i = 1; i < parts.size(); ++i) EXPECT_LT(parts[i - 1], parts[i]) << flags;
  for (const std::string& flag : parts) {
    const bool simd = flag.rfind("sse", 0) == 0 || flag.rfind("ssse", 0) == 0 ||
                      flag.rfind("avx", 0) == 0 || flag.rfind("fma", 0) == 0 ||
                      flag.rfind("f16c", 0) == 0 || flag.rfind("amx", 0) == 0 ||
                      flag.rfind("bmi", 0) == 0;
    EXPECT_TRUE(simd) << flag;
  }
}

}  // namespace
}  // namespace collage
