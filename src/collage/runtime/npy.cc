#include "collage/runtime/npy.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

#include "collage/ir/error.h"
#include "collage/ir/file_io.h"

namespace collage {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy aligns the start of the data to 64 bytes (since 1.23), so memory
// mapped arrays are aligned for any vector width.
constexpr std::size_t kHeaderAlignment = 64;

Error npy_error(const std::string& origin, const std::string& field, const std::string& message) {
  return Error(message, {.file = origin, .field = field});
}

// The array-protocol type string without its byte-order character.
std::optional<DType> dtype_from_descr(std::string_view code) {
  if (code == "f2") return DType::kFloat16;
  if (code == "f4") return DType::kFloat32;
  if (code == "f8") return DType::kFloat64;
  if (code == "i1") return DType::kInt8;
  if (code == "i2") return DType::kInt16;
  if (code == "i4") return DType::kInt32;
  if (code == "i8") return DType::kInt64;
  if (code == "u1") return DType::kUInt8;
  if (code == "b1") return DType::kBool;
  return std::nullopt;
}

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return "<f2";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
      return "|u1";
    case DType::kBool:
      return "|b1";
  }
  return "?";
}

// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// This reads exactly that subset: string keys, and string, bool or
// int-tuple values.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;
  };

  Header parse() {
    Header header;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = parse_string();
      expect(':');
      skip_space();
      if (key == "descr") {
        header.descr = parse_string();
      } else if (key == "fortran_order") {
        header.fortran_order = parse_bool();
      } else if (key == "shape") {
        header.shape = parse_shape();
      } else {
        throw fail("unexpected key " + quote_untrusted(key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') throw fail("expected ',' or '}'");
    }
    return header;
  }

 private:
  Error fail(const std::string& what) const {
    // The header is the file's text: quoted and cut, never echoed whole.
    return npy_error(origin_, "header",
                     fmt::format("{} at offset {} of {}", what, pos_, quote_untrusted(text_, 80)));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) throw fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string parse_string() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') throw fail("expected a quoted string");
    std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) throw fail("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  bool parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    throw fail("expected True or False");
  }
  Shape parse_shape() {
    expect('(');
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) throw fail("expected a dimension");
      std::int64_t dim = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (dim > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
          throw fail("dimension too large");
        }
        dim = dim * 10 + (text_[pos_++] - '0');
      }
      // Files written by Python 2 spell dimensions as longs: (3L, 4L).
      if (peek() == 'L') ++pos_;
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') throw fail("expected ',' or ')'");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& origin_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::string_view bytes, std::size_t offset, std::size_t width) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

std::string format_shape_tuple(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

Tensor parse_npy(std::string_view bytes, const std::string& origin) {
  if (bytes.size() < 10 || bytes.substr(0, kMagic.size()) != kMagic) {
    throw npy_error(origin, "", "not a NumPy .npy file (bad magic)");
  }
  auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t length_width = 0;
  if (major == 1) {
    length_width = 2;
  } else if (major == 2 || major == 3) {
    length_width = 4;
  } else {
    throw npy_error(origin, "version", fmt::format("unsupported .npy format version {}", major));
  }
  std::size_t header_start = 8 + length_width;
  if (bytes.size() < header_start) throw npy_error(origin, "header", "file is truncated");
  std::size_t header_length = read_le(bytes, 8, length_width);
  if (bytes.size() < header_start + header_length) {
    throw npy_error(origin, "header", "file is truncated");
  }
  HeaderParser::Header header =
      HeaderParser(bytes.substr(header_start, header_length), origin).parse();
  if (!header.descr || !header.fortran_order || !header.shape) {
    throw npy_error(origin, "header", "needs 'descr', 'fortran_order' and 'shape'");
  }
  const std::string& descr = *header.descr;
  std::optional<DType> dtype;
  if (descr.size() == 3) dtype = dtype_from_descr(std::string_view(descr).substr(1));
  if (!dtype) {
    throw npy_error(origin, "descr",
                    fmt::format("unsupported element type {} (supported: f2 f4 f8 i1 i2 i4 i8 "
                                "u1 b1)",
                                quote_untrusted(descr)));
  }
  char order = descr[0];
  bool single_byte = dtype_size(*dtype) == 1;
  if (order == '>' && !single_byte) {
    throw npy_error(origin, "descr",
                    fmt::format("big-endian data ({}) is not supported", quote_untrusted(descr)));
  }
  if (order != '<' && order != '|' && order != '=' && order != '>') {
    throw npy_error(origin, "descr", fmt::format("bad byte order in {}", quote_untrusted(descr)));
  }
  if (*header.fortran_order) {
    throw npy_error(origin, "fortran_order",
                    "Fortran-order arrays are not supported; save a C-order array "
                    "(numpy.ascontiguousarray)");
  }

  // The dimensions come from the file: check the byte count before anything
  // multiplies them.
  TensorType type{*dtype, *header.shape};
  check_byte_size(type, {.file = origin, .field = "shape"});
  const std::size_t expected = type.byte_size();
  std::size_t data_start = header_start + header_length;
  std::size_t available = bytes.size() - data_start;
  if (available != expected) {
    throw npy_error(
        origin, "data",
        fmt::format("holds {} bytes, but {} needs {}", available, type.to_string(), expected));
  }
  Tensor tensor = Tensor::allocate(type);
  if (expected > 0) std::memcpy(tensor.raw(), bytes.data() + data_start, expected);
  if (*dtype == DType::kBool) {
    const auto* flags = static_cast<const std::uint8_t*>(tensor.raw());
    for (std::size_t i = 0; i < expected; ++i) {
      if (flags[i] > 1)
        throw npy_error(origin, "data", "bool array holds a byte other than 0 or 1");
    }
  }
  return tensor;
}

Tensor read_npy(const std::string& path) {
  // Only a regular file, read up to the size it has: /dev/zero or a FIFO is
  // refused instead of read forever.
  return parse_npy(read_regular_file(path), path);
}

std::string serialize_npy(const Tensor& tensor) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 descr_of(tensor.dtype()), format_shape_tuple(tensor.shape()));
  // Version 1.0 stores the header length in 2 bytes; longer headers (very
  // high ranks) need 2.0.
  std::size_t prefix = 10;
  int major = 1;
  auto padded_length = [&] {
    std::size_t unpadded = prefix + dict.size() + 1;  // + the closing newline
    return (unpadded + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment - prefix;
  };
  if (padded_length() > std::numeric_limits<std::uint16_t>::max()) {
    prefix = 12;
    major = 2;
  }
  std::size_t header_length = padded_length();
  dict.append(header_length - dict.size() - 1, ' ');
  dict.push_back('\n');

  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (std::size_t i = 0; i < prefix - 8; ++i) {
    out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xff));
  }
  out += dict;
  out.append(static_cast<const char*>(tensor.raw()), tensor.byte_size());
  return out;
}

void write_npy(const std::string& path, const Tensor& tensor) {
  write_file_atomically(path, serialize_npy(tensor));
}

}  // namespace collage
