#include "collage/ir/error.h"

#include <cstdio>

namespace collage {
namespace {

// How much of a file name an Error shows: as much as quote_untrusted() keeps.
constexpr std::size_t kFileNameBytes = 160;

void append_escaped(std::string& out, char c, bool in_quotes) {
  const auto byte = static_cast<unsigned char>(c);
  if (c == '\n') {
    out += "\\n";
  } else if (c == '\t') {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else if (byte < 0x20 || byte == 0x7f) {
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    out += escaped;
  } else if (in_quotes && (c == '\'' || c == '\\')) {
    out += '\\';
    out += c;
  } else {
    out += c;
  }
}

// The length of the longest prefix of `text` of at most `max_bytes` bytes
// that ends at a UTF-8 character boundary.
std::size_t utf8_prefix_length(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return cut;
}

// The node name comes from the model file: quote_untrusted() escapes and cuts it. The
// file and field are ours or the user's; their control characters are
// escaped when the whole message is. The file is cut like untrusted text
// (unquoted): a caller may pass any string as a path, even a whole document.
std::string format_error(const std::string& message, const Error::Where& where) {
  std::string text;
  if (!where.file.empty()) {
    const std::size_t cut = utf8_prefix_length(where.file, kFileNameBytes);
    text += where.file.substr(0, cut) + (cut < where.file.size() ? "...: " : ": ");
  }
  if (!where.node.empty()) text += "node " + quote_untrusted(where.node) + ": ";
  if (!where.field.empty()) text += where.field + ": ";
  return escape_control(text + message);
}

}  // namespace

std::string quote_untrusted(std::string_view text, std::size_t max_bytes) {
  const std::size_t cut = utf8_prefix_length(text, max_bytes);
  std::string out = "'";
  for (std::size_t i = 0; i < cut; ++i) append_escaped(out, text[i], /*in_quotes=*/true);
  out += "'";
  if (cut < text.size()) out += "...";
  return out;
}

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) append_escaped(out, c, /*in_quotes=*/false);
  return out;
}

Error::Error(const std::string& message, Where where)
    : std::runtime_error(format_error(message, where)),
      message_(message),
      where_(std::move(where)) {}

Error Error::in_file(const std::string& file) const {
  if (!where_.file.empty()) return *this;
  Where where = where_;
  where.file = file;
  return Error(message_, where);
}

}  // namespace collage
