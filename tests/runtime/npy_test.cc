#include "collage/runtime/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "collage/ir/error.h"

namespace collage {
namespace {

using namespace std::string_literals;

// An .npy image with a hand-written header, the way numpy.save lays it out.
std::string npy_bytes(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  std::size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY"s;
  out.push_back(major);
  out.push_back(0);
  std::size_t length = header.size();
  for (std::size_t i = 0; i < prefix - 8; ++i) out.push_back(static_cast<char>(length >> (8 * i)));
  return out + header + data;
}

std::string float_bytes(const std::vector<float>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)};
}

TEST(NpyTest, ParsesAVersionOneFloatArray) {
  std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                float_bytes({1, 2, 3, 4, 5, 6}));
  Tensor t = parse_npy(bytes, "a.npy");
  EXPECT_EQ(t.type(), (TensorType{DType::kFloat32, {2, 3}}));
  EXPECT_EQ(t.data<float>()[5], 6.0f);
}

TEST(NpyTest, ParsesAVersionTwoHeader) {
  std::string bytes = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                                float_bytes({7, 8}), 2);
  Tensor t = parse_npy(bytes, "a.npy");
  EXPECT_EQ(t.shape(), (Shape{2}));
  EXPECT_EQ(t.data<float>()[1], 8.0f);
}

TEST(NpyTest, ParsesAScalar) {
  std::string bytes =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", float_bytes({2.5f}));
  Tensor t = parse_npy(bytes, "a.npy");
  EXPECT_EQ(t.rank(), 0);
  EXPECT_EQ(t.data<float>()[0], 2.5f);
}

TEST(NpyTest, ParsesBoolAndSingleByteTypes) {
  std::string bytes =
      npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", "\x01\x00\x01"s);
  Tensor t = parse_npy(bytes, "a.npy");
  EXPECT_EQ(t.dtype(), DType::kBool);
  EXPECT_EQ(t.int_at(0), 1);
  EXPECT_EQ(t.int_at(1), 0);
}

TEST(NpyTest, RejectsFortranOrder) {
  std::string bytes =
      npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", float_bytes({1, 2}));
  try {
    parse_npy(bytes, "f.npy");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, "f.npy");
    EXPECT_EQ(e.where().field, "fortran_order");
  }
}

TEST(NpyTest, RejectsBigEndianData) {
  std::string bytes =
      npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", float_bytes({1, 2}));
  EXPECT_THROW(parse_npy(bytes, "a.npy"), Error);
}

TEST(NpyTest, RejectsUnsupportedElementTypes) {
  std::string bytes =
      npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0'));
  EXPECT_THROW(parse_npy(bytes, "a.npy"), Error);
}

TEST(NpyTest, RejectsTruncatedData) {
  std::string bytes =
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", float_bytes({1, 2}));
  EXPECT_THROW(parse_npy(bytes, "a.npy"), Error);
}

TEST(NpyTest, RejectsAShapeWhoseSizeOverflows) {
  std::string bytes = npy_bytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", "");
  EXPECT_THROW(parse_npy(bytes, "a.npy"), Error);
}

TEST(NpyTest, RejectsGarbage) { EXPECT_THROW(parse_npy("this is not an array", "a.npy"), Error); }

TEST(NpyTest, SerializedHeaderIsAlignedTo64Bytes) {
  std::string bytes = serialize_npy(Tensor::from_vector<float>({1, 2, 3}, {3}));
  std::size_t header_length =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(bytes[10 + header_length - 1], '\n');
}

TEST(NpyTest, WriteThenReadRoundTripsEveryType) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "collage_npy_test";
  std::filesystem::create_directories(dir);
  std::vector<Tensor> tensors = {
      Tensor::from_vector<float>({1.5f, -2}, {2}),
      Tensor::from_vector<double>({1.25, 2, 3, 4}, {2, 2}),
      Tensor::from_vector<std::int64_t>({-7, 8}, {1, 2}),
      Tensor::from_vector<std::int32_t>({9}, {1}),
      Tensor::from_vector<std::int8_t>({-1, 2}, {2}),
      Tensor::from_vector<std::uint8_t>({255}, {}),
  };
  for (const Tensor& original : tensors) {
    std::string path = (dir / "t.npy").string();
    write_npy(path, original);
    Tensor back = read_npy(path);
    ASSERT_EQ(back.type(), original.type()) << original.type().to_string();
    for (std::int64_t i = 0; i < original.numel(); ++i) {
      EXPECT_EQ(back.number_at(i), original.number_at(i)) << original.type().to_string();
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(NpyTest, ReadingAMissingFileNamesIt) {
  try {
    read_npy("/nonexistent/input.npy");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where().file, "/nonexistent/input.npy");
  }
}

}  // namespace
}  // namespace collage
