#include "collage/ir/error.h"

namespace collage {
namespace {

std::string format_error(const std::string& message, const Error::Where& where) {
  std::string text;
  if (!where.file.empty()) text += where.file + ": ";
  if (!where.node.empty()) text += "node '" + where.node + "': ";
  if (!where.field.empty()) text += where.field + ": ";
  return text + message;
}

}  // namespace

Error::Error(const std::string& message, Where where)
    : std::runtime_error(format_error(message, where)), message_(message), where_(std::move(where)) {}

Error Error::in_file(const std::string& file) const {
  if (!where_.file.empty()) return *this;
  Where where = where_;
  where.file = file;
  return Error(message_, where);
}

}  // namespace collage
